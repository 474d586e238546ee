// The expert products of prefill on cooperative matrices (shaders/moe/moe_matmul_coopmat.comp)
// against each token's product with each of its chosen experts in double: every weight type
// the loader binds, experts of ragged rows, groups across tile edges and groups of one, experts
// nobody chose, inputs shared by a token's entries (gate/up) and per entry (down), biases,
// both tiles, the SwiGLU of two products, and experts bound in chunks. Steps of more than 8
// tokens take the kernel, smaller ones the matrix-vector kernels. The suites skip, saying why,
// where the build or the device has no cooperative matrices (Debian 12's Mesa 22 lavapipe);
// Mesa 26's lavapipe runs them: scripts/mesa26 run -- build/tests/test_kernels
// --gtest_filter='MoeCoopmat*'
//
// Tolerance: the f16-operand bound of tests/test_kernels_matmul_coopmat.cpp. With
// S = sum_c |x_c w_c|, A = sum_c (|x_c| + |w_c|) over a row of K = cols:
//   |err| <= (2^-9 + 2^-20 + 1.01 K 2^-24) S + 2^-23 A, plus 2^-23 (S + |b|) for a bias.
#include <cmath>
#include <set>
#include <string>

#include "moe_fixture.h"
#include "random_blocks.h"
#include "reference/attention_ref.h"
#include "shader_names.h"

using namespace vkllm::gpu;
using namespace vkllm::gpu::test_blocks;

namespace {

double f16_bound(double sum_abs, double sum_operands, uint32_t cols, double bias) {
    const double u = std::ldexp(1.0, -24);
    return (std::ldexp(1.0, -9) + std::ldexp(1.0, -20) + 1.01 * cols * u) * sum_abs +
           2 * u * sum_operands + 2 * u * (sum_abs + std::fabs(bias));
}

// One routing of a test: which experts each token chose.
struct Case {
    uint32_t n_expert, k, rows, cols, n_tokens;
    uint32_t tile;  // 32 or 64 (0: the kernel's choice)
    bool skewed;    // every token chooses expert 2 (a group of every token) and none chooses 5
};

class MoeCoopmatTest : public MoeTest {
  protected:
    void SetUp() override {
        MoeTest::SetUp();
        if (!shaders::kCoopmatShaders)
            GTEST_SKIP() << "built without the cooperative-matrix shaders (no glslang here "
                            "compiles GL_KHR_cooperative_matrix)";
        if (!ctx_->device().coopmat_enabled())
            GTEST_SKIP() << "the device cannot run the cooperative-matrix kernels: "
                         << ctx_->device().caps().coopmat.unusable;
        kernels().set_coopmat(true);
        ASSERT_TRUE(kernels().coopmat());
    }

    // `count` expert weights of any type as bound (whole 32-bit words), and their values.
    std::pair<std::vector<uint8_t>, std::vector<float>> weights(WeightType type, uint64_t count,
                                                                uint32_t seed) {
        if (block_weights(type) > 1) {
            auto r = random_blocks(type, count, seed);
            r.first.resize((r.first.size() + 3) / 4 * 4);
            return r;
        }
        std::vector<float> w = ref::random(count, seed), seen = w;
        std::vector<uint8_t> bytes;
        if (type == WeightType::F32) {
            bytes.resize(count * 4);
            std::memcpy(bytes.data(), w.data(), bytes.size());
        } else {
            std::vector<uint16_t> h =
                type == WeightType::F16 ? ref::to_f16(w, &seen) : ref::to_bf16(w, &seen);
            bytes.resize((h.size() * 2 + 3) / 4 * 4);
            std::memcpy(bytes.data(), h.data(), h.size() * 2);
        }
        return {bytes, seen};
    }

    // Router logits for `c`: random, or skewed.
    std::vector<float> case_logits(const Case &c, uint32_t seed) {
        std::vector<float> l = logits(c.n_tokens, c.n_expert, seed);
        if (c.skewed)
            for (uint32_t t = 0; t < c.n_tokens; ++t) {
                l[size_t(t) * c.n_expert + 2] = 9.0f;
                l[size_t(t) * c.n_expert + 5] = -9.0f;
            }
        return l;
    }

    // The kernels one recording of `body` dispatched, by shader name.
    std::set<std::string> kernels_run(const std::function<void(Recording &)> &body) {
        Recording prof(ctx_->device(), 256, true);
        prof.begin();
        body(prof);
        prof.end();
        prof.submit();
        std::set<std::string> names;
        for (const Timing &t : prof.timings())
            names.insert(t.label);
        return names;
    }

