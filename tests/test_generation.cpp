// The engine end to end on tiny random models written by the tests: logits against the CPU
// reference, the KV cache against recomputation, batched decode, the ring and the streaming
// window, context limits, cancellation, recording counts, generation options.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "api/runtime.h"
#include "gguf_builder.h"
#include "tiny_model_fixture.h"

using Generation = TinyModelTest;

// F32 weights and cache: the GPU's F32 arithmetic against the double reference.
TEST_F(Generation, TinyModelsMatchTheCpuReference) {
    struct Case {
        const char *name;
        TinyModelSpec spec;
        double tol;
    };
    std::vector<Case> cases;
    TinyModelSpec llama;
    cases.push_back({"llama_f32", llama, 1e-4});
    TinyModelSpec qwen2 = qwen2_head64();
    qwen2.weight_type = 1;
    cases.push_back({"qwen2_f16", qwen2, 1e-4});
    TinyModelSpec llama3;  // Llama 3.1-style per-pair RoPE frequency factors
    llama3.rope_freqs = true;
    cases.push_back({"llama_rope_freqs", llama3, 1e-4});
    TinyModelSpec qwen3;
    qwen3.arch = "qwen3";
    qwen3.weight_type = 30;
    qwen3.tied_output = true;
    cases.push_back({"qwen3_bf16_tied", qwen3, 1e-4});
    for (const Case &c : cases) {
        vkllm_model *m = tiny(c.spec, c.name);
        ASSERT_NE(m, nullptr) << c.name;
        vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32);
        std::vector<int32_t> tokens = some_tokens(20, c.spec.n_vocab, 7);
        std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
        std::vector<std::vector<float>> got = decode_each(s, tokens, c.spec.n_vocab);
        double worst = 0, largest = 0;
        for (size_t i = 0; i < tokens.size(); ++i) {
            worst = std::max(worst, max_abs_diff(got[i], want[i]));
            largest = std::max(largest, max_abs(want[i]));
        }
        // The prefill path (tiled matmul for 20 rows) on a fresh sequence.
        ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        std::vector<float> last(c.spec.n_vocab);
        ASSERT_EQ(vkllm_session_eval(s, 0, tokens.data(), tokens.size(), last.data()), VKLLM_OK);
        double prefill_err = max_abs_diff(last, want.back());
        std::printf("%s: max |logit| %.3g, decode error %.3g, prefill error %.3g\n", c.name,
                    largest, worst, prefill_err);
        EXPECT_LE(worst, c.tol * std::max(1.0, largest)) << c.name;
        EXPECT_LE(prefill_err, c.tol * std::max(1.0, largest)) << c.name;
    }
}

// Quantized weights (every type the library quantizes, as llama.cpp lays them out) loaded and
// run as stored. Two comparisons per type:
//  - exactness: the CPU reference reads the same quantized file (dequantized exactly), so the
//    GPU must match it with the F32 tolerance: a mis-decoded block cannot hide;
//  - quantization error: against the F32 model of the same weights, the logit difference and
//    top-1 agreement (printed) stay within loose per-type bounds (4-bit types lose the most).
TEST_F(Generation, QuantizedModelsMatchTheReferenceAndTrackTheirF32Original) {
    struct Case {
        uint32_t type;
        const char *name;
        double max_rel_diff;  // vs F32: max logit difference / max |logit|
    };
    const Case cases[] = {{8, "Q8_0", 0.03}, {2, "Q4_0", 0.3},  {3, "Q4_1", 0.3},
                          {6, "Q5_0", 0.2},  {7, "Q5_1", 0.2},  {12, "Q4_K", 0.3},
                          {13, "Q5_K", 0.2}, {14, "Q6_K", 0.08}};
    TinyModelSpec spec;
    spec.arch = "qwen2";
    spec.n_embd = 256, spec.n_ff = 512, spec.n_head = 4, spec.n_head_kv = 2;  // whole 256-blocks
    std::vector<int32_t> tokens = some_tokens(12, spec.n_vocab, 23);
    vkllm_model *f32 = tiny(spec, "quant_f32", false);
    ASSERT_NE(f32, nullptr);
    std::vector<std::vector<float>> base =
        decode_each(session(f32, 64, VKLLM_SESSION_KV_F32), tokens, spec.n_vocab);
    for (const Case &c : cases) {
        spec.weight_type = c.type;
        vkllm_model *m = tiny(spec, std::string("quant_") + c.name);
        ASSERT_NE(m, nullptr) << c.name;
        vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32);
        std::vector<std::vector<float>> got = decode_each(s, tokens, spec.n_vocab);
        std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
        double exact_err = 0, diff = 0, largest = 0;
        int same_top = 0;
        for (size_t i = 0; i < tokens.size(); ++i) {
            exact_err = std::max(exact_err, max_abs_diff(got[i], want[i]));
            diff = std::max(diff, max_abs_diff(got[i], base[i]));
            largest = std::max(largest, max_abs(base[i]));
            same_top += argmax_of(got[i]) == argmax_of(base[i]);
        }
        // The prefill path (matrix-matrix kernels) on a fresh sequence.
        ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        std::vector<float> last(spec.n_vocab);
        ASSERT_EQ(vkllm_session_eval(s, 0, tokens.data(), tokens.size(), last.data()), VKLLM_OK);
        double prefill_err = max_abs_diff(last, want.back());
        std::printf(
            "%-5s: vs reference %.2g (prefill %.2g); vs F32 weights: max logit "
            "difference %.3g of max |logit| %.3g, same top-1 at %d/%zu\n",
            c.name, exact_err, prefill_err, diff, largest, same_top, tokens.size());
        EXPECT_LE(exact_err, 1e-4 * std::max(1.0, largest)) << c.name;
        EXPECT_LE(prefill_err, 1e-4 * std::max(1.0, largest)) << c.name;
        EXPECT_GT(diff, 0.0) << c.name << ": the file really is quantized";
        EXPECT_LE(diff, c.max_rel_diff * std::max(1.0, largest)) << c.name;
        // Weights stay as stored: device memory is the file's tensor data (the F32 norms as
        // they are), each tensor rounded up to whole 32-bit words at most.
        vkllm_model_info info;
        info.struct_size = sizeof info;
        ASSERT_EQ(vkllm_model_get_info(m, &info), VKLLM_OK);
        EXPECT_GE(info.device_bytes, info.tensor_bytes) << c.name;
        EXPECT_LE(info.device_bytes, info.tensor_bytes + 4 * 64) << c.name;
    }
}

