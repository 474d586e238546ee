// Mixture-of-experts models through the engine beyond the reference sequences
// (test_generation_reference.cpp holds those): GPT-OSS far past its 16-position window, where
// the sliding-window layers' rings wrap many times, against the CPU reference at every
// position; the sliding-window layers' memory not growing with the context.
#include <cstdio>

#include "engine_fixture.h"
#include "reference/forward.h"

using Moe = SharedModelTest;

// 120 tokens with prefill chunks of 8: the window layers keep 16 + 8 - 1 = 23 slots, so their
// rings wrap five times; decoded one by one and prefilled in chunks, every position's logits
// match the reference (which sees only the window on those layers).
TEST_F(Moe, GptOssPastItsWindowKeepsMatchingTheReference) {
    for (const char *name : {"tiny-gptoss-f32", "tiny-gptoss-mxfp4"}) {
        vkllm_model *m = load(model_path(name));
        ASSERT_NE(m, nullptr);
        auto reference = ref::load_model_ref(model_path(name));
        std::vector<int32_t> tokens = token_ids(120, reference->n_vocab, 17);
        std::vector<std::vector<float>> want = ref::forward_logits(*reference, tokens);
        vkllm_session *s = session(m, 256, VKLLM_KV_F32, 0, 1, 8);
        std::vector<std::vector<float>> got = decode_each(s, tokens, reference->n_vocab);
        double worst = 0, largest = 0;
        for (size_t i = 0; i < tokens.size(); ++i) {
            worst = std::max(worst, max_abs_diff(got[i], want[i]));
            largest = std::max(largest, max_abs(want[i]));
        }
        ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        std::vector<float> last(reference->n_vocab);
        ASSERT_EQ(vkllm_session_eval(s, 0, tokens.data(), tokens.size(), last.data()), VKLLM_OK);
        double prefill = max_abs_diff(last, want.back());
        std::printf("%s, 120 tokens: decode error %.3g, chunked prefill %.3g (max |logit| %.3g)\n",
                    name, worst, prefill, largest);
        EXPECT_LE(worst, std::max(1e-3, 1e-4 * largest)) << name;
        EXPECT_LE(prefill, std::max(1e-3, 1e-4 * largest)) << name;
    }
}

// Sliding-window layers (even) keep window + n_batch - 1 slots whatever n_ctx; full layers
// (odd) grow with it.
TEST_F(Moe, SlidingWindowLayersUseConstantMemory) {
    vkllm_model *m = load(model_path("tiny-gptoss-f32"));
    ASSERT_NE(m, nullptr);
    uint64_t swa[2], full[2];
    uint32_t ctx[2] = {256, 2048};
    for (int i = 0; i < 2; ++i) {
        vkllm_session *s = session(m, ctx[i], VKLLM_KV_F16, 0, 1, 8);
        ASSERT_EQ(vkllm_session_get_layer_kv_bytes(s, 0, &swa[i]), VKLLM_OK);
        ASSERT_EQ(vkllm_session_get_layer_kv_bytes(s, 1, &full[i]), VKLLM_OK);
        uint64_t none;
        EXPECT_EQ(vkllm_session_get_layer_kv_bytes(s, 2, &none), VKLLM_ERR_INVALID_ARGUMENT);
    }
    // 2 KV heads x 64 dims x F16 x (K and V) per slot.
    EXPECT_EQ(swa[0], uint64_t(16 + 8 - 1) * 2 * 64 * 2 * 2);
    EXPECT_EQ(swa[1], swa[0]);
    EXPECT_EQ(full[0], uint64_t(256) * 2 * 64 * 2 * 2);
    EXPECT_EQ(full[1], 8 * full[0]);
}

TEST_F(Moe, Qwen2MoeGeneratesAndReportsItsExperts) {
    vkllm_model *m = load(model_path("tiny-qwen2moe-f32"));
    ASSERT_NE(m, nullptr);
    vkllm_model_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_model_get_info(m, &info), VKLLM_OK);
    EXPECT_STREQ(info.architecture, "qwen2moe");
    vkllm_session *s = session(m, 64);
    std::vector<int32_t> prompt = token_ids(6, 320, 2);
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 12;
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK)
        << vkllm_last_error();
    EXPECT_GT(r.n_generated, 0u);
}
