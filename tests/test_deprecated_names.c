/* The names 0.3 renamed still link and do what their replacements do, until 0.4
 * (include/vkllm.h, "Deprecated names"). Built with the deprecation warning off; the test
 * Abi.TheHeaderWarnsWhereADeprecatedNameIsUsed compiles it again to see the header warn.
 *
 *     test_deprecated_names MODEL.gguf */
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

#define MAX_TOKENS 4

/* Generates MAX_TOKENS greedy tokens after `prompt` on an emptied sequence 0, with the old name
 * or the new one, and returns the sequence's tokens in `out` (their number). */
static size_t generate(vkllm_session *session, int old_name, const int32_t *prompt, size_t n,
                       int32_t *out, size_t capacity) {
    vkllm_sampling_params sp;
    vkllm_generate_params gp;
    vkllm_generate_result r;
    size_t count = 0;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = MAX_TOKENS;
    gp.ignore_eog = 1;
    r.struct_size = sizeof r;
    CHECK(vkllm_session_reset(session, 0) == VKLLM_OK);
    if (old_name)
        CHECK(vkllm_generate(session, prompt, n, &sp, &gp, &r) == VKLLM_OK);
    else
        CHECK(vkllm_session_generate(session, prompt, n, &sp, &gp, &r) == VKLLM_OK);
    CHECK(r.n_generated == MAX_TOKENS);
    CHECK(vkllm_session_get_tokens(session, 0, out, capacity, &count) == VKLLM_OK);
    return count;
}

/* The same through the batched call, with its tokens in `out`. */
static size_t generate_batch(vkllm_session *session, int old_name, const int32_t *prompt, size_t n,
                             int32_t *out) {
    vkllm_generate_params gp;
    vkllm_batch_sequence b;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = MAX_TOKENS;
    gp.ignore_eog = 1;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    b.prompt = prompt;
    b.n_prompt = n;
    b.tokens = out;
    CHECK(vkllm_session_reset(session, 0) == VKLLM_OK);
    if (old_name)
        CHECK(vkllm_generate_batch(session, &b, 1, &gp) == VKLLM_OK);
    else
        CHECK(vkllm_session_generate_batch(session, &b, 1, &gp) == VKLLM_OK);
    return b.n_generated;
}

