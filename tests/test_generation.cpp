// The engine end to end on tiny random models written by the tests: logits against the CPU
// reference, the KV cache against recomputation, batched decode, the ring and the streaming
// window, context limits, the kernels' other paths inside a session, Gemma 3's layer pattern
// (the generation loop: test_generation_loop.cpp).
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
    // The F32 attention kernels; the cooperative-matrix one (f16 operands) keeps the reference's
    // greedy ids in test_generation_reference.cpp.
    rt_->context->kernels().set_attention_coopmat(false);
    for (const Case &c : cases) {
        vkllm_model *m = tiny(c.spec, c.name);
        ASSERT_NE(m, nullptr) << c.name;
        vkllm_session *s = session(m, 64, VKLLM_KV_F32);
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
        EXPECT_LE(prefill_err, prefill_bound(c.tol * std::max(1.0, largest), largest)) << c.name;
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
    rt_->context->kernels().set_attention_coopmat(false);  // F32 attention, as above
    vkllm_model *f32 = tiny(spec, "quant_f32", false);
    ASSERT_NE(f32, nullptr);
    std::vector<std::vector<float>> base =
        decode_each(session(f32, 64, VKLLM_KV_F32), tokens, spec.n_vocab);
    for (const Case &c : cases) {
        spec.weight_type = c.type;
        vkllm_model *m = tiny(spec, std::string("quant_") + c.name);
        ASSERT_NE(m, nullptr) << c.name;
        vkllm_session *s = session(m, 64, VKLLM_KV_F32);
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
        EXPECT_LE(prefill_err, prefill_bound(1e-4 * std::max(1.0, largest), largest)) << c.name;
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

// A Q8_0 KV cache (kv_type VKLLM_KV_Q8_0): logits track the F32 cache within the error of 8-bit
// K/V (printed), and the cache takes (head_dim + 16) / (2 head_dim) of F16's bytes.
TEST_F(Generation, Q8_0KvCacheTracksTheF32CacheInLessMemory) {
    TinyModelSpec spec = qwen2_head64();
    vkllm_model *m = tiny(spec, "kv_q8");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(40, spec.n_vocab, 5);
    vkllm_session *f32 = session(m, 64, VKLLM_KV_F32);
    vkllm_session *f16 = session(m, 64);
    vkllm_session *q8 = session(m, 64, VKLLM_KV_Q8_0);
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
    p.kv_type = VKLLM_KV_Q8_0;
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(vkllm_last_error()).find("head_dim"), std::string::npos)
        << vkllm_last_error();
    p.kv_type = vkllm_kv_type(3);
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("kv_type"), std::string::npos)
        << vkllm_last_error();
    p.kv_type = VKLLM_KV_F16;
    // The flag bits that were the cache type before 0.3 are refused, not read as F16.
    for (uint32_t old_kv_flag : {0x1u, 0x4u}) {
        p.flags = old_kv_flag;
        EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(vkllm_last_error()).find("kv_type"), std::string::npos)
            << vkllm_last_error();
    }
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
    rt_->context->kernels().set_attention_coopmat(false);  // the same F32 arithmetic both ways
    vkllm_session *cached = session(m, 64, VKLLM_KV_F32);
    std::vector<std::vector<float>> step = decode_each(cached, tokens, spec.n_vocab);
    vkllm_session *fresh = session(m, 64, VKLLM_KV_F32);
    double worst = 0, largest = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        ASSERT_EQ(vkllm_session_reset(fresh, 0), VKLLM_OK);
        std::vector<float> all(spec.n_vocab);
        ASSERT_EQ(vkllm_session_eval(fresh, 0, tokens.data(), i + 1, all.data()), VKLLM_OK);
        worst = std::max(worst, max_abs_diff(step[i], all));
        largest = std::max(largest, max_abs(step[i]));
    }
    std::printf("cached decode vs recompute: max difference %.3g\n", worst);
    EXPECT_LE(worst, prefill_bound(1e-4, largest));
}

