// The one exception type of the library. Layers below src/api throw it; src/api catches it
// at the C boundary and turns it into a status and the thread-local message.
#pragma once

#include <stdexcept>
#include <string>

#include "vkllm.h"

// Checks printf-style arguments where the compiler can. mingw-w64's "printf" is Microsoft's,
// which knows no %zu; the library's formatting is C99's (libstdc++ selects mingw's own stdio).
#if defined(__MINGW32__)
#define VKLLM_PRINTF_LIKE(fmt, args) __attribute__((format(gnu_printf, fmt, args)))
#elif defined(__GNUC__) || defined(__clang__)
#define VKLLM_PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define VKLLM_PRINTF_LIKE(fmt, args)
#endif

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
std::string sformat(const char *fmt, ...) VKLLM_PRINTF_LIKE(1, 2);

[[noreturn]] void fail(vkllm_status status, const char *fmt, ...) VKLLM_PRINTF_LIKE(2, 3);

}  // namespace vkllm
