/* The names 0.2 renamed still link and do what their replacements do, for one minor version
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

int main(int argc, char **argv) {
    vkllm_gguf *gguf = NULL;
    vkllm_model_summary a, b;
    vkllm_runtime *rt = NULL;
    vkllm_runtime_params rp;
    vkllm_model *model = NULL;
    vkllm_session *session = NULL;
    vkllm_device_info da, db;
    vkllm_runtime_stats sa, sb;
    int32_t tok = 5;
    uint32_t pa = 0, pb = 0;
    uint64_t ka = 0, kb = 0;
    size_t count = 0;
    if (argc != 2) return 2;
    CHECK(vkllm_gguf_open(argv[1], &gguf) == VKLLM_OK);
    a.struct_size = b.struct_size = sizeof a;
    CHECK(vkllm_gguf_summary(gguf, &a) == VKLLM_OK);
    CHECK(vkllm_gguf_get_summary(gguf, &b) == VKLLM_OK);
    CHECK(a.n_tensors == b.n_tensors && strcmp(a.architecture, b.architecture) == 0);
    vkllm_gguf_close(gguf);

    vkllm_runtime_params_init(&rp);
    CHECK(vkllm_runtime_create(&rp, &rt) == VKLLM_OK);
    da.struct_size = db.struct_size = sizeof da;
    CHECK(vkllm_runtime_device_info(rt, &da) == VKLLM_OK);
    CHECK(vkllm_runtime_get_device_info(rt, &db) == VKLLM_OK);
    CHECK(strcmp(da.name, db.name) == 0);
    CHECK(vkllm_model_load(rt, argv[1], NULL, &model) == VKLLM_OK);
    CHECK(vkllm_model_tokenizer(model) == vkllm_model_get_tokenizer(model));
    CHECK(vkllm_model_chat_template(model) == vkllm_model_get_chat_template(model));
    CHECK(vkllm_session_create(model, NULL, &session) == VKLLM_OK);
    CHECK(vkllm_session_eval(session, 0, &tok, 1, NULL) == VKLLM_OK);
    CHECK(vkllm_session_position(session, 0, &pa) == VKLLM_OK);
    CHECK(vkllm_session_get_position(session, 0, &pb) == VKLLM_OK);
    CHECK(pa == 1 && pb == 1);
    CHECK(vkllm_session_layer_kv_bytes(session, 0, &ka) == VKLLM_OK);
    CHECK(vkllm_session_get_layer_kv_bytes(session, 0, &kb) == VKLLM_OK);
    CHECK(ka == kb && ka > 0);
    /* Not a profiled session: both refuse it alike. */
    CHECK(vkllm_session_profile(session, NULL, 0, &count) == VKLLM_ERR_INVALID_ARGUMENT);
    CHECK(vkllm_session_get_profile(session, NULL, 0, &count) == VKLLM_ERR_INVALID_ARGUMENT);
    sa.struct_size = sb.struct_size = sizeof sa;
    CHECK(vkllm_runtime_stats_get(rt, &sa) == VKLLM_OK);
    CHECK(vkllm_runtime_get_stats(rt, &sb) == VKLLM_OK);
    CHECK(sa.pipelines_created == sb.pipelines_created);
    vkllm_session_destroy(session);
    vkllm_model_destroy(model);
    vkllm_runtime_destroy(rt);
    if (failures) return 1;
    printf("ok: every 0.1 name does what its 0.2 name does\n");
    return 0;
}