// A Q8_0 KV cache (VKLLM_SESSION_KV_Q8_0): logits track the F32 cache within the error of 8-bit
// K/V (printed), and the cache takes (head_dim + 16) / (2 head_dim) of F16's bytes.
TEST_F(Generation, Q8_0KvCacheTracksTheF32CacheInLessMemory) {
    TinyModelSpec spec = qwen2_head64();
    vkllm_model *m = tiny(spec, "kv_q8");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(40, spec.n_vocab, 5);
    vkllm_session *f32 = session(m, 64, VKLLM_SESSION_KV_F32);
    vkllm_session *f16 = session(m, 64);
    vkllm_session *q8 = session(m, 64, VKLLM_SESSION_KV_Q8_0);
    std::vector<std::vector<float>> a = decode_each(f32, tokens, spec.n_vocab);
    std::vector<std::vector<float>> b = decode_each(q8, tokens, spec.n_vocab);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        worst = std::max(worst, max_abs_diff(a[i], b[i]));
        largest = std::max(largest, max_abs(a[i]));
    }
    // Prefill writes the cache through the same quantizer.
    ASSERT_EQ(vkllm_session_reset(q8, 0), VKLLM_OK);
    std::vector<float> last(spec.n_vocab);
    ASSERT_EQ(vkllm_session_eval(q8, 0, tokens.data(), tokens.size(), last.data()), VKLLM_OK);
    double prefill = max_abs_diff(last, a.back());
    std::printf(
        "Q8_0 vs F32 KV cache: max logit difference %.3g (prefill %.3g) of max |logit| "
        "%.3g\n",
        worst, prefill, largest);
    EXPECT_GT(worst, 0.0);
    EXPECT_LE(worst, 0.02 * std::max(1.0, largest));
    EXPECT_LE(prefill, 0.02 * std::max(1.0, largest));
    vkllm_session_stats s16, s8;
    s16.struct_size = s8.struct_size = sizeof s16;
    ASSERT_EQ(vkllm_session_get_stats(f16, &s16), VKLLM_OK);
    ASSERT_EQ(vkllm_session_get_stats(q8, &s8), VKLLM_OK);
    EXPECT_EQ(s8.kv_cache_bytes * 128, s16.kv_cache_bytes * (64 + 16));
}

TEST_F(Generation, Q8_0KvCacheIsRefusedWhereItCannotWork) {
    TinyModelSpec spec;  // head_dim 8: not whole blocks of 32
    vkllm_model *m = tiny(spec, "kv_q8_refused", false);
    ASSERT_NE(m, nullptr);
    vkllm_session_params p;
    vkllm_session_params_init(&p);
    p.n_ctx = 32;
    vkllm_session *s = nullptr;
    p.flags = VKLLM_SESSION_KV_Q8_0;
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(vkllm_last_error()).find("head_dim"), std::string::npos)
        << vkllm_last_error();
    p.flags = VKLLM_SESSION_KV_Q8_0 | VKLLM_SESSION_KV_F32;
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_INVALID_ARGUMENT);
    p.flags = 0x100;
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(s, nullptr);
}

TEST_F(Generation, KvCacheDecodeEqualsRecomputingTheSequence) {
    TinyModelSpec spec;
    spec.arch = "qwen2";
    vkllm_model *m = tiny(spec, "kv_equals");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(24, spec.n_vocab, 3);
    vkllm_session *cached = session(m, 64, VKLLM_SESSION_KV_F32);
    std::vector<std::vector<float>> step = decode_each(cached, tokens, spec.n_vocab);
    vkllm_session *fresh = session(m, 64, VKLLM_SESSION_KV_F32);
    double worst = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        ASSERT_EQ(vkllm_session_reset(fresh, 0), VKLLM_OK);
        std::vector<float> all(spec.n_vocab);
        ASSERT_EQ(vkllm_session_eval(fresh, 0, tokens.data(), i + 1, all.data()), VKLLM_OK);
        worst = std::max(worst, max_abs_diff(step[i], all));
    }
    std::printf("cached decode vs recompute: max difference %.3g\n", worst);
    EXPECT_LE(worst, 1e-4);
}

