// Writing results into caller memory, by the header's rules: structs only as far as their
// struct_size reaches, strings with a NUL and the needed length when the buffer is short.
#pragma once

#include <algorithm>
#include <cstring>
#include <string_view>

#include "api/guard.h"

namespace vkllm::api {

template <typename T>
void copy_struct(const T &from, T *to) {
    size_t keep = to->struct_size;
    std::memcpy(to, &from, std::min(keep, sizeof(T)));
    to->struct_size = keep;
}

inline void copy_text(std::string_view text, char *buf, size_t capacity, size_t *length,
                      const char *fn) {
    require_arg(length, fn, "length");
    if (capacity > 0) require_arg(buf, fn, "buf");
    *length = text.size();
    if (capacity < text.size() + 1)
        fail(VKLLM_ERR_BUFFER_TOO_SMALL, "%s: %zu bytes needed, the buffer has %zu", fn,
             text.size() + 1, capacity);
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
}

}  // namespace vkllm::api
