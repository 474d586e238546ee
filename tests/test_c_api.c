/* The header compiled as strict C99 (-std=c99 -pedantic -Wall -Wextra -Werror) and the API
 * called from C, as a C application or a binding generator sees it. */
#include <stdio.h>
#include <string.h>

#include "vkllm.h"

static int failures = 0;
#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
                    vkllm_last_error());                                                 \
            ++failures;                                                                  \
        }                                                                                \
    } while (0)

int main(void) {
    vkllm_runtime_params params;
    vkllm_runtime *rt = NULL;
    vkllm_device_info info;
    vkllm_self_check_result result;
    vkllm_runtime_stats stats;
    size_t n = 0;

    CHECK(vkllm_version() == VKLLM_VERSION_NUMBER);
    CHECK(strcmp(vkllm_status_string(VKLLM_ERR_NO_DEVICE), "no usable Vulkan device") == 0);
    CHECK(vkllm_runtime_create(NULL, NULL) == VKLLM_ERR_INVALID_ARGUMENT);
    CHECK(strlen(vkllm_last_error()) > 0);
    vkllm_runtime_destroy(NULL);

    CHECK(vkllm_devices_enumerate(NULL, 0, &n) == VKLLM_OK);
    CHECK(n >= 1);

    vkllm_runtime_params_init(&params);
    CHECK(params.struct_size == sizeof params);
    CHECK(params.device_index == -1);
    params.flags = VKLLM_RUNTIME_VALIDATION;
    CHECK(vkllm_runtime_create(&params, &rt) == VKLLM_OK);
    if (rt) {
        info.struct_size = sizeof info;
        CHECK(vkllm_runtime_device_info(rt, &info) == VKLLM_OK);
        CHECK(info.usable == 1);
        result.struct_size = sizeof result;
        CHECK(vkllm_runtime_self_check(rt, &result) == VKLLM_OK);
        CHECK(result.kernels_failed == 0);
        stats.struct_size = sizeof stats;
        CHECK(vkllm_runtime_stats_get(rt, &stats) == VKLLM_OK);
        CHECK(stats.validation_errors == 0);
        vkllm_runtime_destroy(rt);
    }
    printf("C API test: %d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
