// Phi-3 (Phi-3/3.5-mini, Phi-4-mini) against the CPU reference on its tiny model of
// reference/tiny_archs.cpp: fused Q/K/V and gate/up, partial NEOX rotation, both LongRoPE
// tables chosen by the session's context, the attention factor, the sliding_window key
// llama.cpp ignores, quantized weights and a tied output.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "gguf_builder.h"
#include "reference/tiny_archs.h"
#include "tiny_model_fixture.h"

namespace {

TinyModelSpec phi3_spec() {
    for (const TinyArch &t : tiny_archs())
        if (t.name == "phi3") return t.spec;
    ADD_FAILURE() << "tiny_archs has no phi3";
    return {};
}

struct Errors {
    double decode = 0, prefill = 0, largest = 0;
};

}  // namespace

class ArchPhi3 : public TinyModelTest {
  protected:
    // Every row of per-token decode, and the last row of a prefill in chunks of 4, of a session
    // of n_ctx positions against the reference run for that context.
    Errors run(vkllm_model *m, uint32_t n_ctx, const std::vector<int32_t> &tokens,
               uint32_t n_vocab) {
        reference_->n_ctx = n_ctx;
        std::vector<std::vector<float>> want = ref::forward_logits(*reference_, tokens);
        vkllm_session *s = session(m, n_ctx, VKLLM_KV_F32, 0, 1, 4);
        Errors e;
        if (!s) return e;
        std::vector<std::vector<float>> got = decode_each(s, tokens, n_vocab);
        for (size_t i = 0; i < tokens.size(); ++i) {
            e.decode = std::max(e.decode, max_abs_diff(got[i], want[i]));
            e.largest = std::max(e.largest, max_abs(want[i]));
        }
        EXPECT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        std::vector<float> last(n_vocab);
        EXPECT_EQ(vkllm_session_eval(s, 0, tokens.data(), tokens.size(), last.data()), VKLLM_OK)
            << vkllm_last_error();
        e.prefill = max_abs_diff(last, want.back());
        return e;
    }
};

// A context above the original 256 positions takes the long factors, one of at most 256 (256
// itself included) the short ones, in decode and in chunked prefill; the two tables give logits
// far apart, so a session that took the wrong one would fail. The sliding_window key (16) is
// ignored, as llama.cpp ignores it: 40 tokens attend over all of them, and every layer keeps the
// whole context.
TEST_F(ArchPhi3, LongAndShortRopeFactorsFollowTheSessionContext) {
    TinyModelSpec spec = phi3_spec();
    vkllm_model *m = tiny(spec, "phi3");
    ASSERT_NE(m, nullptr) << vkllm_last_error();

    std::vector<int32_t> tokens = some_tokens(40, spec.n_vocab, 5);
    Errors lng = run(m, 257, tokens, spec.n_vocab);
    Errors shrt = run(m, 256, tokens, spec.n_vocab);
    std::printf("phi3 long factors (n_ctx 257): max |logit| %.3g, decode %.3g, prefill %.3g\n",
                lng.largest, lng.decode, lng.prefill);
    std::printf("phi3 short factors (n_ctx 256): max |logit| %.3g, decode %.3g, prefill %.3g\n",
                shrt.largest, shrt.decode, shrt.prefill);
    double tol = 1e-4 * std::max({1.0, lng.largest, shrt.largest});
    EXPECT_LE(lng.decode, tol);
    EXPECT_LE(lng.prefill, tol);
    EXPECT_LE(shrt.decode, tol);
    EXPECT_LE(shrt.prefill, tol);

    // The reference's two choices differ by far more than the tolerance.
    reference_->n_ctx = 257;
    std::vector<float> with_long = ref::forward_logits(*reference_, tokens).back();
    reference_->n_ctx = 256;
    std::vector<float> with_short = ref::forward_logits(*reference_, tokens).back();
    EXPECT_GT(max_abs_diff(with_long, with_short), 100 * tol);

    vkllm_session *s = session(m, 64, VKLLM_KV_F32, 0, 1, 4);
    uint64_t bytes = 0;
    for (uint32_t l = 0; l < spec.n_layer; ++l) {
        ASSERT_EQ(vkllm_session_get_layer_kv_bytes(s, l, &bytes), VKLLM_OK);
        EXPECT_EQ(bytes, uint64_t(64) * 2 * 16 * 4 * 2) << "layer " << l << " keeps the context";
    }
}

