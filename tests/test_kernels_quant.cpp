// Block-quantized weights read as GGUF stores them, in the matrix-vector (decode), matrix-matrix
// (prefill) and row-gather (embedding) kernels. The weights are random blocks (random quants,
// sane random scales), so every bit of every field matters; the reference is the CPU
// dequantization of the same bytes (format/quant.h) followed by a double-precision product, and
// the tolerance is the F32 one (1e-5 * sum_k |w_k x_k| + 1e-6 per output): the shaders must
// decode every weight exactly.
#include <cmath>

#include "gpu_fixture.h"
#include "random_blocks.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;
using namespace vkllm::gpu::test_blocks;

namespace {

class QuantKernelTest : public GpuTest {
  protected:
    // Checks matvec on every kernel variant (or the tiled matmul) for random blocks of `t`.
    void check_product(WeightType t, uint32_t rows, uint32_t cols, uint32_t n, bool use_matmul) {
        auto [data, w] = random_blocks(t, uint64_t(rows) * cols, rows * 31 + cols);
        data.resize((data.size() + 3) / 4 * 4);  // bound in whole 32-bit words
        Buffer wb = upload(data);
        Matrix m{wb.range(), t, rows, cols};
        std::vector<float> x = ref::random(size_t(n) * cols, 5 + n);
        std::vector<double> scale;
        std::vector<float> want = ref::matmul(w, x, rows, cols, n, &scale);
        Buffer xb = upload(x), yb = floats(want.size());
        std::vector<Kernels *> ks = variants();
        if (use_matmul) ks.resize(1);
        for (size_t v = 0; v < ks.size(); ++v) {
            run([&](Recording &rec) {
                if (use_matmul)
                    ks[v]->matmul(rec, m, xb.range(), yb.range(), n);
                else
                    ks[v]->matvec(rec, m, xb.range(), yb.range(), n);
            });
            std::vector<float> got = download(yb, want.size());
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_LE(std::fabs(double(got[i]) - want[i]), 1e-5 * scale[i] + 1e-6)
                    << name(t) << " output " << i << " of " << rows << "x" << cols << " n=" << n
                    << (use_matmul ? " matmul" : " matvec variant ") << v;
        }
    }
};

// Row lengths: one block, a few, and a real model's (896 = 28 blocks of 32; K-quants need
// multiples of 256: 256, 768, 4864). Row counts are not multiples of any workgroup's rows, and
// Q4_0's 18-, Q5_0's 22-, Q8_0's 34-, Q6_K's 210- and MXFP4's 17-byte blocks start rows at every
// byte alignment.
std::vector<uint32_t> row_lengths(WeightType t) {
    if (block_weights(t) == 256) return {256, 768, 4864};
    return {32, 96, 896};
}

}  // namespace

TEST_F(QuantKernelTest, MatvecDecodesEveryBlockTypeExactly) {
    for (WeightType t : kQuantTypes)
        for (uint32_t cols : row_lengths(t))
            for (uint32_t rows : {1u, 37u, 131u})
                check_product(t, rows, cols, 1, false);
}

TEST_F(QuantKernelTest, BatchedMatvecDecodesEveryBlockTypeExactly) {
    // 5 vectors: two workgroups of 3 in z, the second repeating its last vector.
    for (WeightType t : kQuantTypes)
        check_product(t, 45, row_lengths(t)[1], 5, false);
}

TEST_F(QuantKernelTest, MatmulDecodesEveryBlockTypeExactly) {
    for (WeightType t : kQuantTypes) {
        check_product(t, 33, row_lengths(t)[0], 5, true);
        check_product(t, 70, row_lengths(t)[1], 40, true);
    }
}

