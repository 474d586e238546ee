/* Callers built against an older header: they pass params structs that stop before the fields
 * added since, with struct_size set to their own sizeof. The library must read only what
 * struct_size covers and use the defaults for the rest; a struct_size larger than the library
 * knows (a newer caller) or smaller than the struct_size field is VKLLM_ERR_INVALID_ARGUMENT.
 * Output structs: the library writes only what the caller's struct_size covers.
 *
 * Each old struct is followed in memory by 0xFF bytes, so a library reading past struct_size
 * would see absurd values (or pointers) and fail this test.
 *
 *     test_abi_compat MODEL.gguf */
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

/* vkllm_runtime_params as a caller that knew only the device choice would have it. */
typedef struct old_runtime_params {
    size_t struct_size;
    int32_t device_index;
    const char *device_name;
} old_runtime_params;

typedef struct old_model_params {
    size_t struct_size;
} old_model_params;

/* vkllm_session_params before flags and n_sink. */
typedef struct old_session_params {
    size_t struct_size;
    uint32_t n_ctx;
    uint32_t n_seq;
} old_session_params;

/* vkllm_sampling_params before top_p, min_p, the repeat penalty and the seed. */
typedef struct old_sampling_params {
    size_t struct_size;
    float temperature;
    int32_t top_k;
} old_sampling_params;

/* vkllm_generate_params before the stop strings and the callbacks. */
typedef struct old_generate_params {
    size_t struct_size;
    uint32_t seq;
    uint32_t max_tokens;
} old_generate_params;

/* vkllm_generate_result before stop_reason and the timings (an output struct). */
typedef struct old_generate_result {
    size_t struct_size;
    size_t n_prompt;
    size_t n_generated;
} old_generate_result;

/* vkllm_device_info before the cooperative matrices (1056 bytes), an output struct that
 * callers pass as an array. */
typedef struct old_device_info {
    size_t struct_size;
    uint32_t index;
    vkllm_device_type type;
    char name[256];
    char driver_name[256];
    char driver_info[256];
    uint32_t vendor_id;
    uint32_t device_id;
    uint32_t api_version;
    int32_t usable;
    int32_t unified_memory;
    uint32_t heap_count;
    uint64_t heap_size[VKLLM_MAX_MEMORY_HEAPS];
    int32_t heap_device_local[VKLLM_MAX_MEMORY_HEAPS];
    uint64_t max_storage_buffer_range;
    uint64_t max_texel_buffer_elements;
    uint64_t max_allocation_size;
    uint32_t max_compute_shared_memory;
    uint32_t max_workgroup_invocations;
    uint32_t subgroup_size;
    int32_t shader_float16;
    int32_t shader_int8;
    int32_t storage_16bit;
    int32_t timestamps;
} old_device_info;

/* Each old struct with poison after it. */
#define POISONED(type)            \
    struct {                      \
        type p;                   \
        unsigned char poison[64]; \
    }

#define MAX_TOKENS 8

typedef struct tokens {
    int32_t ids[64];
    size_t n;
} tokens;

static int32_t collect(void *user_data, int32_t token, const char *text, size_t length) {
    tokens *t = (tokens *)user_data;
    (void)text;
    (void)length;
    if (token >= 0 && t->n < 64) t->ids[t->n++] = token;
    return 0;
}

/* Generates from a fresh sequence with full, current params (the reference). */
static tokens generate_current(vkllm_session *session, const int32_t *prompt, size_t n_prompt,
                               float temperature) {
    vkllm_sampling_params sp;
    vkllm_generate_params gp;
    tokens t;
    t.n = 0;
    vkllm_sampling_params_init(&sp);
    sp.temperature = temperature;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = MAX_TOKENS;
    gp.on_token = collect;
    gp.user_data = &t;
    CHECK(vkllm_session_reset(session, -1) == VKLLM_OK);
    CHECK(vkllm_session_generate(session, prompt, n_prompt, &sp, &gp, NULL) == VKLLM_OK);
    return t;
}

static int same_tokens(const tokens *a, const tokens *b) {
    return a->n == b->n && memcmp(a->ids, b->ids, a->n * sizeof a->ids[0]) == 0;
}

