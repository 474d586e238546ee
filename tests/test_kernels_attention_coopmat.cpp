// attention_coopmat.comp (prefill attention on cooperative matrices) against the CPU reference
// (reference/attention_ref.h), wherever the device and the build have cooperative matrices
// (Mesa 26's lavapipe: `VKLLM_COOPMAT=on scripts/mesa26 run -- build/tests/test_kernels
// --gtest_filter='AttentionCoopmat*'`); elsewhere the suite skips, saying why.
//
// Tolerance, from the kernel's f16 operands (unit roundoff u = 2^-11) and f32 arithmetic. Per
// output row (a token and a query head), with V the values it sees:
//   - the score of key j is (q * scale) . k_j with both operands rounded to f16 (F16 caches are
//     exact; F32 and Q8_0 values are rounded), summed in f32: its error is at most
//     delta_j = (2u + u^2 + D 2^-24) * scale * sum_i |q_i k_ji|; soft-capping (slope <= 1) does
//     not enlarge it. Scores off by at most delta = max_j delta_j move each softmax weight by a
//     factor within [e^-2delta, e^2delta], so the weights move by at most (e^2delta - 1) in sum,
//     and since they sum to 1 before and after, the output moves by at most
//     (e^2delta - 1) * max|V| (the sink logit is exact: a key with value 0);
//   - each weight exp(s - max) is rounded to f16 (relative u, and the sum takes the rounded
//     weights: 2u * max|V|), or flushed below f16's normal range (at most 2^-25 each, against a
//     sum of at least 1: n_keys * 2^-24 * max|V|);
//   - V rounded to f16 (F32, Q8_0 caches): u * max|V|;
//   - f32 sums and exponentials: 1e-5, as for the f32 kernels (test_kernels_attention.cpp).
// So |got - want| <= max|V| ((e^2delta - 1) + 3u + n_keys 2^-24) + 1e-5, computed per row from
// the test's own values. A key masked or kept by mistake, or a wrong value row, moves an
// output by about its weight (1/n of a range of 2): far beyond it at these lengths.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>

#include "attention_fixture.h"
#include "shader_names.h"

using namespace vkllm::gpu;

namespace {

const double kU = 1.0 / 2048;  // f16's unit roundoff

class AttentionCoopmat : public AttentionFixture {
  protected:
    void SetUp() override {
        AttentionFixture::SetUp();
        if (!shaders::kCoopmatShaders)
            GTEST_SKIP() << "the build has no cooperative-matrix shaders (no glslang here "
                            "compiles GL_KHR_cooperative_matrix)";
        const CoopmatCaps &cm = ctx_->device().caps().coopmat;
        if (!ctx_->device().coopmat_enabled())
            GTEST_SKIP() << ctx_->device().info().name << " cannot run them: " << cm.unusable;
        kernels().set_attention_coopmat(true);
    }

    struct Case {
        ref::AttnShape s;
        uint32_t n_seq = 1;
        KvType kv = KvType::F16;
        uint32_t window = 0;  // the push constant; the reference sees it as a later kv_begin
        bool sinks = false;   // GPT-OSS's sink logits
        float q_gain = 1;     // larger queries: sharper softmax, soft-capping that bites
    };

    using Edit = std::function<void(std::vector<float> &q, std::vector<float> &k)>;