// Four sequences of different lengths decoded together (long factors: n_ctx 512), every row
// against the reference.
TEST_F(ArchPhi3, BatchedDecodeOfFourSequencesMatchesTheReference) {
    TinyModelSpec spec = phi3_spec();
    vkllm_model *m = tiny(spec, "phi3_batch");
    ASSERT_NE(m, nullptr) << vkllm_last_error();
    reference_->n_ctx = 512;
    vkllm_session *batch = session(m, 512, VKLLM_KV_F32, 0, 4, 4);
    ASSERT_NE(batch, nullptr);
    std::vector<std::vector<int32_t>> seqs;
    std::vector<std::vector<float>> logits(4, std::vector<float>(spec.n_vocab));
    double largest = 0, batched = 0;
    for (uint32_t q = 0; q < 4; ++q) {
        seqs.push_back(some_tokens(9 + 4 * q, spec.n_vocab, 21 + q));
        ASSERT_EQ(vkllm_session_eval(batch, q, seqs[q].data(), seqs[q].size(), logits[q].data()),
                  VKLLM_OK);
    }
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
            std::vector<float> want = ref::forward_logits(*reference_, seqs[q]).back();
            batched = std::max(batched, max_abs_diff(logits[q], want));
            largest = std::max(largest, max_abs(want));
        }
    }
    std::printf("phi3: batched decode error %.3g (max |logit| %.3g)\n", batched, largest);
    EXPECT_LE(batched, 1e-4 * std::max(1.0, largest));
}

// Quantized matrices (Q8_0, Q4_K: rows of whole 256-weight blocks, so the model is wider; short
// factors, n_ctx 64) with
// a tied output, as Phi-4-mini's: the fused Q/K/V and the two halves of ffn_up read as stored.
// Against the reference reading the same quantized file the error is the F32 arithmetic's
// (1e-4 of the largest logit, as the F32 model); against the F32 original of the same weights
// the difference is quantization's: Q8_0 within 3% of the largest logit, as the other
// architectures' quantized tests bound it; Q4_K within 50% rather than their 30%, since the
// tied embedding is quantized once and read twice (input rows and output head), so its 4-bit
// error enters twice (measured: 33%).
TEST_F(ArchPhi3, QuantizedTiedModelsMatchTheReferenceAndTrackTheirF32Original) {
    TinyModelSpec spec = phi3_spec();
    spec.n_embd = 256, spec.n_head = 4, spec.n_head_kv = 2, spec.n_ff = 256;
    spec.rot_dim = 48;  // 0.75 of the heads of 64, as Phi-4-mini's 96 of 128
    spec.tied_output = true;
    std::vector<int32_t> tokens = some_tokens(12, spec.n_vocab, 23);
    vkllm_model *f32 = tiny(spec, "phi3_quant_f32", false);
    ASSERT_NE(f32, nullptr) << vkllm_last_error();
    std::vector<std::vector<float>> base =
        decode_each(session(f32, 64, VKLLM_KV_F32), tokens, spec.n_vocab);
    struct Case {
        uint32_t type;
        const char *name;
        double max_rel_diff;
    };
    for (const Case &c : {Case{8, "Q8_0", 0.03}, Case{12, "Q4_K", 0.5}}) {
        spec.weight_type = c.type;
        vkllm_model *m = tiny(spec, std::string("phi3_") + c.name);
        ASSERT_NE(m, nullptr) << c.name << ": " << vkllm_last_error();
        Errors e = run(m, 64, tokens, spec.n_vocab);
        vkllm_session *s = session(m, 64, VKLLM_KV_F32);
        std::vector<std::vector<float>> got = decode_each(s, tokens, spec.n_vocab);
        double diff = 0, largest = 0;
        for (size_t i = 0; i < tokens.size(); ++i) {
            diff = std::max(diff, max_abs_diff(got[i], base[i]));
            largest = std::max(largest, max_abs(base[i]));
        }
        std::printf(
            "phi3 %s: vs reference decode %.3g, prefill %.3g; vs F32 weights %.3g of "
            "max |logit| %.3g\n",
            c.name, e.decode, e.prefill, diff, largest);
        EXPECT_LE(e.decode, 1e-4 * std::max(1.0, e.largest)) << c.name;
        EXPECT_LE(e.prefill, 1e-4 * std::max(1.0, e.largest)) << c.name;
        EXPECT_LE(diff, c.max_rel_diff * largest) << c.name;
    }
}