TEST_F(Generation, BatchedDecodeOfFourSequencesEqualsFourSeparateRuns) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "batched");
    ASSERT_NE(m, nullptr);
    vkllm_session *batch = session(m, 64, 0, 4);
    std::vector<std::vector<int32_t>> prompts;
    std::vector<std::vector<float>> last(4);
    for (uint32_t q = 0; q < 4; ++q) {
        prompts.push_back(some_tokens(5 + 3 * q, spec.n_vocab, 11 + q));  // different lengths
        last[q].resize(spec.n_vocab);
        ASSERT_EQ(
            vkllm_session_eval(batch, q, prompts[q].data(), prompts[q].size(), last[q].data()),
            VKLLM_OK);
    }
    std::vector<std::vector<int32_t>> next(4);
    for (int stepi = 0; stepi < 6; ++stepi) {
        uint32_t seqs[4] = {0, 1, 2, 3};
        int32_t toks[4];
        for (int q = 0; q < 4; ++q)
            next[q].push_back(toks[q] = argmax_of(last[q]));
        std::vector<float> logits(4 * spec.n_vocab);
        ASSERT_EQ(vkllm_session_decode(batch, seqs, toks, 4, logits.data()), VKLLM_OK)
            << vkllm_last_error();
        for (int q = 0; q < 4; ++q)
            last[q].assign(logits.begin() + q * spec.n_vocab,
                           logits.begin() + (q + 1) * spec.n_vocab);
    }
    for (uint32_t q = 0; q < 4; ++q) {
        vkllm_session *alone = session(m, 64);
        std::vector<float> l(spec.n_vocab);
        ASSERT_EQ(vkllm_session_eval(alone, 0, prompts[q].data(), prompts[q].size(), l.data()),
                  VKLLM_OK);
        for (size_t k = 0; k < next[q].size(); ++k) {
            EXPECT_EQ(argmax_of(l), next[q][k]) << "sequence " << q << " step " << k;
            uint32_t zero = 0;
            ASSERT_EQ(vkllm_session_decode(alone, &zero, &next[q][k], 1, l.data()), VKLLM_OK);
        }
        EXPECT_LE(max_abs_diff(l, last[q]), 1e-4) << "sequence " << q;
    }
}

TEST_F(Generation, ContextFullIsAnErrorThatChangesNothing) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "ctx_full");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 16);
    std::vector<int32_t> t = some_tokens(17, spec.n_vocab, 5);
    ASSERT_EQ(vkllm_session_eval(s, 0, t.data(), 10, nullptr), VKLLM_OK);
    EXPECT_EQ(vkllm_session_eval(s, 0, t.data(), 7, nullptr), VKLLM_ERR_CONTEXT_FULL);
    EXPECT_NE(std::string(vkllm_last_error()).find("context"), std::string::npos);
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 10u);
    ASSERT_EQ(vkllm_session_eval(s, 0, t.data(), 6, nullptr), VKLLM_OK);
    uint32_t seq = 0;
    std::vector<float> l(spec.n_vocab);
    EXPECT_EQ(vkllm_session_decode(s, &seq, &t[0], 1, l.data()), VKLLM_ERR_CONTEXT_FULL);
    int32_t bad = int32_t(spec.n_vocab);
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    EXPECT_EQ(vkllm_session_eval(s, 0, &bad, 1, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 0u);
}

// Positions past the ring's capacity wrap around (slot p % capacity) and the window keeps
// the sinks and the most recent tokens: the logits must equal a reference that masks
// attention to exactly those positions.
TEST_F(Generation, StreamingWindowWrapsTheRingAndMatchesMaskedAttention) {
    TinyModelSpec spec;
    spec.n_ctx = 128;
    vkllm_model *m = tiny(spec, "streaming");
    ASSERT_NE(m, nullptr);
    const uint32_t capacity = 12, sinks = 4, window = capacity - sinks;
    vkllm_session *s =
        session(m, capacity, VKLLM_SESSION_STREAMING | VKLLM_SESSION_KV_F32, 1, 0, sinks);
    std::vector<int32_t> tokens = some_tokens(40, spec.n_vocab, 9);
    std::vector<std::vector<float>> got = decode_each(s, tokens, spec.n_vocab);
    auto visible = [&](uint32_t q, uint32_t k) { return k <= q && (k < sinks || k + window > q); };
    std::vector<std::vector<float>> want = ref::forward_logits_masked(*reference_, tokens, visible);
    double worst = 0;
    for (size_t i = 0; i < tokens.size(); ++i)
        worst = std::max(worst, max_abs_diff(got[i], want[i]));
    std::printf("streaming window (capacity %u, %u sinks) over 40 tokens: max error %.3g\n",
                capacity, sinks, worst);
    EXPECT_LE(worst, 1e-4);
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 40u);
}

// GPUs split a decode step's keys across workgroups (split-K); lavapipe never does, so the
// runtime's kernels are told to here. The session then sizes the slices' scratch buffer and
// records the merge pass: every decode step must still match the CPU reference, through the
// ring's wrap and with several sequences decoded together.
TEST_F(Generation, SplitKeyAttentionInASessionMatchesTheReference) {
    TinyModelSpec qwen2 = qwen2_head64();
    vkllm_model *m = tiny(qwen2, "split_k");
    ASSERT_NE(m, nullptr);
    rt_->context->kernels().set_attention_splits(3);
    vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32, 2);
    std::vector<int32_t> tokens = some_tokens(30, qwen2.n_vocab, 17);
    std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
    std::vector<std::vector<float>> got = decode_each(s, tokens, qwen2.n_vocab, 1);
    double worst = 0;
    for (size_t i = 0; i < tokens.size(); ++i)
        worst = std::max(worst, max_abs_diff(got[i], want[i]));
    EXPECT_LE(worst, 1e-4);
    // A streaming ring of 12 slots wrapping under split-K: the same as without.
    vkllm_session *ring = session(m, 12, VKLLM_SESSION_STREAMING | VKLLM_SESSION_KV_F32, 1, 0, 4);
    std::vector<std::vector<float>> split = decode_each(ring, tokens, qwen2.n_vocab);
    rt_->context->kernels().set_attention_splits(0);
    vkllm_session *plain = session(m, 12, VKLLM_SESSION_STREAMING | VKLLM_SESSION_KV_F32, 1, 0, 4);
    std::vector<std::vector<float>> one = decode_each(plain, tokens, qwen2.n_vocab);
    for (size_t i = 0; i < tokens.size(); ++i)
        EXPECT_LE(max_abs_diff(split[i], one[i]), 1e-5) << "token " << i;
}

