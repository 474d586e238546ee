/* An application built against an installed vkllm (see run.sh): prints the library version
 * and checks it against the header it was compiled with. */
#include <stdio.h>
#include <string.h>

#include <vkllm.h>

int main(void) {
    printf("vkllm %s (header %d.%d.%d)\n", vkllm_version_string(), VKLLM_VERSION_MAJOR,
           VKLLM_VERSION_MINOR, VKLLM_VERSION_PATCH);
    if (vkllm_version() != VKLLM_VERSION_NUMBER) {
        fprintf(stderr, "consumer: library %u, header %d\n", (unsigned)vkllm_version(),
                VKLLM_VERSION_NUMBER);
        return 1;
    }
    return strcmp(vkllm_status_string(VKLLM_OK), "") == 0;
}