    // Random q and caches (q and K changed by `edit` where given), the kernel against the
    // reference within the tolerance above.
    void check(Case c, const Step &st, const std::string &what, const Edit &edit = nullptr) {
        ref::AttnShape &s = c.s;
        s.scale = double(float(1.0 / std::sqrt(double(s.head_dim))));
        uint32_t n = uint32_t(st.pos.size()), d = s.head_dim;
        size_t kv_dim = size_t(s.n_kv_heads) * d;
        size_t kv_elems = size_t(c.n_seq) * s.capacity * kv_dim;
        std::vector<float> q = ref::random(size_t(n) * s.n_heads * d, 71 + n);
        for (float &x : q)
            x *= c.q_gain;
        std::vector<float> k = ref::random(kv_elems, 72 + d), ks, vs;
        if (edit) edit(q, k);
        Buffer kb = cache(k, c.kv, d, ks);
        Buffer vb = cache(ref::random(kv_elems, 73 + s.capacity), c.kv, d, vs);
        Buffer qb = upload(q), ob = floats(q.size());
        Uploaded sb = upload_step(st);
        Step seen = st;
        for (size_t t = 0; t < n && c.window; ++t)
            seen.begin[t] = std::max(st.begin[t], st.pos[t] - int32_t(c.window) + 1);
        std::vector<float> want =
            ref::attention(q, ks, vs, seen.pos, seen.seq, seen.begin, s, c.n_seq);
        std::vector<float> sink_values = sink_logits(s.n_heads, 19 + d);
        Buffer sinks = upload(sink_values);
        if (c.sinks) add_sink_logits(want, q, ks, seen, s, c.n_seq, sink_values);

        AttentionShape sh = shape(s, n, c.kv);
        sh.window = c.window;
        sh.prefill = true;
        ASSERT_TRUE(kernels().attention_coopmat(sh, c.n_seq))
            << what << ": the kernel does not take it";
        run([&](Recording &r) {
            r.fill(ob.range(), 0x7fc00000u);  // NaN: every output must be written
            kernels().attention(r, qb.range(), kb.range(), vb.range(), ob.range(), sb.view(), sh,
                                c.sinks ? sinks.range() : BufferRange{});
        });
        std::vector<float> got = download(ob, q.size());

        double worst = 0;  // the largest error over its bound
        size_t worst_at = 0;
        for (size_t t = 0; t < n; ++t) {
            bool sees = st.pos[t] >= 0 && st.seq[t] >= 0 && st.seq[t] < int32_t(c.n_seq);
            std::vector<int64_t> vis;
            if (sees) vis = ref::visible_positions(seen.pos[t], seen.begin[t], s.n_sink);
            for (uint32_t h = 0; h < s.n_heads; ++h) {
                size_t kvh = h / (s.n_heads / s.n_kv_heads);
                double dot_abs = 0, v_max = 0;
                for (int64_t p : vis) {
                    size_t row =
                        (size_t(st.seq[t]) * s.capacity + ref::kv_slot(p, s.capacity, s.n_sink)) *
                            kv_dim +
                        kvh * d;
                    double a = 0;
                    for (size_t i = 0; i < d; ++i) {
                        a += std::fabs(double(q[(t * s.n_heads + h) * d + i]) * ks[row + i]);
                        v_max = std::max(v_max, double(std::fabs(vs[row + i])));
                    }
                    dot_abs = std::max(dot_abs, a);
                }
                double delta = (2 * kU + kU * kU + d * std::ldexp(1.0, -24)) * s.scale * dot_abs;
                double tol = v_max * (std::expm1(2 * delta) + 3 * kU +
                                      double(vis.size()) * std::ldexp(1.0, -24)) +
                             1e-5;
                for (size_t i = 0; i < d; ++i) {
                    size_t at = (t * s.n_heads + h) * d + i;
                    double err = std::fabs(double(got[at]) - want[at]);
                    double excess = err / tol;
                    if (!(excess <= worst)) worst = excess, worst_at = at;  // NaN fails too
                }
            }
        }
        EXPECT_LE(worst, 1.0) << what << ": output " << worst_at << " is " << got[worst_at]
                              << ", want " << want[worst_at] << " (error " << worst
                              << " times its bound)";
    }

    // `n` prefill tokens of sequence `seq` from position `first`, each seeing what the ring of
    // `s` still holds.
    static void prefill(Step &st, const ref::AttnShape &s, int32_t first, uint32_t n,
                        int32_t seq = 0) {
        int32_t ring = int32_t(s.capacity - s.n_sink);
        for (int32_t p = first; p < first + int32_t(n); ++p) {
            st.pos.push_back(p), st.seq.push_back(seq);
            st.begin.push_back(std::max(int32_t(s.n_sink), p - ring + 1));
        }
    }
};

}  // namespace

// Prefill chunks whose lengths fall on either side of the tiles' edges (rows of 8 to 64 tokens,
// keys in tiles of 8 to 32 on the shapes the host picks), from the start of a sequence and
// from the middle of one.
TEST_F(AttentionCoopmat, LengthsAcrossTileEdgesMatchTheReference) {
    ref::AttnShape s{4, 2, 64, 160, 0, 0};
    for (uint32_t n : {9u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u}) {
        for (int32_t first : {0, 37}) {
            Step st;
            prefill(st, s, first, n);
            check(Case{s}, st, "length " + std::to_string(n) + " from " + std::to_string(first));
        }
    }
}

// The query heads per KV head of the tiny models (1: GPT-2; 2: Llama, Qwen2, Qwen2-MoE,
// GPT-OSS, stories260K) at their head sizes (64, 32, 16, 8), and the larger groups of real
// ones (4: Gemma 3; 7: Qwen2.5-0.5B; 8: Llama 3) at 64 and 128: all the heads of a group in
// one workgroup, or in blocks of the rows (7 in 8-row tiles leaves rows unused).
TEST_F(AttentionCoopmat, EveryGqaRatioReadsItsKvHead) {
    struct Heads {
        uint32_t heads, kv_heads, dim;
    };
    for (Heads h : {Heads{2, 2, 64}, Heads{4, 2, 64}, Heads{4, 2, 32}, Heads{4, 2, 16},
                    Heads{8, 4, 8}, Heads{4, 1, 64}, Heads{14, 2, 64}, Heads{8, 1, 128}}) {
        ref::AttnShape s{h.heads, h.kv_heads, h.dim, 64, 0, 0};
        Step st;
        prefill(st, s, 20, 27);
        check(Case{s}, st,
              std::to_string(h.heads) + "/" + std::to_string(h.kv_heads) + " heads of " +
                  std::to_string(h.dim));
    }
}