// The paths a step takes where the texel kernel cannot (here: texel loads off): the RMS norms
// as dispatches of their own and the stacked Q/K/V projection as a storage-buffer matvec per
// row block, with Qwen2's biases sliced to match. Decode and a prefill in steps of 8 (lavapipe's
// groups) both match the reference, as the fused default does.
TEST_F(Generation, LayersTheTexelKernelCannotTakeMatchTheReference) {
    TinyModelSpec qwen2 = qwen2_head64();
    vkllm_model *m = tiny(qwen2, "unfused");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(24, qwen2.n_vocab, 29);
    std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
    for (bool texels : {false, true}) {
        rt_->context->kernels().set_texel_loads(texels);
        vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32);
        std::vector<std::vector<float>> got = decode_each(s, tokens, qwen2.n_vocab);
        double worst = 0;
        for (size_t i = 0; i < tokens.size(); ++i)
            worst = std::max(worst, max_abs_diff(got[i], want[i]));
        EXPECT_LE(worst, 1e-4) << (texels ? "texel loads" : "no texel loads");
        ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        std::vector<float> last(qwen2.n_vocab);
        for (size_t i = 0; i < tokens.size(); i += 8)
            ASSERT_EQ(vkllm_session_eval(s, 0, &tokens[i], 8, last.data()), VKLLM_OK);
        EXPECT_LE(max_abs_diff(last, want.back()), 1e-4)
            << (texels ? "texel loads" : "no texel loads") << ", prefill";
    }
}

// The tiled attention kernel GPUs take for prompts, in whole sessions: a prompt evaluated in
// steps of 12 tokens matches the reference at every step's end, and a streaming ring whose
// window starts inside a step's tiles gives what the one-token-per-workgroup kernel gives.
TEST_F(Generation, TiledPrefillAttentionInASessionMatchesTheReference) {
    TinyModelSpec qwen2 = qwen2_head64();
    vkllm_model *m = tiny(qwen2, "tiled");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(36, qwen2.n_vocab, 19);
    std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
    auto eval_in_steps = [&](vkllm_session *s) {
        std::vector<std::vector<float>> ends;
        for (size_t i = 0; i < tokens.size(); i += 12) {
            ends.emplace_back(qwen2.n_vocab);
            EXPECT_EQ(vkllm_session_eval(s, 0, &tokens[i], 12, ends.back().data()), VKLLM_OK);
        }
        return ends;
    };
    rt_->context->kernels().set_attention_tiled(true);
    std::vector<std::vector<float>> got = eval_in_steps(session(m, 64, VKLLM_SESSION_KV_F32));
    for (size_t e = 0; e < got.size(); ++e)
        EXPECT_LE(max_abs_diff(got[e], want[e * 12 + 11]), 1e-4) << "step " << e;
    uint32_t ring_flags = VKLLM_SESSION_STREAMING | VKLLM_SESSION_KV_F32;
    std::vector<std::vector<float>> tiled = eval_in_steps(session(m, 20, ring_flags, 1, 12, 2));
    rt_->context->kernels().set_attention_tiled(false);
    std::vector<std::vector<float>> plain = eval_in_steps(session(m, 20, ring_flags, 1, 12, 2));
    for (size_t e = 0; e < tiled.size(); ++e)
        EXPECT_LE(max_abs_diff(tiled[e], plain[e]), 1e-5) << "step " << e;
}

TEST_F(Generation, CancellingAPrefillLeavesAUsableSession) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "cancel");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(30, spec.n_vocab, 13);
    vkllm_session *s = session(m, 64, 0, 1, 8);
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    int calls = 0;
    gp.user_data = &calls;
    gp.on_prefill = [](void *user, size_t done, size_t total) -> int32_t {
        ++*static_cast<int *>(user);
        return done >= 8 && done < total ? 1 : 0;
    };
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    EXPECT_EQ(vkllm_generate(s, prompt.data(), prompt.size(), nullptr, &gp, &r),
              VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(calls, 1);
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 8u) << "the first chunk stays in the cache";
    // The rest of the prompt gives the logits an uninterrupted prefill gives.
    std::vector<float> resumed(spec.n_vocab), whole(spec.n_vocab);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data() + 8, 22, resumed.data()), VKLLM_OK);
    vkllm_session *other = session(m, 64, 0, 1, 8);
    ASSERT_EQ(vkllm_session_eval(other, 0, prompt.data(), 30, whole.data()), VKLLM_OK);
    EXPECT_LE(max_abs_diff(resumed, whole), 1e-5);
}

// The ablation flag records every step anew (what the founding write-up measured against) and
// changes no result.
TEST_F(Generation, RecordEveryStepAblationRecordsEachStepAndGivesTheSameLogits) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "record_every_step", false);
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(12, spec.n_vocab, 4);
    vkllm_session *replayed = session(m, 64, VKLLM_SESSION_KV_F32);
    vkllm_session *recorded =
        session(m, 64, VKLLM_SESSION_KV_F32 | VKLLM_SESSION_RECORD_EVERY_STEP);
    std::vector<std::vector<float>> a = decode_each(replayed, tokens, spec.n_vocab);
    std::vector<std::vector<float>> b = decode_each(recorded, tokens, spec.n_vocab);
    for (size_t i = 0; i < tokens.size(); ++i)
        EXPECT_EQ(a[i], b[i]) << "step " << i;
    vkllm_session_stats sa, sb;
    sa.struct_size = sb.struct_size = sizeof sa;
    ASSERT_EQ(vkllm_session_get_stats(replayed, &sa), VKLLM_OK);
    ASSERT_EQ(vkllm_session_get_stats(recorded, &sb), VKLLM_OK);
    EXPECT_LE(sa.command_buffers_recorded, 2u);
    EXPECT_GE(sb.command_buffers_recorded, uint64_t(tokens.size()));
}

