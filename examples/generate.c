/* A minimal vkllm application: loads a model, generates text from a prompt with greedy
 * sampling and prints it as it streams.
 *
 *     generate MODEL.gguf ["PROMPT"] [N_TOKENS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkllm.h"

static int32_t print_token(void *user_data, int32_t token, const char *text, size_t length) {
    (void)user_data;
    (void)token;
    fwrite(text, 1, length, stdout);
    fflush(stdout);
    return 0; /* go on */
}

static int fail(const char *what, vkllm_status status) {
    fprintf(stderr, "generate: %s: %s (%s)\n", what, vkllm_last_error(),
            vkllm_status_string(status));
    return 1;
}

int main(int argc, char **argv) {
    const char *model_path, *prompt;
    unsigned long n_tokens;
    vkllm_runtime *runtime = NULL;
    vkllm_model *model = NULL;
    vkllm_session *session = NULL;
    vkllm_session_params session_params;
    vkllm_sampling_params sampling;
    vkllm_generate_params gen;
    vkllm_generate_result result;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    vkllm_status s;
    int rc = 1;

    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s MODEL.gguf [PROMPT] [N_TOKENS]\n", argv[0]);
        return 2;
    }
    model_path = argv[1];
    prompt = argc > 2 ? argv[2] : "Once upon a time";
    n_tokens = argc > 3 ? strtoul(argv[3], NULL, 10) : 32;

    if ((s = vkllm_runtime_create(NULL, &runtime)) != VKLLM_OK) return fail("runtime", s);
    if ((s = vkllm_model_load(runtime, model_path, NULL, &model)) != VKLLM_OK) {
        rc = fail(model_path, s);
        goto done;
    }

    /* Tokenize: ask for the size first, then fill. */
    s = vkllm_tokenizer_encode(vkllm_model_get_tokenizer(model), prompt, strlen(prompt),
                               VKLLM_TOKENIZE_ADD_SPECIAL, NULL, 0, &n_ids);
    if (s != VKLLM_OK && s != VKLLM_ERR_BUFFER_TOO_SMALL) {
        rc = fail("tokenize", s);
        goto done;
    }
    ids = malloc((n_ids ? n_ids : 1) * sizeof *ids);
    if (!ids) goto done;
    s = vkllm_tokenizer_encode(vkllm_model_get_tokenizer(model), prompt, strlen(prompt),
                               VKLLM_TOKENIZE_ADD_SPECIAL, ids, n_ids, &n_ids);
    if (s != VKLLM_OK) {
        rc = fail("tokenize", s);
        goto done;
    }

    vkllm_session_params_init(&session_params);
    session_params.n_ctx = (uint32_t)(n_ids + n_tokens + 1);
    if ((s = vkllm_session_create(model, &session_params, &session)) != VKLLM_OK) {
        rc = fail("session", s);
        goto done;
    }

    vkllm_sampling_params_init(&sampling);
    sampling.temperature = 0.0f; /* greedy */
    vkllm_generate_params_init(&gen);
    gen.max_tokens = (uint32_t)n_tokens;
    gen.on_token = print_token;
    result.struct_size = sizeof result;

    fputs(prompt, stdout);
    s = vkllm_session_generate(session, ids, n_ids, &sampling, &gen, &result);
    putchar('\n');
    if (s != VKLLM_OK) {
        rc = fail("generate", s);
        goto done;
    }
    fprintf(stderr, "generate: %zu prompt tokens, %zu generated in %.1f ms\n", result.n_prompt,
            result.n_generated, result.decode_ms);
    rc = 0;

done:
    free(ids);
    vkllm_session_destroy(session);
    vkllm_model_destroy(model);
    vkllm_runtime_destroy(runtime);
    return rc;
}
