/* An application built against an installed vkllm (see run.sh): checks that the library it
 * loads is the one whose header it was compiled with, and that a call through it works.
 * Exits 1 on any mismatch. */
#include <stdio.h>
#include <string.h>

#include <vkllm.h>

static int failures = 0;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "consumer: FAILED: %s\n", what);
        ++failures;
    }
}

int main(void) {
    char header[32];
    snprintf(header, sizeof header, "%d.%d.%d", VKLLM_VERSION_MAJOR, VKLLM_VERSION_MINOR,
             VKLLM_VERSION_PATCH);
    printf("vkllm %s (header %s)\n", vkllm_version_string(), header);
    check(vkllm_version() == VKLLM_VERSION_NUMBER, "library version == header version");
    check(strcmp(vkllm_version_string(), header) == 0, "version string == header's");
    check(strcmp(vkllm_status_string(VKLLM_ERR_IO), "") != 0, "status strings are available");
    return failures ? 1 : 0;
}
