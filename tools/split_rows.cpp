#include "split_rows.h"

#include <algorithm>
#include <exception>
#include <thread>

namespace vkllm_tool {

void split_rows(uint64_t rows, uint64_t cols,
                const std::function<void(uint64_t first, uint64_t last)> &work) {
    unsigned threads = std::min(2u, std::max(1u, std::thread::hardware_concurrency()));
    if (threads < 2 || rows < 2 || rows * cols < 65536) {
        work(0, rows);
        return;
    }
    std::exception_ptr error;
    std::thread helper([&]() {
        try {
            work(rows / 2, rows);
        } catch (...) {
            error = std::current_exception();
        }
    });
    try {
        work(0, rows / 2);
    } catch (...) {
        helper.join();
        throw;
    }
    helper.join();
    if (error) std::rethrow_exception(error);
}

}  // namespace vkllm_tool
