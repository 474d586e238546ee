// Mixture-of-experts kernels against per-token CPU computation: the router's choices and
// weights (ref::route, both architectures' orders), the grouping of entries by expert, and the
// grouped expert products (each expert's matrix once over its group) against the ungrouped
// product of every token with each of its chosen experts, then the weighted combination.
// Expert weights are F32 (exact reference) and MXFP4/Q4_K blocks (compared with their CPU
// dequantization). Tolerance as the matrix kernels: 1e-5 * sum |w x| + 1e-6.
#include <cmath>
#include <cstring>
#include <random>

#include "format/quant.h"
#include "moe_fixture.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;

// Qwen3-MoE's routing (Qwen3-30B-A3B: 8 of 128 experts, softmax then top-k, the k weights
// renormalised to sum to 1) against the reference's.
TEST_F(MoeTest, RenormalisedRoutingWeightsSumToOneAsTheReferenceDoes) {
    const uint32_t n_expert = 128, k = 8;
    for (uint32_t n_tokens : {1u, 9u}) {
        std::vector<float> l = logits(n_tokens, n_expert, 40 + n_tokens);
        Routed want = cpu_route(l, n_tokens, n_expert, k, ref::Routing::softmax_then_top_k, true);
        uint64_t words = moe_route_words(n_tokens, k, n_expert);
        Buffer lb = upload(l), rb = floats(words);
        run([&](Recording &r) {
            kernels().moe_route(r, lb.range(), rb.range(), n_tokens, n_expert, k,
                                Gating::SoftmaxTopK, true);
        });
        std::vector<int32_t> got = read_route(rb, words);
        uint32_t nk = n_tokens * k;
        for (uint32_t t = 0; t < n_tokens; ++t) {
            double sum = 0;
            for (uint32_t j = 0; j < k; ++j) {
                uint32_t e = t * k + j;
                ASSERT_EQ(got[e], want.experts[e]) << "entry " << e;
                float w;
                std::memcpy(&w, &got[nk + e], 4);
                ASSERT_NEAR(w, want.weights[e], 1e-6) << "entry " << e;
                sum += w;
            }
            EXPECT_NEAR(sum, 1.0, 1e-5) << "token " << t;
        }
    }
}

TEST_F(MoeTest, RouterPicksTheArchitecturesExpertsAndGroupsThem) {
    const uint32_t n_expert = 32, k = 4;
    for (ref::Routing routing :
         {ref::Routing::softmax_then_top_k, ref::Routing::top_k_then_softmax})
        for (uint32_t n_tokens : {1u, 7u, 64u}) {
            std::vector<float> l = logits(n_tokens, n_expert, n_tokens);
            Routed want = cpu_route(l, n_tokens, n_expert, k, routing);
            uint64_t words = moe_route_words(n_tokens, k, n_expert);
            Buffer lb = upload(l), rb = floats(words);
            Gating g = routing == ref::Routing::softmax_then_top_k ? Gating::SoftmaxTopK
                                                                   : Gating::TopKSoftmax;
            run([&](Recording &r) {
                kernels().moe_route(r, lb.range(), rb.range(), n_tokens, n_expert, k, g, false);
            });
            std::vector<int32_t> got = read_route(rb, words);
            uint32_t nk = n_tokens * k;
            for (uint32_t e = 0; e < nk; ++e) {
                ASSERT_EQ(got[e], want.experts[e]) << "entry " << e << " of " << n_tokens;
                float w;
                std::memcpy(&w, &got[nk + e], 4);
                ASSERT_NEAR(w, want.weights[e], 1e-6) << "entry " << e;
            }
            // Groups: offsets are the prefix sums of the counts, and each expert's group lists
            // exactly its entries in entry order.
            const int32_t *off = &got[2 * nk], *list = &got[2 * nk + n_expert + 1];
            ASSERT_EQ(off[0], 0);
            ASSERT_EQ(uint32_t(off[n_expert]), nk);
            for (uint32_t x = 0; x < n_expert; ++x) {
                std::vector<int32_t> mine;
                for (uint32_t e = 0; e < nk; ++e)
                    if (want.experts[e] == int(x)) mine.push_back(int32_t(e));
                ASSERT_EQ(std::vector<int32_t>(list + off[x], list + off[x + 1]), mine)
                    << "expert " << x;
            }
        }
}

