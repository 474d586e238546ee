// Where the library's diagnostics go: the caller's callback, or stderr.
#pragma once

#include <string>

#include "vkllm.h"

namespace vkllm {

struct Logger {
    vkllm_log_fn fn = nullptr;
    void *user_data = nullptr;

    void operator()(vkllm_log_level level, const std::string &message) const;
};

}  // namespace vkllm