namespace {

// A minimal phi3 file (8 wide, one layer, heads of 4 rotated over all 4 dims, F32 weights of
// ones): LongRoPE factors as asked (long ones always; short ones when `short_factors`, of
// `factor_count` values each), and ffn_up of `up_rows` rows (2 n_ff = 32 in a good file).
GgufBuilder phi3_file(bool short_factors, uint64_t factor_count, uint64_t up_rows) {
    GgufBuilder b;
    b.kv_string("general.architecture", "phi3");
    b.kv_u32("phi3.context_length", 64);
    b.kv_u32("phi3.rope.scaling.original_context_length", 32);
    b.kv_u32("phi3.embedding_length", 8);
    b.kv_u32("phi3.feed_forward_length", 16);
    b.kv_u32("phi3.block_count", 1);
    b.kv_u32("phi3.attention.head_count", 2);
    b.kv_u32("phi3.attention.head_count_kv", 2);
    b.kv_f32("phi3.attention.layer_norm_rms_epsilon", 1e-5f);
    b.kv_u32("phi3.rope.dimension_count", 4);
    b.kv_f32("phi3.rope.freq_base", 10000.0f);
    b.kv_u32("phi3.attention.sliding_window", 0);
    b.kv_f32("phi3.rope.scaling.attn_factor", 1.1f);
    b.kv_string("tokenizer.ggml.model", "llama");
    b.kv_strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"});
    auto ones = [&](const std::string &name, std::vector<uint64_t> dims) {
        uint64_t n = 1;
        for (uint64_t d : dims)
            n *= d;
        std::vector<float> v(n, 1.0f);
        std::vector<uint8_t> bytes(n * 4);
        std::memcpy(bytes.data(), v.data(), bytes.size());
        b.tensor(name, 0, dims, bytes);
    };
    ones("rope_factors_long.weight", {factor_count});
    if (short_factors) ones("rope_factors_short.weight", {factor_count});
    ones("token_embd.weight", {8, 4});
    ones("blk.0.attn_norm.weight", {8});
    ones("blk.0.attn_qkv.weight", {8, 24});
    ones("blk.0.attn_output.weight", {8, 8});
    ones("blk.0.ffn_norm.weight", {8});
    ones("blk.0.ffn_up.weight", {8, up_rows});
    ones("blk.0.ffn_down.weight", {16, 8});
    ones("output_norm.weight", {8});
    return b;
}

}  // namespace

// A file with one LongRoPE table but not the other, factor tables of the wrong length, or an
// ffn_up that is not gate and up stacked is refused as malformed, naming the tensor; the same
// file with both tables of rot_dim / 2 factors and 2 n_ff rows loads.
TEST_F(ArchPhi3, MissingOrMisshapenFusedAndFactorTensorsAreNamed) {
    auto try_load = [&](const GgufBuilder &b, std::string *msg) {
        std::string path = temp_path("phi3_bad");
        std::vector<uint8_t> bytes = b.finish();
        std::ofstream(path, std::ios::binary | std::ios::trunc)
            .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
        vkllm_model *m = nullptr;
        vkllm_status st = vkllm_model_load(rt_, path.c_str(), nullptr, &m);
        *msg = st == VKLLM_OK ? "" : vkllm_last_error();
        vkllm_model_destroy(m);
        std::remove(path.c_str());
        return st;
    };
    std::string msg;
    EXPECT_EQ(try_load(phi3_file(true, 2, 32), &msg), VKLLM_OK) << msg;
    EXPECT_EQ(try_load(phi3_file(false, 2, 32), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("rope_factors_short.weight"), std::string::npos) << msg;
    EXPECT_EQ(try_load(phi3_file(true, 3, 32), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("rope_factors_short.weight must be 2 F32 values"), std::string::npos) << msg;
    EXPECT_EQ(try_load(phi3_file(true, 2, 16), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("blk.0.ffn_up.weight"), std::string::npos) << msg;
}