// The grouped product (moe_matvec) equals each token times each of its chosen experts, for
// inputs shared by a token's entries (gate/up) and per entry (down), with expert biases, and
// the combination weights them as the router said. The types cover the texel kernel (F32, Q4_K
// and the grouped layouts the loader makes, whose experts of 37 rows end inside a group) and
// the storage-buffer one (MXFP4 as stored; and every type through the variant without texels).
TEST_F(MoeTest, GroupedExpertsEqualUngroupedPerTokenProducts) {
    const uint32_t n_expert = 8, k = 2, rows = 37, cols = 256;
    for (WeightType type : {WeightType::F32, WeightType::MXFP4, WeightType::Q4_K,
                            WeightType::MXFP4_G16, WeightType::Q8_0_G8}) {
        uint64_t count = uint64_t(n_expert) * rows * cols;
        auto [bytes, w] = expert_weights(type, count, 5);
        std::vector<float> bias = ref::random(size_t(n_expert) * rows, 8);
        Buffer wb = upload(bytes), bb = upload(bias);
        ExpertMatrix m{wb.range(), type, rows, cols, n_expert};
        for (uint32_t n_tokens : {1u, 5u, 33u}) {
            std::vector<float> l = logits(n_tokens, n_expert, 40 + n_tokens);
            Routed routed = cpu_route(l, n_tokens, n_expert, k, ref::Routing::top_k_then_softmax);
            uint32_t nk = n_tokens * k;
            std::vector<float> x = ref::random(size_t(n_tokens) * cols, 9 + n_tokens);
            std::vector<float> xe = ref::random(size_t(nk) * cols, 10 + n_tokens);
            Buffer lb = upload(l), rb = floats(moe_route_words(n_tokens, k, n_expert));
            Buffer xb = upload(x), xeb = upload(xe), yb = floats(size_t(nk) * rows),
                   ye = floats(size_t(nk) * rows), ob = floats(size_t(n_tokens) * rows);
            for (Kernels *kern : variants()) {
                run([&](Recording &r) {
                    kern->moe_route(r, lb.range(), rb.range(), n_tokens, n_expert, k,
                                    Gating::TopKSoftmax, false);
                    kern->moe_matvec(r, m, xb.range(), yb.range(), rb.range(), bb.range(), n_tokens,
                                     k, false);
                    kern->moe_matvec(r, m, xeb.range(), ye.range(), rb.range(), {}, n_tokens, k,
                                     true);
                    kern->moe_combine(r, yb.range(), rb.range(), {}, {}, ob.range(), n_tokens, rows,
                                      k);
                });
                std::vector<float> got = download(yb, size_t(nk) * rows);
                std::vector<float> got_e = download(ye, size_t(nk) * rows);
                std::vector<float> got_o = download(ob, size_t(n_tokens) * rows);
                for (uint32_t e = 0; e < nk; ++e) {
                    uint32_t t = e / k;
                    const float *we = &w[size_t(routed.experts[e]) * rows * cols];
                    for (uint32_t r = 0; r < rows; ++r) {
                        double s = 0, se = 0, mag = 0, mag_e = 0;
                        for (uint32_t c = 0; c < cols; ++c) {
                            double wv = we[size_t(r) * cols + c];
                            s += wv * x[size_t(t) * cols + c];
                            se += wv * xe[size_t(e) * cols + c];
                            mag += std::fabs(wv * x[size_t(t) * cols + c]);
                            mag_e += std::fabs(wv * xe[size_t(e) * cols + c]);
                        }
                        s += bias[size_t(routed.experts[e]) * rows + r];
                        ASSERT_NEAR(got[size_t(e) * rows + r], s, 1e-5 * mag + 1e-6)
                            << "type " << uint32_t(type) << " entry " << e << " row " << r;
                        ASSERT_NEAR(got_e[size_t(e) * rows + r], se, 1e-5 * mag_e + 1e-6)
                            << "type " << uint32_t(type) << " entry " << e << " row " << r;
                    }
                }
                for (uint32_t t = 0; t < n_tokens; ++t)
                    for (uint32_t r = 0; r < rows; ++r) {
                        double s = 0;
                        for (uint32_t j = 0; j < k; ++j)
                            s += routed.weights[t * k + j] * got[size_t(t * k + j) * rows + r];
                        ASSERT_NEAR(got_o[size_t(t) * rows + r], s, 1e-5 * (1 + std::fabs(s)))
                            << "combined token " << t;
                    }
            }
        }
    }
}