// A profiled session times every dispatch: each kernel the step runs is listed, the dispatch
// counts grow by the same amount every decode step, and no logit changes.
TEST_F(Generation, ProfileCountsEveryKernelsDispatchesAndChangesNoLogit) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "profile", false);
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(6, spec.n_vocab, 9);
    vkllm_session *plain = session(m, 64, VKLLM_SESSION_KV_F32);
    vkllm_session *profiled = session(m, 64, VKLLM_SESSION_KV_F32 | VKLLM_SESSION_PROFILE);
    size_t count = 0;
    EXPECT_EQ(vkllm_session_profile(plain, nullptr, 0, &count), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_profile(profiled, nullptr, 1, &count), VKLLM_ERR_INVALID_ARGUMENT);
    ASSERT_EQ(vkllm_session_profile(profiled, nullptr, 0, &count), VKLLM_OK);
    EXPECT_EQ(count, 0u) << "nothing has run yet";

    std::vector<std::vector<float>> a = decode_each(plain, tokens, spec.n_vocab);
    auto dispatches = [&](std::map<std::string, uint64_t> &out) {
        size_t n = 0;
        ASSERT_EQ(vkllm_session_profile(profiled, nullptr, 0, &n), VKLLM_OK);
        std::vector<vkllm_kernel_time> k(n);
        ASSERT_EQ(vkllm_session_profile(profiled, k.data(), k.size(), &n), VKLLM_OK);
        out.clear();
        for (size_t i = 0; i < n; ++i) {
            EXPECT_GE(k[i].ms, 0.0) << k[i].kernel;
            if (i > 0) {
                EXPECT_LE(k[i].ms, k[i - 1].ms) << "most time first";
            }
            out[k[i].kernel] = k[i].dispatches;
        }
    };
    std::vector<std::map<std::string, uint64_t>> after(tokens.size());
    std::vector<float> l(spec.n_vocab);
    uint32_t seq = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        ASSERT_EQ(vkllm_session_decode(profiled, &seq, &tokens[i], 1, l.data()), VKLLM_OK);
        EXPECT_EQ(l, a[i]) << "step " << i;
        dispatches(after[i]);
    }
    // Per layer one matvec for q, k and v together (their stacked matrix), one each for the o
    // and down projections, one for gate and up together with the SwiGLU fused in; and the
    // output head. Nothing element-wise is left (the residual adds are the o and down
    // projections' epilogues) and no RMS norm (each is applied by the projections that read
    // it).
    EXPECT_EQ(after[0]["matvec"] + after[0]["matvec_subgroup"] + after[0]["matvec_texel"] +
                  after[0]["matvec_texel_subgroup"],
              4u * spec.n_layer + 1);
    EXPECT_EQ(after[0].count("eltwise"), 0u);
    EXPECT_EQ(after[0].count("rms_norm"), 0u);
    for (const char *kernel : {"kv_store", "get_rows"})
        EXPECT_GT(after[0][kernel], 0u) << kernel;
    // No RoPE of its own: kv_store rotates K on its way into the cache and Q in place.
    EXPECT_EQ(after[0].count("rope"), 0u);
    EXPECT_EQ(after[0]["kv_store"], spec.n_layer);
    EXPECT_EQ(after[0]["attention"] + after[0]["attention_small_head"], spec.n_layer);
    for (size_t i = 1; i < tokens.size(); ++i)
        for (const auto &[kernel, n] : after[0])
            EXPECT_EQ(after[i][kernel], (i + 1) * n) << kernel << " after step " << i;
}

TEST_F(Generation, CommandBuffersAreRecordedOnceNotPerToken) {
    TinyModelSpec spec;
    spec.n_ctx = 512;
    vkllm_model *m = tiny(spec, "recording");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 256);
    std::vector<int32_t> prompt = some_tokens(10, spec.n_vocab, 17);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    uint32_t seq = 0;
    int32_t token = prompt.back();
    vkllm_session_stats st;
    st.struct_size = sizeof st;
    uint64_t after_first = 0;
    std::vector<float> l(spec.n_vocab);
    for (int i = 0; i < 200; ++i) {
        ASSERT_EQ(vkllm_session_decode(s, &seq, &token, 1, l.data()), VKLLM_OK);
        token = argmax_of(l);
        if (i == 0) {
            ASSERT_EQ(vkllm_session_get_stats(s, &st), VKLLM_OK);
            after_first = st.command_buffers_recorded;
        }
    }
    ASSERT_EQ(vkllm_session_get_stats(s, &st), VKLLM_OK);
    EXPECT_EQ(st.command_buffers_recorded, after_first) << "the decode step is replayed";
    EXPECT_LE(st.command_buffers_recorded, 2u);
    EXPECT_EQ(st.tokens_decoded, 200u);
    EXPECT_GE(st.submits, 201u);
    vkllm_session *second = session(m, 64);
    ASSERT_EQ(vkllm_session_eval(second, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    vkllm_model_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_model_get_info(m, &info), VKLLM_OK);
    EXPECT_EQ(info.rope_table_builds, 1u) << "the RoPE table is computed once per model";
}