int main(int argc, char **argv) {
    const char *text = "Hello, world";
    vkllm_gguf *gguf = NULL;
    vkllm_gguf_key ka, kb;
    vkllm_tensor_info ta, tb;
    vkllm_runtime *rt = NULL;
    vkllm_model *model = NULL;
    vkllm_session *session = NULL;
    vkllm_sampler *sampler = NULL;
    vkllm_sampling_params sp;
    const vkllm_tokenizer *tok;
    int32_t ids_a[64], ids_b[64], out_a[64], out_b[64];
    size_t na = 0, nb = 0, la = 0, lb = 0;
    char buf_a[256], buf_b[256];
    int32_t eog_a = -1, eog_b = -1;
    uint64_t seed_a = 0, seed_b = 0;
    vkllm_tokenizer_info ti;
    if (argc != 2) return 2;

    CHECK(vkllm_gguf_open(argv[1], &gguf) == VKLLM_OK);
    ka.struct_size = kb.struct_size = sizeof ka;
    CHECK(vkllm_gguf_key_at(gguf, 0, &ka) == VKLLM_OK);
    CHECK(vkllm_gguf_get_key(gguf, 0, &kb) == VKLLM_OK);
    CHECK(strcmp(ka.name, kb.name) == 0 && ka.type == kb.type && ka.count == kb.count);
    ta.struct_size = tb.struct_size = sizeof ta;
    CHECK(vkllm_gguf_tensor_at(gguf, 1, &ta) == VKLLM_OK);
    CHECK(vkllm_gguf_get_tensor(gguf, 1, &tb) == VKLLM_OK);
    CHECK(strcmp(ta.name, tb.name) == 0 && ta.file_offset == tb.file_offset);
    CHECK(vkllm_gguf_tensor_at(gguf, 1u << 30, &ta) == VKLLM_ERR_NOT_FOUND);
    vkllm_gguf_destroy(gguf);

    CHECK(vkllm_runtime_create(NULL, &rt) == VKLLM_OK);
    CHECK(vkllm_model_load(rt, argv[1], NULL, &model) == VKLLM_OK);
    CHECK(vkllm_model_gguf(model) == vkllm_model_get_gguf(model) && vkllm_model_gguf(model));
    tok = vkllm_model_get_tokenizer(model);

    CHECK(vkllm_tokenize(tok, text, strlen(text), VKLLM_TOKENIZE_ADD_SPECIAL, ids_a, 64, &na) ==
          VKLLM_OK);
    CHECK(vkllm_tokenizer_encode(tok, text, strlen(text), VKLLM_TOKENIZE_ADD_SPECIAL, ids_b, 64,
                                 &nb) == VKLLM_OK);
    CHECK(na == nb && na > 1 && memcmp(ids_a, ids_b, na * sizeof *ids_a) == 0);
    CHECK(vkllm_detokenize(tok, ids_a, na, 0, buf_a, sizeof buf_a, &la) == VKLLM_OK);
    CHECK(vkllm_tokenizer_decode(tok, ids_b, nb, 0, buf_b, sizeof buf_b, &lb) == VKLLM_OK);
    CHECK(la == lb && strcmp(buf_a, buf_b) == 0);
    CHECK(vkllm_token_to_piece(tok, ids_a[na - 1], 0, buf_a, sizeof buf_a, &la) == VKLLM_OK);
    CHECK(vkllm_tokenizer_get_piece(tok, ids_b[nb - 1], 0, buf_b, sizeof buf_b, &lb) == VKLLM_OK);
    CHECK(la == lb && la > 0 && strcmp(buf_a, buf_b) == 0);
    ti.struct_size = sizeof ti;
    CHECK(vkllm_tokenizer_get_info(tok, &ti) == VKLLM_OK);
    CHECK(vkllm_token_is_end_of_generation(tok, ti.eos, &eog_a) == VKLLM_OK);
    CHECK(vkllm_tokenizer_is_end_of_generation(tok, ti.eos, &eog_b) == VKLLM_OK);
    CHECK(eog_a == 1 && eog_b == 1);
    CHECK(vkllm_token_is_end_of_generation(tok, -1, &eog_a) == VKLLM_ERR_INVALID_ARGUMENT);

    CHECK(vkllm_session_create(model, NULL, &session) == VKLLM_OK);
    na = generate(session, 1, ids_a, nb, out_a, 64);
    CHECK(vkllm_session_state_size(session, 0, &la) == VKLLM_OK);
    nb = generate(session, 0, ids_b, nb, out_b, 64);
    CHECK(vkllm_session_get_state_size(session, 0, &lb) == VKLLM_OK);
    CHECK(na == nb && na > MAX_TOKENS && memcmp(out_a, out_b, na * sizeof *out_a) == 0);
    CHECK(la == lb && la > 0);
    na = generate_batch(session, 1, ids_a, 3, out_a);
    nb = generate_batch(session, 0, ids_b, 3, out_b);
    CHECK(na == MAX_TOKENS && nb == MAX_TOKENS && memcmp(out_a, out_b, na * sizeof *out_a) == 0);

    vkllm_sampling_params_init(&sp);
    sp.seed = VKLLM_SEED_RANDOM;
    CHECK(vkllm_sampler_create(tok, &sp, &sampler) == VKLLM_OK);
    CHECK(vkllm_sampler_seed(sampler, &seed_a) == VKLLM_OK);
    CHECK(vkllm_sampler_get_seed(sampler, &seed_b) == VKLLM_OK);
    CHECK(seed_a == seed_b);

    vkllm_sampler_destroy(sampler);
    vkllm_session_destroy(session);
    vkllm_model_destroy(model);
    vkllm_runtime_destroy(rt);
    if (failures) return 1;
    printf("ok: every 0.2 name does what its 0.3 name does\n");
    return 0;
}