// An expert tensor larger than a storage binding (256 MXFP4 experts of 1023 x 1056, 147 MB) is
// bound in chunks of whole experts; each expert is 33,759 blocks, so experts start inside
// groups of 16 and a chunk may only start on every 16th expert. Tokens routed to experts on
// both sides of the chunk boundary (and the first expert of the second chunk) must get their
// experts' products: through the storage-buffer kernel in chunks, through texels whole.
TEST_F(MoeTest, ExpertsLargerThanABindingAreBoundInChunksStartingOnGroups) {
    const uint32_t n_expert = 256, k = 2, rows = 1023, cols = 1056, n_tokens = 2;
    const uint64_t expert_blocks = uint64_t(rows) * cols / 32, expert_bytes = expert_blocks * 17;
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    if (n_expert * expert_bytes <= limit)
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    std::vector<uint8_t> bytes(n_expert * expert_bytes);
    std::mt19937 rng(11);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = i % 17 == 0 ? uint8_t(120 + rng() % 8) : uint8_t(rng());
    // The chunks hold limit / expert_bytes experts rounded down to 16: the first chunk ends at
    // `edge`.
    const uint32_t edge = uint32_t(limit / expert_bytes) / 16 * 16;
    const int chosen[n_tokens][k] = {{int(edge) - 1, 7}, {int(edge), int(n_expert) - 1}};
    std::vector<float> l(size_t(n_tokens) * n_expert, 0.0f);
    for (uint32_t t = 0; t < n_tokens; ++t)
        for (uint32_t j = 0; j < k; ++j)
            l[size_t(t) * n_expert + chosen[t][j]] = 4.0f - float(j);
    std::vector<float> x = ref::random(size_t(n_tokens) * cols, 12);
    std::vector<uint8_t> grouped =
        group_blocks(WeightType::MXFP4, bytes.data(), n_expert * expert_blocks);
    Buffer wb = upload(grouped), lb = upload(l), xb = upload(x);
    Buffer rb = floats(moe_route_words(n_tokens, k, n_expert)), yb = floats(n_tokens * k * rows);
    ExpertMatrix m{wb.range(), WeightType::MXFP4_G16, rows, cols, n_expert};
    std::vector<float> w(size_t(rows) * cols);
    for (Kernels *kern : variants()) {
        run([&](Recording &r) {
            kern->moe_route(r, lb.range(), rb.range(), n_tokens, n_expert, k, Gating::TopKSoftmax,
                            false);
            kern->moe_matvec(r, m, xb.range(), yb.range(), rb.range(), {}, n_tokens, k, false);
        });
        std::vector<float> got = download(yb, size_t(n_tokens) * k * rows);
        for (uint32_t t = 0; t < n_tokens; ++t)
            for (uint32_t j = 0; j < k; ++j) {
                vkllm::format::dequantize_row(39, bytes.data() + chosen[t][j] * expert_bytes,
                                              w.data(), w.size());
                std::vector<float> xt(x.begin() + size_t(t) * cols,
                                      x.begin() + size_t(t + 1) * cols);
                std::vector<double> mag;
                std::vector<float> want = ref::matmul(w, xt, rows, cols, 1, &mag);
                for (uint32_t r = 0; r < rows; ++r) {
                    ASSERT_NEAR(got[(size_t(t) * k + j) * rows + r], want[r], 1e-5 * mag[r] + 1e-6)
                        << "token " << t << " expert " << chosen[t][j] << " row " << r;
                }
            }
    }
}