TEST_F(Generation, BatchedDecodeOfFourSequencesEqualsFourSeparateRuns) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "batched");
    ASSERT_NE(m, nullptr);
    vkllm_session *batch = session(m, 64, VKLLM_KV_F16, 0, 4);
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
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 10u);
    ASSERT_EQ(vkllm_session_eval(s, 0, t.data(), 6, nullptr), VKLLM_OK);
    uint32_t seq = 0;
    std::vector<float> l(spec.n_vocab);
    EXPECT_EQ(vkllm_session_decode(s, &seq, &t[0], 1, l.data()), VKLLM_ERR_CONTEXT_FULL);
    int32_t bad = int32_t(spec.n_vocab);
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    EXPECT_EQ(vkllm_session_eval(s, 0, &bad, 1, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
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
    vkllm_session *s = session(m, capacity, VKLLM_KV_F32, VKLLM_SESSION_STREAMING, 1, 0, sinks);
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
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
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
    vkllm_session *s = session(m, 64, VKLLM_KV_F32, 0, 2);
    std::vector<int32_t> tokens = some_tokens(30, qwen2.n_vocab, 17);
    std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
    std::vector<std::vector<float>> got = decode_each(s, tokens, qwen2.n_vocab, 1);
    double worst = 0;
    for (size_t i = 0; i < tokens.size(); ++i)
        worst = std::max(worst, max_abs_diff(got[i], want[i]));
    EXPECT_LE(worst, 1e-4);
    // A streaming ring of 12 slots wrapping under split-K: the same as without.
    vkllm_session *ring = session(m, 12, VKLLM_KV_F32, VKLLM_SESSION_STREAMING, 1, 0, 4);
    std::vector<std::vector<float>> split = decode_each(ring, tokens, qwen2.n_vocab);
    rt_->context->kernels().set_attention_splits(0);
    vkllm_session *plain = session(m, 12, VKLLM_KV_F32, VKLLM_SESSION_STREAMING, 1, 0, 4);
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
        vkllm_session *s = session(m, 64, VKLLM_KV_F32);
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
    std::vector<std::vector<float>> got = eval_in_steps(session(m, 64, VKLLM_KV_F32));
    for (size_t e = 0; e < got.size(); ++e)
        EXPECT_LE(max_abs_diff(got[e], want[e * 12 + 11]),
                  prefill_bound(1e-4, max_abs(want[e * 12 + 11])))
            << "step " << e;
    uint32_t ring_flags = VKLLM_SESSION_STREAMING;
    std::vector<std::vector<float>> tiled =
        eval_in_steps(session(m, 20, VKLLM_KV_F32, ring_flags, 1, 12, 2));
    rt_->context->kernels().set_attention_tiled(false);
    rt_->context->kernels().set_attention_coopmat(false);  // the one-token-per-workgroup kernel
    std::vector<std::vector<float>> plain =
        eval_in_steps(session(m, 20, VKLLM_KV_F32, ring_flags, 1, 12, 2));
    for (size_t e = 0; e < tiled.size(); ++e)
        EXPECT_LE(max_abs_diff(tiled[e], plain[e]), prefill_bound(1e-5, max_abs(plain[e])))
            << "step " << e;
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
    for (const char *served : {"llama", "qwen2", "qwen3", "gpt2", "qwen2moe", "gpt-oss", "gemma2",
                               "gemma3", "olmo2", "phi3", "qwen3moe", "smollm3", "granite"})
        EXPECT_NE(msg.find(served), std::string::npos) << "the refusal names " << served;

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
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &before), VKLLM_OK);
    EXPECT_EQ(try_load(q3k, &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("blk.0.attn_q.weight"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Q3_K"), std::string::npos) << msg;
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &after), VKLLM_OK);
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
    vkllm_session *s = session(m, 64, VKLLM_KV_F32, 0, 1, 4);
    uint64_t local = 0, global = 0;
    ASSERT_EQ(vkllm_session_get_layer_kv_bytes(s, 0, &local), VKLLM_OK);
    ASSERT_EQ(vkllm_session_get_layer_kv_bytes(s, 5, &global), VKLLM_OK);
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
    vkllm_session *batch = session(m, 64, VKLLM_KV_F32, 0, 4, 4);
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