int main(int argc, char **argv) {
    POISONED(old_runtime_params) rp;
    POISONED(old_model_params) mp;
    POISONED(old_session_params) sp;
    POISONED(old_sampling_params) samp;
    POISONED(old_generate_params) gp;
    POISONED(old_generate_result) gr;
    vkllm_runtime *rt = NULL;
    vkllm_model *model = NULL;
    vkllm_session *session = NULL, *reference = NULL;
    vkllm_session_params full;
    vkllm_session_stats stats_old, stats_ref;
    vkllm_model_info info;
    unsigned char newer[sizeof(vkllm_session_params) + 16];
    unsigned char newer_info[sizeof(vkllm_model_info) + 16];
    int32_t prompt[16];
    size_t n_prompt = 0;
    uint32_t pos = 0;
    size_t i;
    int found;

    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]);
        return 2;
    }

    /* Devices: an array of the old struct is filled entry by entry as it lies (struct_size
     * apart), with what the current struct says, and nothing past the devices there are. */
    CHECK(sizeof(old_device_info) == 1056);
    {
        struct {
            old_device_info d[2];
            unsigned char poison[64];
        } od;
        vkllm_device_info cur[2];
        size_t n_old = 0, n_cur = 0, j;
        memset(&od, 0xFF, sizeof od);
        od.d[0].struct_size = od.d[1].struct_size = sizeof od.d[0];
        cur[0].struct_size = cur[1].struct_size = sizeof cur[0];
        CHECK(vkllm_devices_enumerate(cur, 2, &n_cur) == VKLLM_OK);
        CHECK(vkllm_devices_enumerate((vkllm_device_info *)(void *)od.d, 2, &n_old) == VKLLM_OK);
        CHECK(n_old == n_cur && n_cur > 0);
        for (i = 0; i < 2; ++i) {
            CHECK(od.d[i].struct_size == sizeof od.d[0]);
            if (i >= n_cur) {
                found = 0;
                for (j = sizeof(size_t); j < sizeof od.d[i]; ++j)
                    found |= ((const unsigned char *)&od.d[i])[j] != 0xFF;
                CHECK(!found); /* no device there: left alone */
                continue;
            }
            CHECK(od.d[i].index == cur[i].index);
            CHECK(strcmp(od.d[i].name, cur[i].name) == 0);
            CHECK(od.d[i].api_version == cur[i].api_version);
            CHECK(od.d[i].subgroup_size == cur[i].subgroup_size);
            CHECK(od.d[i].timestamps == cur[i].timestamps);
        }
        found = 0;
        for (i = 0; i < sizeof od.poison; ++i)
            found |= od.poison[i] != 0xFF;
        CHECK(!found);
        /* Entries of different sizes cannot be an array: refused. */
        od.d[1].struct_size = sizeof cur[0];
        CHECK(vkllm_devices_enumerate((vkllm_device_info *)(void *)od.d, 2, &n_old) ==
              VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(strstr(vkllm_last_error(), "struct_size") != NULL);
    }

    /* Runtime: an old struct (no flags, no cache path, no log callback). */
    memset(&rp, 0xFF, sizeof rp);
    rp.p.struct_size = sizeof rp.p;
    rp.p.device_index = -1;
    rp.p.device_name = NULL;
    CHECK(vkllm_runtime_create((const vkllm_runtime_params *)&rp.p, &rt) == VKLLM_OK);
    if (!rt) goto done;

    /* Model: only struct_size (no progress callback). */
    memset(&mp, 0xFF, sizeof mp);
    mp.p.struct_size = sizeof mp.p;
    CHECK(vkllm_model_load(rt, argv[1], (const vkllm_model_params *)&mp.p, &model) == VKLLM_OK);
    if (!model) goto done;

    /* Session: n_ctx and n_seq only; n_batch, flags and n_sink keep their defaults, so the
     * cache is the size of a session made with the current header's defaults. */
    memset(&sp, 0xFF, sizeof sp);
    sp.p.struct_size = sizeof sp.p;
    sp.p.n_ctx = 64;
    sp.p.n_seq = 1;
    CHECK(vkllm_session_create(model, (const vkllm_session_params *)&sp.p, &session) == VKLLM_OK);
    vkllm_session_params_init(&full);
    full.n_ctx = 64;
    CHECK(vkllm_session_create(model, &full, &reference) == VKLLM_OK);
    if (!session || !reference) goto done;
    stats_old.struct_size = sizeof stats_old;
    stats_ref.struct_size = sizeof stats_ref;
    CHECK(vkllm_session_get_stats(session, &stats_old) == VKLLM_OK);
    CHECK(vkllm_session_get_stats(reference, &stats_ref) == VKLLM_OK);
    CHECK(stats_old.kv_cache_bytes == stats_ref.kv_cache_bytes);
    CHECK(stats_old.kv_cache_bytes > 0);

    /* A newer caller's struct (larger than this library knows) and a broken one: refused, and
     * nothing is created. */
    memset(newer, 0, sizeof newer);
    vkllm_session_params_init((vkllm_session_params *)(void *)newer);
    ((vkllm_session_params *)(void *)newer)->struct_size = sizeof newer;
    {
        vkllm_session *none = NULL;
        CHECK(vkllm_session_create(model, (const vkllm_session_params *)(void *)newer, &none) ==
              VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(none == NULL);
        CHECK(strstr(vkllm_last_error(), "struct_size") != NULL);
        full.struct_size = 0;
        CHECK(vkllm_session_create(model, &full, &none) == VKLLM_ERR_INVALID_ARGUMENT);
        full.struct_size = sizeof(size_t) - 1;
        CHECK(vkllm_session_create(model, &full, &none) == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(none == NULL);
    }
    {
        vkllm_runtime_params big;
        vkllm_runtime *none = NULL;
        vkllm_runtime_params_init(&big);
        big.struct_size = sizeof big + 8;
        CHECK(vkllm_runtime_create(&big, &none) == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(none == NULL);
    }
    {
        vkllm_model_params big;
        vkllm_model *none = NULL;
        vkllm_model_params_init(&big);
        big.struct_size = sizeof big + 8;
        CHECK(vkllm_model_load(rt, argv[1], &big, &none) == VKLLM_ERR_INVALID_ARGUMENT);
        CHECK(none == NULL);
    }

    CHECK(vkllm_tokenizer_encode(vkllm_model_get_tokenizer(model), "Hello world", 11,
                                 VKLLM_TOKENIZE_ADD_SPECIAL, prompt, 16, &n_prompt) == VKLLM_OK);
    CHECK(n_prompt > 0);

    /* Sampling and generate params from an old caller, and an old result struct. */
    {
        tokens t, ref_greedy, ref_default;
        ref_greedy = generate_current(reference, prompt, n_prompt, 0.0f);
        ref_default = generate_current(reference, prompt, n_prompt, 0.8f);
        CHECK(ref_greedy.n == MAX_TOKENS);

        memset(&samp, 0xFF, sizeof samp);
        samp.p.struct_size = sizeof samp.p;
        samp.p.temperature = 0.0f;
        samp.p.top_k = 40;
        memset(&gp, 0xFF, sizeof gp);
        gp.p.struct_size = sizeof gp.p;
        gp.p.seq = 0;
        gp.p.max_tokens = MAX_TOKENS;
        memset(&gr, 0xFF, sizeof gr);
        gr.p.struct_size = sizeof gr.p;
        CHECK(vkllm_session_generate(session, prompt, n_prompt,
                                     (const vkllm_sampling_params *)&samp.p,
                                     (const vkllm_generate_params *)&gp.p,
                                     (vkllm_generate_result *)&gr.p) == VKLLM_OK);
        CHECK(gr.p.struct_size == sizeof gr.p);
        CHECK(gr.p.n_prompt == n_prompt);
        CHECK(gr.p.n_generated == MAX_TOKENS);
        found = 0;
        for (i = 0; i < sizeof gr.poison; ++i)
            found |= gr.poison[i] != 0xFF;
        CHECK(!found); /* nothing written past the caller's struct_size */
        /* The generated tokens (but the last) are in the cache. */
        CHECK(vkllm_session_get_position(session, 0, &pos) == VKLLM_OK);
        CHECK(pos == n_prompt + MAX_TOKENS - 1);

        /* The same tokens as the current header's greedy run (no callback in the old struct:
         * read them back by running the current params on the same session). */
        t = generate_current(session, prompt, n_prompt, 0.0f);
        CHECK(same_tokens(&t, &ref_greedy));

        /* Default top_p, min_p, repeat penalty and seed apply to what the old struct lacks:
         * sampling at 0.8 gives the reference's tokens. */
        samp.p.temperature = 0.8f;
        CHECK(vkllm_session_reset(session, -1) == VKLLM_OK);
        {
            vkllm_generate_params cur;
            vkllm_generate_params_init(&cur);
            cur.max_tokens = MAX_TOKENS;
            cur.on_token = collect;
            t.n = 0;
            cur.user_data = &t;
            CHECK(vkllm_session_generate(session, prompt, n_prompt,
                                         (const vkllm_sampling_params *)&samp.p, &cur,
                                         NULL) == VKLLM_OK);
            CHECK(same_tokens(&t, &ref_default));
        }

        /* Newer callers' sampling and generate params are refused. */
        {
            vkllm_sampling_params big_s;
            vkllm_generate_params big_g;
            vkllm_sampling_params_init(&big_s);
            big_s.struct_size = sizeof big_s + 4;
            CHECK(vkllm_session_generate(session, prompt, n_prompt, &big_s, NULL, NULL) ==
                  VKLLM_ERR_INVALID_ARGUMENT);
            vkllm_generate_params_init(&big_g);
            big_g.struct_size = sizeof big_g + 8;
            CHECK(vkllm_session_generate(session, prompt, n_prompt, NULL, &big_g, NULL) ==
                  VKLLM_ERR_INVALID_ARGUMENT);
        }
    }

    /* An output struct from a newer caller: the library fills what it knows and leaves the
     * rest alone. */
    memset(newer_info, 0xAB, sizeof newer_info);
    ((vkllm_model_info *)(void *)newer_info)->struct_size = sizeof newer_info;
    CHECK(vkllm_model_get_info(model, (vkllm_model_info *)(void *)newer_info) == VKLLM_OK);
    memcpy(&info, newer_info, sizeof info);
    CHECK(info.struct_size == sizeof newer_info);
    CHECK(info.n_vocab > 0);
    found = 0;
    for (i = sizeof info; i < sizeof newer_info; ++i)
        found |= newer_info[i] != 0xAB;
    CHECK(!found);

done:
    vkllm_session_destroy(reference);
    vkllm_session_destroy(session);
    vkllm_model_destroy(model);
    vkllm_runtime_destroy(rt);
    printf("ABI compatibility: %d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}
