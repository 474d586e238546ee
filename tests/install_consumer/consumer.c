/* An application built against an installed vkllm (see run.sh): asserts that the library it
 * loads is the one whose header it was compiled with, and that calls through it behave (a
 * missing file is an I/O error with a message, a NULL handle an invalid argument). Exits 1 on
 * any failed assertion. */
#include <stdio.h>
#include <string.h>

#include <vkllm.h>

static int failures = 0;

/* Stays on in release builds, unlike assert(). */
#define ASSERT_TRUE(cond)                                               \
    do {                                                                \
        if (!(cond)) {                                                  \
            fprintf(stderr, "consumer: assertion failed: %s\n", #cond); \
            ++failures;                                                 \
        }                                                               \
    } while (0)

int main(void) {
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR,
             VKLLM_VERSION_PATCH);
    printf("vkllm %s (header %s)\n", vkllm_version_string(), header);
    ASSERT_TRUE(vkllm_version() == VKLLM_VERSION_NUMBER);
    ASSERT_TRUE(strcmp(vkllm_version_string(), header) == 0);
    ASSERT_TRUE(strcmp(vkllm_status_string(VKLLM_ERR_IO), "") != 0);

    vkllm_gguf *gguf = NULL;
    ASSERT_TRUE(vkllm_gguf_open("/nonexistent/vkllm-consumer.gguf", &gguf) == VKLLM_ERR_IO);
    ASSERT_TRUE(gguf == NULL);
    ASSERT_TRUE(strstr(vkllm_last_error(), "vkllm-consumer.gguf") != NULL);
    vkllm_session_stats stats;
    stats.struct_size = sizeof stats;
    ASSERT_TRUE(vkllm_session_get_stats(NULL, &stats) == VKLLM_ERR_INVALID_ARGUMENT);
    return failures ? 1 : 0;
}