    // moe_matvec of `type` experts for case `c`, the token rows (gate/up) with expert biases
    // and the entry rows (down) without, each output within the f16 bound. Returns the kernels
    // that ran.
    std::set<std::string> check(WeightType type, const Case &c) {
        uint64_t count = uint64_t(c.n_expert) * c.rows * c.cols;
        auto [bytes, w] = weights(type, count, 5 + c.cols + c.n_tokens);
        std::vector<float> bias = ref::random(size_t(c.n_expert) * c.rows, 8);
        Buffer wb = upload(bytes), bb = upload(bias);
        ExpertMatrix m{wb.range(), type, c.rows, c.cols, c.n_expert};
        std::vector<float> l = case_logits(c, 40 + c.n_tokens);
        Routed routed = cpu_route(l, c.n_tokens, c.n_expert, c.k, ref::Routing::top_k_then_softmax);
        uint32_t nk = c.n_tokens * c.k;
        std::vector<float> x = ref::random(size_t(c.n_tokens) * c.cols, 9 + c.n_tokens);
        std::vector<float> xe = ref::random(size_t(nk) * c.cols, 10 + c.n_tokens);
        Buffer lb = upload(l), rb = floats(moe_route_words(c.n_tokens, c.k, c.n_expert));
        Buffer xb = upload(x), xeb = upload(xe), yb = floats(size_t(nk) * c.rows),
               ye = floats(size_t(nk) * c.rows);
        kernels().set_coopmat_tile(c.tile);
        std::set<std::string> ran = kernels_run([&](Recording &r) {
            kernels().moe_route(r, lb.range(), rb.range(), c.n_tokens, c.n_expert, c.k,
                                Gating::TopKSoftmax, false);
            kernels().moe_matvec(r, m, xb.range(), yb.range(), rb.range(), bb.range(), c.n_tokens,
                                 c.k, false);
            kernels().moe_matvec(r, m, xeb.range(), ye.range(), rb.range(), {}, c.n_tokens, c.k,
                                 true);
        });
        std::vector<float> got = download(yb, size_t(nk) * c.rows);
        std::vector<float> got_e = download(ye, size_t(nk) * c.rows);
        for (uint32_t e = 0; e < nk; ++e) {
            size_t ex = size_t(routed.experts[e]);
            const float *xt = &x[size_t(e / c.k) * c.cols], *xo = &xe[size_t(e) * c.cols];
            for (uint32_t r = 0; r < c.rows; ++r) {
                const float *wr = &w[(ex * c.rows + r) * c.cols];
                double s = 0, se = 0, mag = 0, mag_e = 0, ops = 0, ops_e = 0;
                for (uint32_t i = 0; i < c.cols; ++i) {
                    s += double(wr[i]) * xt[i];
                    se += double(wr[i]) * xo[i];
                    mag += std::fabs(double(wr[i]) * xt[i]);
                    mag_e += std::fabs(double(wr[i]) * xo[i]);
                    ops += std::fabs(wr[i]) + std::fabs(xt[i]);
                    ops_e += std::fabs(wr[i]) + std::fabs(xo[i]);
                }
                double b = bias[ex * c.rows + r];
                EXPECT_LE(std::fabs(got[size_t(e) * c.rows + r] - (s + b)),
                          f16_bound(mag, ops, c.cols, b))
                    << name(type) << " token rows: entry " << e << " (expert " << ex << ") row "
                    << r << " of " << c.n_tokens << " tokens, tile " << c.tile;
                EXPECT_LE(std::fabs(got_e[size_t(e) * c.rows + r] - se),
                          f16_bound(mag_e, ops_e, c.cols, 0))
                    << name(type) << " entry rows: entry " << e << " row " << r;
                if (::testing::Test::HasFailure()) return ran;
            }
        }
        return ran;
    }
};

}  // namespace

// Every block type (as stored and regrouped), F32, F16 and BF16: experts of 37 rows (a partial
// output tile) over 9 tokens (the fewest that take the kernel: groups of 1-4 entries) and 70
// (groups across a 32 tile's edge), types alternating between the tiles.
TEST_F(MoeCoopmatTest, EveryWeightTypeMatchesPerTokenProducts) {
    std::vector<WeightType> types{WeightType::F32, WeightType::F16, WeightType::BF16};
    types.insert(types.end(), std::begin(kQuantTypes), std::end(kQuantTypes));
    uint32_t i = 0;
    for (WeightType t : types) {
        uint32_t cols = block_weights(t) == 256 ? 256 : 96;
        uint32_t tile = i++ % 2 ? 64 : 32;
        for (uint32_t n_tokens : {9u, 70u}) {
            std::set<std::string> ran = check(t, Case{8, 2, 37, cols, n_tokens, tile, false});
            ASSERT_FALSE(HasFailure()) << name(t);
            EXPECT_EQ(ran.count(shaders::moe_matmul_coopmat), 1u) << name(t);
        }
    }
}

