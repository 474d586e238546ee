/* A stand-in for a libvkllm of another major version, for the test that examples/plugin_host
 * refuses it: it exports only the version queries. */
#include "vkllm.h"

VKLLM_API uint32_t vkllm_version(void) {
    return (VKLLM_VERSION_MAJOR + 1) * 10000u;
}

VKLLM_API const char *vkllm_version_string(void) {
    return "next-major";
}
