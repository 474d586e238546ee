/* Whether a test asks for VK_LAYER_KHRONOS_validation inside its own process (C and C++).
 * Under Wine (scripts/test-windows) the application sees no layers; the host's layer runs
 * beneath winevulkan instead (VK_INSTANCE_LAYERS), and its messages fail the test through
 * ctest's FAIL_REGULAR_EXPRESSION (tests/windows.cmake sets both). */
#ifndef VKLLM_TESTS_VALIDATION_H
#define VKLLM_TESTS_VALIDATION_H

#include <stdlib.h>

static inline int vkllm_test_validation_in_process(void) {
    const char *host = getenv("VKLLM_TEST_HOST_VALIDATION");
    return !(host && *host);
}

#endif