// A group of every token (expert 2, 150 entries: five tiles of 32, three of 64, the last
// partial) beside small groups and an expert nobody chose, with the tile the kernel picks too.
TEST_F(MoeCoopmatTest, GroupsSpanningSeveralTilesAndEmptyGroups) {
    for (uint32_t tile : {32u, 64u, 0u})
        check(WeightType::Q8_0, Case{16, 4, 70, 128, 150, tile, true});
}

// Steps of at most 8 tokens stay on the matrix-vector kernels (each chosen expert has a few
// entries); more take the coopmat kernel.
TEST_F(MoeCoopmatTest, StepsOfUpTo8TokensStayOnTheMatrixVectorKernels) {
    std::set<std::string> small = check(WeightType::Q4_K, Case{8, 2, 37, 256, 8, 0, false});
    EXPECT_EQ(small.count(shaders::moe_matmul_coopmat), 0u);
    bool matvec = false;
    for (const std::string &n : small)
        matvec |= n.rfind("moe_matvec", 0) == 0;
    EXPECT_TRUE(matvec);
    std::set<std::string> big = check(WeightType::Q4_K, Case{8, 2, 37, 256, 9, 0, false});
    EXPECT_EQ(big.count(shaders::moe_matmul_coopmat), 1u);
}

// moe_swiglu on the coopmat path: two products and the element-wise activation, Qwen2-MoE's
// SwiGLU without biases and GPT-OSS's clamped form with them, against the CPU reference within
// the bound the products' f16 error carries through the activation.
TEST_F(MoeCoopmatTest, ExpertSwiGluIsTheTwoProductsThenTheActivation) {
    const uint32_t n_expert = 8, k = 2, rows = 37, cols = 288, n_tokens = 20, nk = n_tokens * k;
    for (WeightType type : {WeightType::MXFP4_G16, WeightType::Q8_0}) {
        uint64_t count = uint64_t(n_expert) * rows * cols;
        auto [gate_bytes, gw] = weights(type, count, 21);
        auto [up_bytes, uw] = weights(type, count, 22);
        Buffer gb = upload(gate_bytes), ub = upload(up_bytes);
        ExpertMatrix gate{gb.range(), type, rows, cols, n_expert};
        ExpertMatrix up{ub.range(), type, rows, cols, n_expert};
        std::vector<float> gbias = ref::random(size_t(n_expert) * rows, 23, -2, 2);
        std::vector<float> ubias = ref::random(size_t(n_expert) * rows, 24, -2, 2);
        Buffer gbb = upload(gbias), ubb = upload(ubias);
        std::vector<float> l = logits(n_tokens, n_expert, 50);
        Routed routed = cpu_route(l, n_tokens, n_expert, k, ref::Routing::top_k_then_softmax);
        std::vector<float> x = ref::random(size_t(n_tokens) * cols, 25, -8, 8);
        Buffer lb = upload(l), rb = floats(moe_route_words(n_tokens, k, n_expert));
        Buffer xb = upload(x), yb = floats(size_t(nk) * rows), upb = floats(size_t(nk) * rows);
        for (bool oai : {false, true}) {
            Binary act = oai ? Binary::SwiGLUOai : Binary::SwiGLU;
            BufferRange gbr = oai ? gbb.range() : BufferRange{};
            BufferRange ubr = oai ? ubb.range() : BufferRange{};
            std::set<std::string> ran = kernels_run([&](Recording &r) {
                kernels().moe_route(r, lb.range(), rb.range(), n_tokens, n_expert, k,
                                    Gating::TopKSoftmax, false);
                kernels().moe_swiglu(r, gate, up, xb.range(), yb.range(), upb.range(), rb.range(),
                                     gbr, ubr, n_tokens, k, act);
            });
            EXPECT_EQ(ran.count(shaders::moe_matmul_coopmat), 1u);
            std::vector<float> got = download(yb, size_t(nk) * rows);
            for (uint32_t e = 0; e < nk; ++e) {
                size_t ex = size_t(routed.experts[e]);
                const float *xt = &x[size_t(e / k) * cols];
                for (uint32_t r = 0; r < rows; ++r) {
                    double g = 0, u = 0, gm = 0, um = 0, go = 0, uo = 0;
                    for (uint32_t c = 0; c < cols; ++c) {
                        double wg = gw[(ex * rows + r) * cols + c],
                               wu = uw[(ex * rows + r) * cols + c];
                        g += wg * xt[c], u += wu * xt[c];
                        gm += std::fabs(wg * xt[c]), um += std::fabs(wu * xt[c]);
                        go += std::fabs(wg) + std::fabs(xt[c]),
                            uo += std::fabs(wu) + std::fabs(xt[c]);
                    }
                    double gb0 = oai ? gbias[ex * rows + r] : 0,
                           ub0 = oai ? ubias[ex * rows + r] : 0;
                    g += gb0, u += ub0;
                    double want, gain_g, gain_u;  // the output's sensitivity to g and u
                    if (oai) {
                        double gc = std::min(g, 7.0), uc = std::min(std::max(u, -7.0), 7.0);
                        double sg = gc / (1 + std::exp(-1.702 * gc));
                        want = (uc + 1) * sg;
                        gain_g = 1.1 * std::fabs(uc + 1), gain_u = std::fabs(sg);
                    } else {
                        double silu = g / (1 + std::exp(-g));
                        want = silu * u;
                        gain_g = 1.1 * std::fabs(u), gain_u = std::fabs(silu);
                    }
                    double bound = gain_g * f16_bound(gm, go, cols, gb0) +
                                   gain_u * f16_bound(um, uo, cols, ub0) + 1e-6 * std::fabs(want) +
                                   1e-7;
                    ASSERT_NEAR(got[size_t(e) * rows + r], want, bound)
                        << name(type) << (oai ? " oai" : " silu") << " entry " << e << " row " << r;
                }
            }
        }
    }
}

