// The C ABI boundary: every exported function runs its body through guard(), which clears
// or sets the thread-local error message and turns any exception into a status.
#pragma once

#include <new>
#include <string>

#include "common/error.h"

namespace vkllm::api {

void set_error(vkllm_status status, const std::string &message);
void clear_error();

template <typename F>
vkllm_status guard(F &&body) noexcept {
    try {
        clear_error();
        body();
        return VKLLM_OK;
    } catch (const Error &e) {
        set_error(e.status(), e.what());
        return e.status();
    } catch (const std::bad_alloc &) {
        set_error(VKLLM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        return VKLLM_ERR_OUT_OF_HOST_MEMORY;
    } catch (const std::exception &e) {
        set_error(VKLLM_ERR_INTERNAL, std::string("internal error: ") + e.what());
        return VKLLM_ERR_INTERNAL;
    } catch (...) {
        set_error(VKLLM_ERR_INTERNAL, "internal error: unknown exception");
        return VKLLM_ERR_INTERNAL;
    }
}

// Throws VKLLM_ERR_INVALID_ARGUMENT naming the argument when p is NULL.
inline void require_arg(const void *p, const char *function, const char *name) {
    if (!p) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", function, name);
}

// Output structs carry the caller's struct_size; it must at least cover struct_size itself.
template <typename T>
void require_struct(const T *p, const char *function, const char *name) {
    require_arg(p, function, name);
    if (p->struct_size < sizeof(size_t))
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s->struct_size is %zu; set it to sizeof(%s)",
             function, name, p->struct_size, name);
}

}  // namespace vkllm::api