TEST_F(Generation, GreedyGenerateFollowsTheArgmaxAndStopsAsAsked) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "generate");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(6, spec.n_vocab, 19);
    std::vector<int32_t> want = ref::greedy(*reference_, prompt, 12);
    struct Seen {
        std::vector<int32_t> ids;
        std::string text;
    } seen;
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 12;
    gp.user_data = &seen;
    gp.on_token = [](void *user, int32_t token, const char *text, size_t len) -> int32_t {
        auto *s = static_cast<Seen *>(user);
        if (token >= 0) s->ids.push_back(token);
        s->text.append(text, len);
        return 0;
    };
    vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32);
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK)
        << vkllm_last_error();
    // The tiny vocabulary's end token (2) may end it early: compare what was generated.
    ASSERT_GE(want.size(), seen.ids.size());
    std::vector<int32_t> head(want.begin(), want.begin() + long(seen.ids.size()));
    EXPECT_EQ(seen.ids, head);
    EXPECT_EQ(r.n_generated, seen.ids.size());
    EXPECT_TRUE(r.stop_reason == VKLLM_STOP_MAX_TOKENS ||
                r.stop_reason == VKLLM_STOP_END_OF_GENERATION);

    // A stop string ends generation before it: the text up to it, nothing of it.
    ASSERT_GE(seen.ids.size(), 4u) << "the tiny model ended too early for this check";
    char piece[64];
    size_t len = 0;
    ASSERT_EQ(
        vkllm_token_to_piece(vkllm_model_tokenizer(m), seen.ids[2], 0, piece, sizeof piece, &len),
        VKLLM_OK);
    std::string stop(piece, len);
    const char *stops[] = {stop.c_str()};
    Seen stopped;
    gp.user_data = &stopped;
    gp.stop = stops;
    gp.n_stop = 1;
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    ASSERT_EQ(vkllm_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_STRING);
    EXPECT_EQ(stopped.text, seen.text.substr(0, seen.text.find(stop)));
    gp.stop = nullptr;
    gp.n_stop = 0;

    // Sampling with a seed reproduces; another seed differs (over 16 tokens at temperature 2).
    auto sample = [&](uint64_t seed) {
        Seen out;
        vkllm_sampling_params p;
        vkllm_sampling_params_init(&p);
        p.temperature = 2.0f;
        p.top_k = 0, p.top_p = 1.0f, p.min_p = 0.0f;
        p.seed = seed;
        gp.user_data = &out;
        gp.max_tokens = 16;
        EXPECT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        EXPECT_EQ(vkllm_generate(s, prompt.data(), prompt.size(), &p, &gp, nullptr), VKLLM_OK);
        return out.ids;
    };
    EXPECT_EQ(sample(42), sample(42));
    EXPECT_NE(sample(42), sample(43));

    // A callback that says stop cancels, with the result filled in.
    gp.on_token = [](void *, int32_t, const char *, size_t) -> int32_t { return 1; };
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    EXPECT_EQ(vkllm_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(r.n_generated, 1u);
}

// max_tokens 0 prefills the prompt and nothing else: no token sampled or streamed, the position
// moved on by the prompt. A prompt prefilled so, in two parts, then answered, gives the tokens
// one generate of the whole prompt gives.
TEST_F(Generation, GenerateWithZeroMaxTokensOnlyPrefills) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "prefill_only", false);
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(9, spec.n_vocab, 31);
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    std::vector<int32_t> calls;  // every on_token call's token (-1: held text at the end)
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.user_data = &calls;
    gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
        static_cast<std::vector<int32_t> *>(user)->push_back(token);
        return 0;
    };
    vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32);
    vkllm_generate_result r;
    r.struct_size = sizeof r;

    gp.max_tokens = 4;
    ASSERT_EQ(vkllm_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK)
        << vkllm_last_error();
    std::vector<int32_t> want = calls;
    ASSERT_FALSE(want.empty());

    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    calls.clear();
    gp.max_tokens = 0;
    const size_t parts[][2] = {{0, 4}, {4, 7}};  // [first, last) of the prompt
    for (const auto &part : parts) {
        ASSERT_EQ(vkllm_generate(s, prompt.data() + part[0], part[1] - part[0], &sp, &gp, &r),
                  VKLLM_OK)
            << vkllm_last_error();
        EXPECT_TRUE(calls.empty()) << "a token was streamed";
        EXPECT_EQ(r.n_prompt, part[1] - part[0]);
        EXPECT_EQ(r.n_generated, 0u);
        EXPECT_EQ(r.stop_reason, VKLLM_STOP_MAX_TOKENS);
        uint32_t pos = 0;
        ASSERT_EQ(vkllm_session_position(s, 0, &pos), VKLLM_OK);
        EXPECT_EQ(pos, part[1]) << "the previous position plus the prompt";
    }

    gp.max_tokens = 4;
    ASSERT_EQ(vkllm_generate(s, prompt.data() + 7, prompt.size() - 7, &sp, &gp, &r), VKLLM_OK)
        << vkllm_last_error();
    EXPECT_EQ(calls, want);
}

