// Reading params structs from callers, whatever header they were built against.
#pragma once

#include <cstring>

#include "common/error.h"

namespace vkllm::api {

// Fields past the caller's struct_size keep the defaults `init` gives them.
template <typename T>
T read_params(const T *given, void (*init)(T *), const char *fn) {
    T p;
    init(&p);
    if (given) {
        if (given->struct_size < sizeof(size_t) || given->struct_size > sizeof p)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: struct_size %zu; call the *_init function first",
                 fn, given->struct_size);
        std::memcpy(&p, given, given->struct_size);
        p.struct_size = sizeof p;
    }
    return p;
}

}  // namespace vkllm::api