// An expert tensor larger than a storage binding (256 MXFP4 experts of 1023 x 1056, 147 MB) is
// bound in chunks starting on every 16th expert (each expert is 33,759 blocks, so experts start
// inside groups of 16): ten tokens routed to experts on both sides of the chunk boundary, the
// first expert of the second chunk and the last, each get their experts' products.
TEST_F(MoeCoopmatTest, ExpertsLargerThanABindingAreBoundInChunks) {
    const uint32_t n_expert = 256, k = 2, rows = 1023, cols = 1056, n_tokens = 10;
    const uint64_t expert_blocks = uint64_t(rows) * cols / 32, expert_bytes = expert_blocks * 17;
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    if (n_expert * expert_bytes <= limit)
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    std::vector<uint8_t> bytes(n_expert * expert_bytes);
    std::mt19937 rng(11);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = i % 17 == 0 ? uint8_t(120 + rng() % 8) : uint8_t(rng());
    const uint32_t edge = uint32_t(limit / expert_bytes) / 16 * 16;
    const int pairs[2][2] = {{int(edge) - 1, 7}, {int(edge), int(n_expert) - 1}};
    std::vector<float> l(size_t(n_tokens) * n_expert, 0.0f);
    for (uint32_t t = 0; t < n_tokens; ++t)
        for (uint32_t j = 0; j < k; ++j)
            l[size_t(t) * n_expert + pairs[t % 2][j]] = 4.0f - float(j);
    std::vector<float> x = ref::random(size_t(n_tokens) * cols, 12);
    std::vector<uint8_t> grouped =
        group_blocks(WeightType::MXFP4, bytes.data(), n_expert * expert_blocks);
    Buffer wb = upload(grouped), lb = upload(l), xb = upload(x);
    Buffer rb = floats(moe_route_words(n_tokens, k, n_expert)), yb = floats(n_tokens * k * rows);
    ExpertMatrix m{wb.range(), WeightType::MXFP4_G16, rows, cols, n_expert};
    std::set<std::string> ran = kernels_run([&](Recording &r) {
        kernels().moe_route(r, lb.range(), rb.range(), n_tokens, n_expert, k, Gating::TopKSoftmax,
                            false);
        kernels().moe_matvec(r, m, xb.range(), yb.range(), rb.range(), {}, n_tokens, k, false);
    });
    EXPECT_EQ(ran.count(shaders::moe_matmul_coopmat), 1u);
    std::vector<float> got = download(yb, size_t(n_tokens) * k * rows);
    std::vector<float> w(size_t(rows) * cols);
    for (uint32_t p = 0; p < 2; ++p)
        for (uint32_t j = 0; j < k; ++j) {
            vkllm::format::dequantize_row(39, bytes.data() + pairs[p][j] * expert_bytes, w.data(),
                                          w.size());
            for (uint32_t t = p; t < n_tokens; t += 2)
                for (uint32_t r = 0; r < rows; ++r) {
                    double s = 0, mag = 0, ops = 0;
                    for (uint32_t c = 0; c < cols; ++c) {
                        s += double(w[size_t(r) * cols + c]) * x[size_t(t) * cols + c];
                        mag += std::fabs(double(w[size_t(r) * cols + c]) * x[size_t(t) * cols + c]);
                        ops +=
                            std::fabs(w[size_t(r) * cols + c]) + std::fabs(x[size_t(t) * cols + c]);
                    }
                    ASSERT_LE(std::fabs(got[(size_t(t) * k + j) * rows + r] - s),
                              f16_bound(mag, ops, cols, 0))
                        << "token " << t << " expert " << pairs[p][j] << " row " << r;
                }
        }
}