// With ignore_eog an end token is streamed and decoded like any other: the tokens are the
// reference's greedy continuation straight through it, one step per submission or chained.
TEST_F(Generation, IgnoringEndTokensGeneratesThroughThemAsTheReferenceDoes) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "ignore_eog");
    ASSERT_NE(m, nullptr);
    const int32_t kEos = 2;  // the tiny vocabulary's end token
    const size_t kTokens = 16;
    // A prompt whose greedy continuation reaches the end token after a few tokens, found among
    // a few hundred.
    std::vector<int32_t> prompt, want;
    size_t end_at = kTokens;
    for (uint32_t seed = 1; seed < 400 && (end_at < 2 || end_at + 4 >= kTokens); ++seed) {
        prompt = some_tokens(4, spec.n_vocab, seed);
        want = ref::greedy(*reference_, prompt, int(kTokens));
        end_at = size_t(std::find(want.begin(), want.end(), kEos) - want.begin());
    }
    ASSERT_TRUE(end_at >= 2 && end_at + 4 < kTokens)
        << "no prompt of the tiny model reaches its end token early";
    int32_t is_eog = 0;
    ASSERT_EQ(vkllm_token_is_end_of_generation(vkllm_model_tokenizer(m), kEos, &is_eog), VKLLM_OK);
    ASSERT_EQ(is_eog, 1);

    vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32);
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    auto run = [&](int32_t ignore_eog, uint32_t steps_per_submit, vkllm_generate_result &r) {
        std::vector<int32_t> ids;
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = uint32_t(kTokens);
        gp.ignore_eog = ignore_eog;
        gp.steps_per_submit = steps_per_submit;
        gp.user_data = &ids;
        gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
            if (token >= 0) static_cast<std::vector<int32_t> *>(user)->push_back(token);
            return 0;
        };
        r.struct_size = sizeof r;
        EXPECT_EQ(vkllm_session_reset(s, -1), VKLLM_OK);
        EXPECT_EQ(vkllm_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK)
            << vkllm_last_error();
        return ids;
    };
    vkllm_generate_result r;
    std::vector<int32_t> head(want.begin(), want.begin() + long(end_at));
    EXPECT_EQ(run(0, 1, r), head) << "by default the end token ends it, unstreamed";
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_END_OF_GENERATION);
    for (uint32_t steps : {1u, 4u}) {
        EXPECT_EQ(run(1, steps, r), want) << steps << " steps per submission";
        EXPECT_EQ(r.stop_reason, VKLLM_STOP_MAX_TOKENS);
        EXPECT_EQ(r.n_generated, kTokens);
        uint32_t pos = 0;
        EXPECT_EQ(vkllm_session_position(s, 0, &pos), VKLLM_OK);
        EXPECT_EQ(pos, prompt.size() + kTokens - 1) << "the end token was decoded too";
    }
}

TEST_F(Generation, LoadReportsProgressAndCanBeAbortedWithoutLeaking) {
    TinyModelSpec spec;
    std::string path = temp_path("progress");
    write_tiny_model(path, spec);
    vkllm_runtime_stats before;
    before.struct_size = sizeof before;
    ASSERT_EQ(vkllm_runtime_stats_get(rt_, &before), VKLLM_OK);
    std::vector<float> seen;
    vkllm_model_params mp;
    vkllm_model_params_init(&mp);
    mp.progress_user_data = &seen;
    mp.progress = [](void *user, float p) -> int32_t {
        static_cast<std::vector<float> *>(user)->push_back(p);
        return 0;
    };
    vkllm_model *m = nullptr;
    ASSERT_EQ(vkllm_model_load(rt_, path.c_str(), &mp, &m), VKLLM_OK);
    vkllm_model_destroy(m);
    ASSERT_GT(seen.size(), 5u);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_FLOAT_EQ(seen.back(), 1.0f);
    mp.progress = [](void *, float p) -> int32_t { return p > 0.5f; };
    m = reinterpret_cast<vkllm_model *>(0x1);
    EXPECT_EQ(vkllm_model_load(rt_, path.c_str(), &mp, &m), VKLLM_ERR_CANCELLED);
    EXPECT_EQ(m, reinterpret_cast<vkllm_model *>(0x1));
    vkllm_runtime_stats after;
    after.struct_size = sizeof after;
    ASSERT_EQ(vkllm_runtime_stats_get(rt_, &after), VKLLM_OK);
    EXPECT_EQ(after.device_memory_allocated, before.device_memory_allocated);
    std::remove(path.c_str());
}

