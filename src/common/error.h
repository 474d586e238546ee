// The one exception type of the library. Layers below src/api throw it; src/api catches it
// at the C boundary and turns it into a status and the thread-local message.
#pragma once

#include <stdexcept>
#include <string>

#include "vkllm.h"

namespace vkllm {

class Error : public std::runtime_error {
  public:
    Error(vkllm_status status, const std::string &message)
        : std::runtime_error(message), status_(status) {}
    vkllm_status status() const { return status_; }

  private:
    vkllm_status status_;
};

// printf-style formatting into a std::string.
std::string sformat(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

[[noreturn]] void fail(vkllm_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace vkllm
