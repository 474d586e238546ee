// Row-wise work (conversion of a tensor's rows) split between at most two threads: the rows
// are independent, and more threads would not pay on the small machines the tool runs on.
#pragma once

#include <cstdint>
#include <functional>

namespace vkllm_tool {

// Calls work(first, last) over [0, rows), on this thread alone when the tensor (rows x cols
// elements) is too small to be worth a second one. Rethrows what a call throws.
void split_rows(uint64_t rows, uint64_t cols,
                const std::function<void(uint64_t first, uint64_t last)> &work);

}  // namespace vkllm_tool
