#include "common/log.h"

#include <cstdio>

namespace vkllm {

void Logger::operator()(vkllm_log_level level, const std::string &message) const {
    if (fn) {
        fn(user_data, level, message.c_str());
        return;
    }
    if (level < VKLLM_LOG_WARNING) return;
    std::fprintf(stderr, "vkllm: %s: %s\n", level == VKLLM_LOG_ERROR ? "error" : "warning",
                 message.c_str());
}

}  // namespace vkllm