TEST_F(QuantKernelTest, GetRowsGathersEveryBlockType) {
    for (WeightType t : kQuantTypes) {
        const uint32_t rows = 23, cols = row_lengths(t)[1];
        auto [data, table] = random_blocks(t, uint64_t(rows) * cols, 3);
        data.resize((data.size() + 3) / 4 * 4);
        std::vector<int32_t> ids = {0, 22, 7, 7, 23, -1, 11};
        Buffer qb = upload(data), ib = upload(ids), ob = floats(ids.size() * cols);
        run([&](Recording &r) {
            kernels().get_rows(r, Matrix{qb.range(), t, rows, cols}, ib.range(), ob.range(),
                               uint32_t(ids.size()));
        });
        std::vector<float> got = download(ob, ids.size() * cols);
        std::vector<float> want = ref::get_rows(table, rows, cols, ids);
        for (size_t i = 0; i < got.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << name(t) << " value " << i;
    }
}

// Q6_K rows of 2560 weights are 2100 bytes, not a multiple of the binding alignment: the row
// chunks of a matrix larger than maxStorageBufferRange must start on rows that keep it.
TEST_F(QuantKernelTest, Q6_KWeightLargerThanStorageBufferRangeIsSplit) {
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    const uint32_t cols = 2560;
    uint32_t rows = uint32_t(limit / (cols / 256 * 210)) + 13;
    if (uint64_t(rows) * cols / 256 * 210 > (uint64_t(1) << 31))
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    check_product(WeightType::Q6_K, rows, cols, 1, false);
    check_product(WeightType::Q6_K_G8, rows, cols, 1, false);  // chunks start on groups too
}

// Rows of 27 Q8_0 blocks end inside a group of 8: chunks must start on rows that start a group
// (every 8th row) and keep the binding alignment.
TEST_F(QuantKernelTest, GroupedQ8_0WeightLargerThanStorageBufferRangeIsSplitOnGroups) {
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    const uint32_t cols = 27 * 32;
    uint32_t rows = uint32_t(limit / (cols / 32 * 34)) + 13;
    if (uint64_t(rows) * cols / 32 * 34 > (uint64_t(1) << 31))
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    check_product(WeightType::Q8_0_G8, rows, cols, 1, false);
}

// linear_swiglu: silu(gate x) * (up x), and Gemma's gelu_tanh(gate x) * (up x), fused into one
// texel matvec for the grouped types (decode, and lavapipe's prefill in groups of 8 rows), or
// two products and the element-wise unit (K-quants; the tiled matmul on GPUs). Either way it
// must equal the CPU reference within the bound the two products carry through the unit (the
// slope of silu and of gelu_tanh stays below 1.2).
TEST_F(QuantKernelTest, FusedSwiGluAndGeGluEqualTheTwoProjectionsThenTheGatedUnit) {
    const uint32_t rows = 70;
    for (WeightType t :
         {WeightType::Q8_0_G8, WeightType::Q4_0_G8, WeightType::Q5_0_G8, WeightType::Q6_K_G8,
          WeightType::Q4_K, WeightType::Q5_K, WeightType::Q4_1_G8, WeightType::Q5_1_G8}) {
        uint32_t cols = row_lengths(t)[1];
        auto [gate_data, gw] = random_blocks(t, uint64_t(rows) * cols, 3);
        auto [up_data, uw] = random_blocks(t, uint64_t(rows) * cols, 4);
        gate_data.resize((gate_data.size() + 3) / 4 * 4);
        up_data.resize((up_data.size() + 3) / 4 * 4);
        Buffer gb = upload(gate_data), ub = upload(up_data);
        Matrix gate{gb.range(), t, rows, cols}, up{ub.range(), t, rows, cols};
        for (uint32_t n : {1u, 3u, 20u}) {
            std::vector<float> x = ref::random(size_t(n) * cols, 9 + n);
            std::vector<double> gs, us;
            std::vector<float> g = ref::matmul(gw, x, rows, cols, n, &gs);
            std::vector<float> u = ref::matmul(uw, x, rows, cols, n, &us);
            Buffer xb = upload(x), yb = floats(g.size()), upb = floats(g.size());
            for (Kernels *k : variants()) {
                for (Binary glu : {Binary::SwiGLU, Binary::GeGLU}) {
                    run([&](Recording &rec) {
                        k->linear_swiglu(rec, gate, up, xb.range(), yb.range(), upb.range(), n, {},
                                         glu);
                    });
                    std::vector<float> got = download(yb, g.size());
                    for (size_t i = 0; i < got.size(); ++i) {
                        double gd = g[i];
                        double act =
                            glu == Binary::GeGLU ? ref::gelu_tanh(gd) : gd / (1 + std::exp(-gd));
                        double want = act * u[i];
                        double bound = 1.2 * std::fabs(u[i]) * (1e-5 * gs[i] + 1e-6) +
                                       std::fabs(act) * (1e-5 * us[i] + 1e-6) +
                                       1e-6 * std::fabs(want) + 1e-7;
                        ASSERT_LE(std::fabs(got[i] - want), bound)
                            << name(t) << (glu == Binary::GeGLU ? " GeGLU" : " SwiGLU")
                            << " output " << i << " n=" << n
                            << (k->cpu_shapes() ? " lavapipe shapes" : " GPU shapes");
                    }
                }
            }
        }
    }
}

// An InputNorm: linear() normalises x itself (rms_norm(x) * weight, without its pass) and must
// equal the CPU rms_norm followed by the product, on every path that can fuse it: the one-vector
// row walk (896 columns: its split tail; 96: none) and round robin (4864), a batch (n = 3),
// lavapipe's groups of 8 rows (n = 20), each device class's shapes, and the fused SwiGLU. x has an
// RMS far from 1, so a norm left out or applied twice cannot pass.
TEST_F(QuantKernelTest, NormFusedIntoTheLinearEqualsRmsNormThenTheLinear) {
    const uint32_t rows = 70;
    const float eps = 1e-6f;
    int fused = 0;
    for (WeightType t : {WeightType::Q8_0_G8, WeightType::Q4_0_G8, WeightType::Q5_0_G8,
                         WeightType::Q6_K_G8, WeightType::Q4_K}) {
        // The norm's code is the same for every type: the real model widths, and for one type
        // also a row without a split tail.
        std::vector<uint32_t> widths{row_lengths(t)[2]};
        if (t == WeightType::Q8_0_G8) widths.push_back(row_lengths(t)[1]);
        for (uint32_t cols : widths) {
            auto [data, w] = random_blocks(t, uint64_t(rows) * cols, 5 + cols);
            auto [up_data, uw] = random_blocks(t, uint64_t(rows) * cols, 6 + cols);
            Buffer wb = upload(data), ub = upload(up_data);
            Matrix m{wb.range(), t, rows, cols}, up{ub.range(), t, rows, cols};
            std::vector<float> gamma = ref::random(cols, 7, 0.5f, 1.5f);
            Buffer gb = upload(gamma);
            for (uint32_t n : {1u, 3u, 20u}) {
                std::vector<float> x = ref::random(size_t(n) * cols, 8 + n, -4.0f, 4.0f);
                std::vector<float> xn = ref::rms_norm(x, gamma, n, cols, eps);
                std::vector<double> scale, us;
                std::vector<float> want = ref::matmul(w, xn, rows, cols, n, &scale);
                std::vector<float> u = ref::matmul(uw, xn, rows, cols, n, &us);
                Buffer xb = upload(x), yb = floats(want.size()), upb = floats(want.size());
                InputNorm norm{gb.range(), eps};
                for (Kernels *k : variants()) {
                    if (!k->norm_fusable(m, xb.range(), gb.range(), n)) continue;
                    ++fused;
                    std::string where = name(t) + " cols " + std::to_string(cols) + " n " +
                                        std::to_string(n) +
                                        (k->cpu_shapes() ? " lavapipe shapes" : " GPU shapes");
                    run([&](Recording &r) {
                        k->linear(r, m, xb.range(), yb.range(), n, Epilogue{}, norm);
                    });
                    std::vector<float> got = download(yb, want.size());
                    for (size_t i = 0; i < got.size(); ++i)
                        ASSERT_LE(std::fabs(double(got[i]) - want[i]), 1e-5 * scale[i] + 1e-6)
                            << where << " output " << i;
                    run([&](Recording &r) {
                        k->linear_swiglu(r, m, up, xb.range(), yb.range(), upb.range(), n, norm);
                    });
                    got = download(yb, want.size());
                    for (size_t i = 0; i < got.size(); ++i) {
                        double g = want[i], silu = g / (1 + std::exp(-g)), v = silu * u[i];
                        double bound = 1.1 * std::fabs(u[i]) * (1e-5 * scale[i] + 1e-6) +
                                       std::fabs(silu) * (1e-5 * us[i] + 1e-6) +
                                       1e-6 * std::fabs(v) + 1e-7;
                        ASSERT_LE(std::fabs(got[i] - v), bound) << where << " SwiGLU output " << i;
                    }
                }
            }
        }
    }
    // Every type and width fuses in both device classes' shapes for n = 1 and 3, and in
    // lavapipe's for n = 20 (GPUs take the tiled matmul there; the storage-buffer variant never
    // fuses).
    EXPECT_EQ(fused, 6 * 5);
}

// A norm is refused where the kernel cannot apply it (the storage-buffer kernel), rather than
// left out.
TEST_F(QuantKernelTest, NormWhereTheKernelCannotApplyItIsRefused) {
    auto [data, w] = random_blocks(WeightType::Q8_0_G8, 32 * 96, 1);
    Buffer wb = upload(data), xb = floats(96), gb = floats(96), yb = floats(32);
    Matrix m{wb.range(), WeightType::Q8_0_G8, 32, 96};
    Kernels *storage = variants()[2];
    EXPECT_FALSE(storage->norm_fusable(m, xb.range(), gb.range(), 1));
    EXPECT_THROW(
        run([&](Recording &r) {
            storage->linear(r, m, xb.range(), yb.range(), 1, Epilogue{}, {gb.range(), 1e-6f});
        }),
        vkllm::Error);
}

// Q, K and V from one matrix stacking the three projections (linear_qkv) equal three separate
// products: on the fused path (one dispatch storing each row in its own output) for a vector,
// a batch and lavapipe's groups of 8 rows, and on the fallback (a linear() per row block: the
// storage-buffer kernel, a GPU's tiled matmul), with the stacked bias and with and without a
// folded norm.
TEST_F(QuantKernelTest, StackedQkvProjectionEqualsTheThreeProducts) {
    // Row blocks that start on whole groups and 256-byte offsets (any device's binding
    // alignment), as the loader only stacks such.
    const uint32_t q_rows = 128, kv_rows = 64, rows = q_rows + 2 * kv_rows;
    const float eps = 1e-6f;
    int fused = 0;
    for (WeightType t : {WeightType::Q8_0_G8, WeightType::Q4_K}) {
        uint32_t cols = t == WeightType::Q4_K ? 768 : 896;
        auto [data, w] = random_blocks(t, uint64_t(rows) * cols, 11);
        Buffer wb = upload(data);
        Matrix m{wb.range(), t, rows, cols};
        ASSERT_EQ(row_block(m, q_rows, kv_rows).data.offset % 256, 0u);
        std::vector<float> bias = ref::random(rows, 12), gamma = ref::random(cols, 13, 0.5f, 1.5f);
        Buffer bb = upload(bias), gb = upload(gamma);
        for (uint32_t n : {1u, 3u, 20u}) {
            for (bool normed : {false, true}) {
                std::vector<float> x = ref::random(size_t(n) * cols, 14 + n, -4.0f, 4.0f);
                std::vector<float> in = normed ? ref::rms_norm(x, gamma, n, cols, eps) : x;
                std::vector<double> scale;
                std::vector<float> want = ref::matmul(w, in, rows, cols, n, &scale);
                Buffer xb = upload(x), qb = floats(size_t(n) * q_rows);
                Buffer kb = floats(size_t(n) * kv_rows), vb = floats(size_t(n) * kv_rows);
                InputNorm norm{normed ? gb.range() : BufferRange{}, eps};
                for (Kernels *k : variants()) {
                    if (normed && !k->norm_fusable(m, xb.range(), gb.range(), n)) continue;
                    if (k->qkv_fusable(m, xb.range(), kv_rows, n)) ++fused;
                    run([&](Recording &r) {
                        k->linear_qkv(r, m, xb.range(), qb.range(), kb.range(), vb.range(), kv_rows,
                                      n, bb.range(), norm);
                    });
                    std::vector<float> got[3] = {download(qb, size_t(n) * q_rows),
                                                 download(kb, size_t(n) * kv_rows),
                                                 download(vb, size_t(n) * kv_rows)};
                    for (uint32_t b = 0; b < n; ++b) {
                        for (uint32_t row = 0; row < rows; ++row) {
                            uint32_t part = row < q_rows ? 0 : row < q_rows + kv_rows ? 1 : 2;
                            uint32_t start = part == 0 ? 0 : q_rows + (part - 1) * kv_rows;
                            uint32_t width = part == 0 ? q_rows : kv_rows;
                            size_t i = size_t(b) * rows + row;
                            double v = double(want[i]) + bias[row];
                            ASSERT_LE(std::fabs(got[part][size_t(b) * width + row - start] - v),
                                      1e-5 * (scale[i] + 1) + 1e-6)
                                << name(t) << " n " << n << (normed ? " normed" : "")
                                << (k->cpu_shapes() ? " lavapipe shapes" : " GPU shapes")
                                << " vector " << b << " row " << row;
                        }
                    }
                }
            }
        }
    }
    // Fused on both device classes' shapes for n = 1 and 3 and lavapipe's for n = 20, for
    // each type, with and without the norm.
    EXPECT_EQ(fused, 2 * 2 * 5);
}