// Sliding windows over a ring that has wrapped (positions far past the capacity), with sink
// positions kept beside them and GPT-OSS's sink logits; two sequences meeting inside a tile of
// tokens, a decode-like token of a third and one that sees nothing (position -1).
TEST_F(AttentionCoopmat, WindowsThatWrapTheRingWithSinks) {
    for (uint32_t n_sink : {0u, 4u}) {
        ref::AttnShape s{4, 2, 64, 40, n_sink, 0};
        Step st;
        prefill(st, s, 130, 21, 0);
        prefill(st, s, 55, 19, 1);
        st.pos.push_back(3), st.seq.push_back(2), st.begin.push_back(int32_t(n_sink));
        st.pos.push_back(-1), st.seq.push_back(0), st.begin.push_back(int32_t(n_sink));
        for (uint32_t window : {0u, 13u, 24u}) {
            for (bool sinks : {false, true}) {
                Case c{s, 3};
                c.window = window, c.sinks = sinks;
                check(c, st,
                      "sinks " + std::to_string(n_sink) + " window " + std::to_string(window) +
                          (sinks ? " with sink logits" : ""));
            }
        }
    }
}

// Gemma 2's soft-capping on scores made large (queries 6 times larger: scores ~20 against a cap
// of 5), at Gemma's heads of 256 and at 64.
TEST_F(AttentionCoopmat, SoftCappedScoresMatchTheReference) {
    for (uint32_t d : {64u, 256u}) {
        ref::AttnShape s{4, 2, d, 48, 0, 0};
        s.softcap = 5.0;
        Step st;
        prefill(st, s, 10, 24);
        Case c{s};
        c.q_gain = 6;
        check(c, st, "soft cap, heads of " + std::to_string(d));
    }
}

// Each KV cache type, dequantized to f16 as the tiles load, at head sizes across the range:
// 72 and 200 (not multiples of a 16-wide shape: padded with zero columns there), 128, 256.
TEST_F(AttentionCoopmat, EveryKvTypeAndHeadSize) {
    for (uint32_t d : {72u, 128u, 200u, 256u}) {
        ref::AttnShape s{4, 2, d, 48, 2, 0};
        Step st;
        prefill(st, s, 30, 19);
        for (KvType kv : kv_types(d)) {
            Case c{s};
            c.kv = kv;
            check(c, st,
                  "heads of " + std::to_string(d) + ", kv type " + std::to_string(uint32_t(kv)));
        }
    }
}

// A cache of 32768 positions: each workgroup walks a thousand tiles of keys or more, so a
// loop cut short by llvmpipe's iteration limit would drop the latest keys; the key at the last
// token's own position is made to dominate its query head 0 (weight > 99%), so missing it could
// not pass.
TEST_F(AttentionCoopmat, LongContextUsesEveryKey) {
    const uint32_t cap = 32768, d = 64, n = 12;
    ref::AttnShape s{4, 2, d, cap, 0, 0};
    Step st;
    prefill(st, s, int32_t(cap - n), n);
    check(Case{s}, st, "long context", [&](std::vector<float> &q, std::vector<float> &k) {
        size_t row = size_t(cap - 1) * 2 * d;  // the last position's slot, KV head 0
        for (uint32_t i = 0; i < d; ++i)
            k[row + i] = q[(n - 1) * 4 * d + i] > 0 ? 4.0f : -4.0f;  // a score of ~16
    });
}

// VKLLM_COOPMAT's default takes the kernel for prefill steps of more than 8 tokens on GPUs (a
// GPU's kernel shapes here), never for decode steps; forcing it off takes the tiled kernel.
TEST_F(AttentionCoopmat, GpusTakeItForPrefillStepsOnly) {
    const char *mode = std::getenv("VKLLM_COOPMAT");
    if (mode && std::strcmp(mode, "off") == 0) GTEST_SKIP() << "VKLLM_COOPMAT=off";
    Kernels gpu(ctx_->device(), ctx_->pipelines(), DeviceClass::Gpu);
    AttentionShape sh{9, 14, 2, 64, 4096, 0, KvType::F16, 0.125f, 0, true};
    EXPECT_TRUE(gpu.attention_coopmat(sh));
    sh.n_tokens = 8;
    EXPECT_FALSE(gpu.attention_coopmat(sh));
    sh.n_tokens = 512;
    sh.prefill = false;
    EXPECT_FALSE(gpu.attention_coopmat(sh));
    sh.prefill = true;
    sh.head_dim = 20;  // attention_small_head.comp's
    EXPECT_FALSE(gpu.attention_coopmat(sh));
    sh.head_dim = 64;
    gpu.set_attention_coopmat(false);
    EXPECT_FALSE(gpu.attention_coopmat(sh));
    EXPECT_TRUE(gpu.attention_tiled(sh));
}