TEST_F(Generation, UnknownArchitecturesTensorTypesAndMismatchedTensorsAreNamed) {
    auto try_load = [&](const GgufBuilder &b, std::string *msg) {
        std::string path = temp_path("unsupported");
        std::vector<uint8_t> bytes = b.finish();
        std::ofstream(path, std::ios::binary | std::ios::trunc)
            .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
        vkllm_model *m = nullptr;
        vkllm_status s = vkllm_model_load(rt_, path.c_str(), nullptr, &m);
        *msg = vkllm_last_error();
        vkllm_model_destroy(m);
        std::remove(path.c_str());
        return s;
    };
    std::string msg;
    GgufBuilder mamba;
    mamba.kv_string("general.architecture", "mamba");
    EXPECT_EQ(try_load(mamba, &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("mamba"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gemma3"), std::string::npos) << "the refusal names what is supported";

    // A tensor type GGUF knows but the kernels do not read (Q3_K), after tensors that were
    // already uploaded: refused by name and type, and their memory is given back.
    GgufBuilder q3k;
    q3k.kv_string("general.architecture", "llama");
    q3k.kv_u32("llama.embedding_length", 256);
    q3k.kv_u32("llama.block_count", 1);
    q3k.kv_u32("llama.attention.head_count", 4);
    q3k.kv_u32("llama.feed_forward_length", 256);
    q3k.kv_string("tokenizer.ggml.model", "llama");
    q3k.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
    q3k.tensor("token_embd.weight", 0, {256, 4}, std::vector<uint8_t>(256 * 4 * 4));
    q3k.tensor("blk.0.attn_norm.weight", 0, {256}, std::vector<uint8_t>(256 * 4));
    q3k.tensor("blk.0.attn_q.weight", 11, {256, 256}, std::vector<uint8_t>(110 * 256));
    vkllm_runtime_stats before, after;
    before.struct_size = after.struct_size = sizeof before;
    ASSERT_EQ(vkllm_runtime_stats_get(rt_, &before), VKLLM_OK);
    EXPECT_EQ(try_load(q3k, &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("blk.0.attn_q.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Q3_K"), std::string::npos) << msg;
    ASSERT_EQ(vkllm_runtime_stats_get(rt_, &after), VKLLM_OK);
    EXPECT_EQ(after.device_memory_allocated, before.device_memory_allocated);

    // A file whose tensors do not fit its hyper-parameters is malformed, and says where.
    auto llama = [](std::vector<uint64_t> embd_dims) {
        GgufBuilder b;
        b.kv_string("general.architecture", "llama");
        b.kv_u32("llama.embedding_length", 8);
        b.kv_u32("llama.block_count", 1);
        b.kv_u32("llama.attention.head_count", 2);
        b.kv_u32("llama.feed_forward_length", 16);
        b.kv_string("tokenizer.ggml.model", "llama");
        b.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
        b.tensor("token_embd.weight", 0, embd_dims,
                 std::vector<uint8_t>(embd_dims[0] * embd_dims[1] * 4));
        b.tensor("blk.0.attn_norm.weight", 0, {8}, std::vector<uint8_t>(32));
        return b;
    };
    EXPECT_EQ(try_load(llama({7, 4}), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("token_embd.weight"), std::string::npos) << msg;
    EXPECT_EQ(try_load(llama({8, 4}), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("blk.0.attn_q.weight is missing"), std::string::npos) << msg;
}

// Gemma 3 with every switch on: seven layers (0-4 and 6 local with a window of 8 and RoPE base
// 10000, 5 global with the file's base 10^6 and linear scaling 2), QK-norm, post-norms, the
// GELU gate, the embedding scale, heads of 32 that are not n_embd / n_head, a tied output.
// Decoded one by one and prefilled in chunks of 4 through 40 tokens (the local rings of
// 8 + 4 - 1 slots wrap), and decoded four sequences at once: every logit row against the CPU
// reference.
TEST_F(Generation, Gemma3LocalAndGlobalLayersMatchTheReference) {
    TinyModelSpec spec;
    spec.arch = "gemma3";
    spec.n_embd = 64, spec.n_head = 4, spec.n_head_kv = 2, spec.head_dim = 32, spec.n_ff = 96;
    spec.n_layer = 7;
    spec.sliding_window = 8;
    spec.rope_base = 1e6f;
    spec.rope_linear_factor = 2;
    spec.rms_eps = 1e-6f;
    spec.tied_output = true;
    vkllm_model *m = tiny(spec, "gemma3");
    ASSERT_NE(m, nullptr) << vkllm_last_error();
    std::vector<int32_t> tokens = some_tokens(40, spec.n_vocab, 5);
    std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
    vkllm_session *s = session(m, 64, VKLLM_SESSION_KV_F32, 1, 4);
    uint64_t local = 0, global = 0;
    ASSERT_EQ(vkllm_session_layer_kv_bytes(s, 0, &local), VKLLM_OK);
    ASSERT_EQ(vkllm_session_layer_kv_bytes(s, 5, &global), VKLLM_OK);
    EXPECT_EQ(local, uint64_t(8 + 4 - 1) * 2 * 32 * 4 * 2) << "a local layer keeps its window";
    EXPECT_EQ(global, uint64_t(64) * 2 * 32 * 4 * 2) << "a global layer keeps the context";
    std::vector<std::vector<float>> got = decode_each(s, tokens, spec.n_vocab);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        worst = std::max(worst, max_abs_diff(got[i], want[i]));
        largest = std::max(largest, max_abs(want[i]));
    }
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    std::vector<float> last(spec.n_vocab);
    ASSERT_EQ(vkllm_session_eval(s, 0, tokens.data(), tokens.size(), last.data()), VKLLM_OK);
    double prefill = max_abs_diff(last, want.back());
    std::printf("gemma3: max |logit| %.3g, decode error %.3g, chunked prefill error %.3g\n",
                largest, worst, prefill);
    double tol = 1e-4 * std::max(1.0, largest);
    EXPECT_LE(worst, tol);
    EXPECT_LE(prefill, tol);

    // Four sequences of different lengths, then 6 steps decoded together.
    vkllm_session *batch = session(m, 64, VKLLM_SESSION_KV_F32, 4, 4);
    std::vector<std::vector<int32_t>> seqs;
    std::vector<std::vector<float>> logits(4, std::vector<float>(spec.n_vocab));
    for (uint32_t q = 0; q < 4; ++q) {
        seqs.push_back(some_tokens(9 + 4 * q, spec.n_vocab, 21 + q));
        ASSERT_EQ(vkllm_session_eval(batch, q, seqs[q].data(), seqs[q].size(), logits[q].data()),
                  VKLLM_OK);
    }
    double batched = 0;
    for (int step = 0; step < 6; ++step) {
        uint32_t ids[4] = {0, 1, 2, 3};
        int32_t toks[4];
        for (uint32_t q = 0; q < 4; ++q)
            seqs[q].push_back(toks[q] = argmax_of(logits[q]));
        std::vector<float> all(4 * spec.n_vocab);
        ASSERT_EQ(vkllm_session_decode(batch, ids, toks, 4, all.data()), VKLLM_OK)
            << vkllm_last_error();
        for (uint32_t q = 0; q < 4; ++q) {
            logits[q].assign(all.begin() + q * spec.n_vocab, all.begin() + (q + 1) * spec.n_vocab);
            std::vector<float> ref_last = ref::forward_logits(*reference_, seqs[q]).back();
            batched = std::max(batched, max_abs_diff(logits[q], ref_last));
        }
    }
    std::printf("gemma3: batched decode error %.3g\n", batched);
    EXPECT_LE(batched, tol);
}