// moe_swiglu: act(gate x + gate bias, up x + up bias) per entry, fused into one texel pass where
// the texel kernel takes both tensors (F32, MXFP4_G16, Q8_0_G8) and otherwise two products
// and the element-wise op (MXFP4 as stored; every type through the variant without texels),
// with Qwen2-MoE's SwiGLU (no biases) and GPT-OSS's clamped form (biases), one token (lavapipe's
// row walk) and five. It must equal the CPU reference within the bound the two products carry
// through the activation; the inputs are large enough that the clamp at 7 matters.
TEST_F(MoeTest, FusedExpertSwiGluEqualsTheTwoProductsThenTheActivation) {
    const uint32_t n_expert = 8, k = 2, rows = 37, cols = 288;  // 9 units: a partial round
    for (WeightType type :
         {WeightType::F32, WeightType::MXFP4_G16, WeightType::Q8_0_G8, WeightType::MXFP4}) {
        uint64_t count = uint64_t(n_expert) * rows * cols;
        auto [gate_bytes, gw] = expert_weights(type, count, 21);
        auto [up_bytes, uw] = expert_weights(type, count, 22);
        Buffer gb = upload(gate_bytes), ub = upload(up_bytes);
        ExpertMatrix gate{gb.range(), type, rows, cols, n_expert};
        ExpertMatrix up{ub.range(), type, rows, cols, n_expert};
        std::vector<float> gbias = ref::random(size_t(n_expert) * rows, 23, -2, 2);
        std::vector<float> ubias = ref::random(size_t(n_expert) * rows, 24, -2, 2);
        Buffer gbb = upload(gbias), ubb = upload(ubias);
        for (bool oai : {false, true}) {
            Binary act = oai ? Binary::SwiGLUOai : Binary::SwiGLU;
            BufferRange gbr = oai ? gbb.range() : BufferRange{};
            BufferRange ubr = oai ? ubb.range() : BufferRange{};
            for (uint32_t n_tokens : {1u, 5u}) {
                uint32_t nk = n_tokens * k;
                std::vector<float> l = logits(n_tokens, n_expert, 50 + n_tokens);
                Routed routed =
                    cpu_route(l, n_tokens, n_expert, k, ref::Routing::top_k_then_softmax);
                std::vector<float> x = ref::random(size_t(n_tokens) * cols, 25 + n_tokens, -8, 8);
                Buffer lb = upload(l), rb = floats(moe_route_words(n_tokens, k, n_expert));
                Buffer xb = upload(x), yb = floats(size_t(nk) * rows),
                       upb = floats(size_t(nk) * rows);
                EXPECT_EQ(kernels().moe_swiglu_fusable(gate, up, xb.range(), gbr, ubr),
                          type != WeightType::MXFP4);
                for (Kernels *kern : variants()) {
                    run([&](Recording &r) {
                        kern->moe_route(r, lb.range(), rb.range(), n_tokens, n_expert, k,
                                        Gating::TopKSoftmax, false);
                        kern->moe_swiglu(r, gate, up, xb.range(), yb.range(), upb.range(),
                                         rb.range(), gbr, ubr, n_tokens, k, act);
                    });
                    std::vector<float> got = download(yb, size_t(nk) * rows);
                    for (uint32_t e = 0; e < nk; ++e) {
                        size_t ex = size_t(routed.experts[e]);
                        const float *xt = &x[size_t(e / k) * cols];
                        for (uint32_t r = 0; r < rows; ++r) {
                            double g = 0, u = 0, gm = 0, um = 0;
                            for (uint32_t c = 0; c < cols; ++c) {
                                double a = gw[(ex * rows + r) * cols + c] * double(xt[c]);
                                double b = uw[(ex * rows + r) * cols + c] * double(xt[c]);
                                g += a, u += b, gm += std::fabs(a), um += std::fabs(b);
                            }
                            if (oai) g += gbias[ex * rows + r], u += ubias[ex * rows + r];
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
                            double bound = gain_g * (1e-5 * gm + 1e-6) +
                                           gain_u * (1e-5 * um + 1e-6) + 1e-6 * std::fabs(want) +
                                           1e-7;
                            ASSERT_NEAR(got[size_t(e) * rows + r], want, bound)
                                << "type " << uint32_t(type) << (oai ? " oai" : " silu")
                                << " entry " << e << " row " << r;
                        }
                    }
                }
            }
        }
    }
}
