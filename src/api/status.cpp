// Version, status strings and the thread-local last error.
#include <string>

#include "api/guard.h"

namespace vkllm::api {

static thread_local std::string t_last_error;

void set_error(vkllm_status status, const std::string &message) {
    try {
        t_last_error = message.empty() ? vkllm_status_string(status) : message;
    } catch (...) {
        t_last_error.clear();  // out of memory while reporting: the status still says it
    }
}

void clear_error() {
    t_last_error.clear();
}

static const char *last_error() {
    return t_last_error.c_str();
}

}  // namespace vkllm::api

#define STR2(x) #x
#define STR(x) STR2(x)

extern "C" {

uint32_t vkllm_version(void) {
    return VKLLM_VERSION_NUMBER;
}

const char *vkllm_version_string(void) {
    return STR(VKLLM_VERSION_MAJOR) "." STR(VKLLM_VERSION_MINOR) "." STR(VKLLM_VERSION_PATCH);
}

const char *vkllm_status_string(vkllm_status status) {
    switch (status) {
        case VKLLM_OK:
            return "ok";
        case VKLLM_ERR_INVALID_ARGUMENT:
            return "invalid argument";
        case VKLLM_ERR_NO_DEVICE:
            return "no usable Vulkan device";
        case VKLLM_ERR_OUT_OF_HOST_MEMORY:
            return "out of host memory";
        case VKLLM_ERR_OUT_OF_DEVICE_MEMORY:
            return "out of device memory";
        case VKLLM_ERR_VULKAN:
            return "Vulkan error";
        case VKLLM_ERR_DEVICE_LOST:
            return "device lost";
        case VKLLM_ERR_IO:
            return "I/O error";
        case VKLLM_ERR_FORMAT:
            return "malformed file";
        case VKLLM_ERR_UNSUPPORTED:
            return "unsupported";
        case VKLLM_ERR_BUFFER_TOO_SMALL:
            return "buffer too small";
        case VKLLM_ERR_CONTEXT_FULL:
            return "context full";
        case VKLLM_ERR_CANCELLED:
            return "cancelled";
        case VKLLM_ERR_INTERNAL:
            return "internal error";
        case VKLLM_ERR_NOT_FOUND:
            return "not found";
        default:
            return "unknown status";
    }
}

const char *vkllm_last_error(void) {
    return vkllm::api::last_error();
}

}  // extern "C"
