#include "common/error.h"

#include <cstdarg>
#include <cstdio>

namespace vkllm {

static std::string vformat(const char *fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    if (n <= 0) return std::string();
    std::string s(static_cast<size_t>(n), '\0');
    std::vsnprintf(&s[0], s.size() + 1, fmt, args);
    return s;
}

std::string sformat(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    return s;
}

void fail(vkllm_status status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    throw Error(status, s);
}

}  // namespace vkllm
