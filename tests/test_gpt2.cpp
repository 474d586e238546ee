// GPT-2 through the engine (learned positions, LayerNorm with bias, fused QKV, GELU) on the
// shared tiny GPT-2 models: the KV cache equals recomputation, the context ends where the
// position table does, and a streaming window (which would need positions past the table) is
// refused. Logits against the float64 and llama.cpp references are in
// test_generation_reference.cpp.
#include <cstdio>

#include "engine_fixture.h"
#include "reference/forward.h"

using Gpt2 = SharedModelTest;

TEST_F(Gpt2, ModelInfoDescribesTheArchitecture) {
    vkllm_model *m = load(model_path("tiny-gpt2-f32"));
    ASSERT_NE(m, nullptr);
    vkllm_model_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_model_get_info(m, &info), VKLLM_OK);
    EXPECT_STREQ(info.architecture, "gpt2");
    EXPECT_EQ(info.n_ctx_train, 256u);
    EXPECT_EQ(info.n_heads, 2u);
    EXPECT_EQ(info.head_dim, 64u);
    uint64_t rope_table_builds = 1;
    ASSERT_EQ(vkllm_model_get_rope_table_builds(m, &rope_table_builds), VKLLM_OK);
    EXPECT_EQ(rope_table_builds, 0u) << "learned positions need no RoPE table";
}

// Decoding token by token through the cache gives the logits of recomputing the whole
// sequence with the CPU reference at every step (the "16x from the KV cache" of the founding
// write-up must not change a single result).
TEST_F(Gpt2, KvCacheDecodeEqualsRecomputation) {
    for (const char *name : {"tiny-gpt2-f32", "tiny-gpt2-f16"}) {
        vkllm_model *m = load(model_path(name));
        ASSERT_NE(m, nullptr);
        auto reference = ref::load_model_ref(model_path(name));
        std::vector<int32_t> tokens = token_ids(40, reference->n_vocab, 9);
        vkllm_session *s = session(m, 0, VKLLM_KV_F32);
        std::vector<std::vector<float>> got = decode_each(s, tokens, reference->n_vocab);
        std::vector<std::vector<float>> want = ref::forward_logits(*reference, tokens);
        double worst = 0, largest = 0;
        for (size_t i = 0; i < tokens.size(); ++i) {
            worst = std::max(worst, max_abs_diff(got[i], want[i]));
            largest = std::max(largest, max_abs(want[i]));
        }
        // And a fresh sequence prefilled in one go reaches the same last logits.
        vkllm_session *fresh = session(m, 0, VKLLM_KV_F32);
        std::vector<float> last(reference->n_vocab);
        ASSERT_EQ(vkllm_session_eval(fresh, 0, tokens.data(), tokens.size(), last.data()),
                  VKLLM_OK);
        double prefill = max_abs_diff(last, want.back());
        std::printf("%s: cached decode vs recomputation %.3g, prefill %.3g (max |logit| %.3g)\n",
                    name, worst, prefill, largest);
        EXPECT_LE(worst, 1e-4 * std::max(1.0, largest)) << name;
        EXPECT_LE(prefill, prefill_bound(1e-4 * std::max(1.0, largest), largest)) << name;
    }
}

// The position table has n_ctx_train rows: a session cannot be larger, and a sequence that
// would pass the end is refused before anything runs (the earlier tokens stay usable).
TEST_F(Gpt2, ContextEndsWithThePositionTable) {
    vkllm_model *m = load(model_path("tiny-gpt2-f32"));
    ASSERT_NE(m, nullptr);
    vkllm_session_params p;
    vkllm_session_params_init(&p);
    p.n_ctx = 257;
    vkllm_session *s = nullptr;
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(s, nullptr);

    vkllm_session *full = session(m);  // n_ctx 0: the model's 256 positions
    std::vector<int32_t> tokens = token_ids(250, 320, 4);
    ASSERT_EQ(vkllm_session_eval(full, 0, tokens.data(), tokens.size(), nullptr), VKLLM_OK)
        << vkllm_last_error();
    std::vector<int32_t> more = token_ids(7, 320, 5);
    EXPECT_EQ(vkllm_session_eval(full, 0, more.data(), more.size(), nullptr),
              VKLLM_ERR_CONTEXT_FULL);
    uint32_t pos = 0;
    EXPECT_EQ(vkllm_session_get_position(full, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 250u);
    std::vector<float> logits(320);
    EXPECT_EQ(vkllm_session_eval(full, 0, more.data(), 6, logits.data()), VKLLM_OK);
    EXPECT_EQ(vkllm_session_get_position(full, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 256u);
}

TEST_F(Gpt2, StreamingWindowIsRefusedForLearnedPositions) {
    vkllm_model *m = load(model_path("tiny-gpt2-f32"));
    ASSERT_NE(m, nullptr);
    vkllm_session_params p;
    vkllm_session_params_init(&p);
    p.n_ctx = 64;
    p.flags = VKLLM_SESSION_STREAMING;
    vkllm_session *s = nullptr;
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_UNSUPPORTED);
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(std::string(vkllm_last_error()).find("learned"), std::string::npos)
        << vkllm_last_error();
}

// The tokenizer is GPT-2's byte-level BPE: text round-trips and the ids are the model's.
TEST_F(Gpt2, GeneratesTextThroughItsTokenizer) {
    vkllm_model *m = load(model_path("tiny-gpt2-f32"));
    ASSERT_NE(m, nullptr);
    const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(m);
    ASSERT_NE(tok, nullptr);
    int32_t buf[64];
    size_t n = 0;
    ASSERT_EQ(vkllm_tokenizer_encode(tok, "Hello world", 11, 0, buf, 64, &n), VKLLM_OK)
        << vkllm_last_error();
    ASSERT_GT(n, 0u);
    vkllm_session *s = session(m);
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 20;
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_session_generate(s, buf, n, &sp, &gp, &r), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(r.n_prompt, n);
    EXPECT_GT(r.n_generated, 0u);
}
