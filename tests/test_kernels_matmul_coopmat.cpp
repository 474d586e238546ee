// The cooperative-matrix matmul (prefill, shaders/linear/matmul_coopmat.comp) against a CPU
// reference in double, for every weight type, on shapes whose M, N and K are multiples of no
// tile, one activation row, K below one K slice, both workgroup tiles (32 and 64), each
// epilogue, and a weight larger than maxStorageBufferRange. The suites skip, saying why, where
// the build or the device has no cooperative matrices (Debian 12's Mesa 22 lavapipe); Mesa 26's
// lavapipe runs them: scripts/mesa26 run -- build/tests/test_kernels
// --gtest_filter='MatmulCoopmat*'
//
// Tolerance, per output y = sum_k x_k w_k. The kernel rounds both operands to f16 and
// accumulates in f32. Vulkan lets a conversion to a narrower float round to nearest or toward
// zero, so each operand carries a relative error of at most 2^-10 where it is normal, and an
// absolute one of at most 2^-24 (the f16 subnormal spacing) where it is not:
//   |x~ w~ - x w| <= (2 2^-10 + 2^-20) |x w| + 2^-24 (1 + 2^-10) (|x| + |w|)   (|x|, |w| <= 1)
// Summing K such products in f32, in any order, adds at most K 2^-24 (1 + 2^-9) sum |x~ w~|.
// Hence, with S = sum_k |x_k w_k| and A = sum_k (|x_k| + |w_k|):
//   |err| <= (2^-9 + 2^-20 + 1.01 K 2^-24) S + 2^-23 A
// The epilogue (+ bias, * scale, + y) adds three f32 roundings: 2^-22 (|s| (S + |b|) + |y0|).
#include <cmath>
#include <string>

#include "gpu_fixture.h"
#include "random_blocks.h"
#include "reference/attention_ref.h"
#include "reference/cpu_ops.h"
#include "shader_names.h"

using namespace vkllm::gpu;
using namespace vkllm::gpu::test_blocks;

namespace {

struct Shape {
    uint32_t rows, cols, n;  // N (weight rows), K, M (activation rows)
};

// What follows the product (linear_epilogue.glsl).
struct Ends {
    bool bias = false, accumulate = false;
    float scale = 1;
};

std::string type_name(WeightType t) {
    if (t == WeightType::F32) return "F32";
    if (t == WeightType::F16) return "F16";
    if (t == WeightType::BF16) return "BF16";
    return name(t);
}

class MatmulCoopmatTest : public GpuTest {
  protected:
    void SetUp() override {
        GpuTest::SetUp();
        if (!shaders::kCoopmatShaders)
            GTEST_SKIP() << "built without the cooperative-matrix shaders (no glslang here "
                            "compiles GL_KHR_cooperative_matrix)";
        const CoopmatCaps &caps = ctx_->device().caps().coopmat;
        if (!ctx_->device().coopmat_enabled())
            GTEST_SKIP() << "the device cannot run the cooperative-matrix kernels: "
                         << caps.unusable;
        kernels().set_coopmat(true);
        ASSERT_TRUE(kernels().coopmat());
    }

    // Random weights of `type` (whole blocks for the block types) and the values the GPU sees.
    Matrix weights(WeightType type, uint32_t rows, uint32_t cols, uint32_t seed,
                   std::vector<float> &seen, Buffer &storage) {
        if (block_weights(type) > 1) {
            auto [data, w] = random_blocks(type, uint64_t(rows) * cols, seed);
            data.resize((data.size() + 3) / 4 * 4);  // bound in whole 32-bit words
            storage = upload(data);
            seen = std::move(w);
        } else if (type == WeightType::F32) {
            seen = ref::random(size_t(rows) * cols, seed);
            storage = upload(seen);
        } else {
            std::vector<float> w = ref::random(size_t(rows) * cols, seed);
            std::vector<uint16_t> h =
                type == WeightType::F16 ? ref::to_f16(w, &seen) : ref::to_bf16(w, &seen);
            h.resize((h.size() + 1) / 2 * 2);  // 16-bit data is bound in whole 32-bit words
            storage = upload(h);
        }
        return Matrix{storage.range(), type, rows, cols};
    }

    // matmul() of random weights and activations with tile side `tile` (0: the kernel's
    // choice), checked element by element against the reference within the f16 bound.
    void check(WeightType type, Shape s, uint32_t tile, Ends e = {}, bool via_linear = false) {
        std::vector<float> w;
        Buffer wb;
        Matrix m = weights(type, s.rows, s.cols, 7 + s.rows + 3 * s.cols, w, wb);
        std::vector<float> x = ref::random(size_t(s.n) * s.cols, 11 + s.cols + s.n);
        std::vector<float> bias = ref::random(s.rows, 3), y0 = ref::random(size_t(s.n) * s.rows, 5);
        Buffer xb = upload(x), yb = e.accumulate ? upload(y0) : floats(y0.size());
        Buffer bb = upload(bias);
        kernels().set_coopmat_tile(tile);
        run([&](Recording &rec) {
            Epilogue end{e.bias ? bb.range() : BufferRange{}, e.accumulate, e.scale};
            if (via_linear)
                kernels().linear(rec, m, xb.range(), yb.range(), s.n, end);
            else
                kernels().matmul(rec, m, xb.range(), yb.range(), s.n, end);
        });
        std::vector<float> got = download(yb, y0.size());
        const double u = std::ldexp(1.0, -24);
        for (uint32_t t = 0; t < s.n; ++t) {
            const float *xt = &x[size_t(t) * s.cols];
            for (uint32_t r = 0; r < s.rows; ++r) {
                const float *wr = &w[size_t(r) * s.cols];
                double dot = 0, sum_abs = 0, sum_operands = 0;
                for (uint32_t k = 0; k < s.cols; ++k) {
                    dot += double(xt[k]) * wr[k];
                    sum_abs += std::fabs(double(xt[k]) * wr[k]);
                    sum_operands += std::fabs(xt[k]) + std::fabs(wr[k]);
                }
                double b = e.bias ? bias[r] : 0,
                       y_old = e.accumulate ? y0[size_t(t) * s.rows + r] : 0;
                double want = e.scale * (dot + b) + y_old;
                double bound =
                    (std::ldexp(1.0, -9) + std::ldexp(1.0, -20) + 1.01 * s.cols * u) * sum_abs +
                    2 * u * sum_operands;
                bound = std::fabs(e.scale) * bound +
                        4 * u * (std::fabs(e.scale) * (sum_abs + std::fabs(b)) + std::fabs(y_old));
                double err = std::fabs(double(got[size_t(t) * s.rows + r]) - want);
                ASSERT_LE(err, bound) << type_name(type) << " Y[" << t << "][" << r << "] of "
                                      << s.n << "x" << s.rows << "x" << s.cols << " tile " << tile;
            }
        }
    }
};

// Row lengths of the block types: one K slice, several and a ragged number of 64-wide slices
// for 32-weight blocks; one and three super-blocks for the 256-weight ones.
std::vector<uint32_t> block_row_lengths(WeightType t) {
    if (block_weights(t) == 256) return {256, 768};
    return {32, 160};
}

}  // namespace

// F32, F16 and BF16 rows of any length: K of 1 and 5 (below one K slice), 17, 70, 257; N and
// M across none, one and several tiles of either side, and a single activation row.
TEST_F(MatmulCoopmatTest, FloatWeightsMatchReferenceOnRaggedShapes) {
    for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::BF16})
        for (uint32_t tile : {32u, 64u})
            for (Shape s : {Shape{1, 1, 1}, Shape{37, 5, 1}, Shape{70, 17, 9}, Shape{33, 70, 3},
                            Shape{131, 257, 70}, Shape{65, 96, 33}})
                check(t, s, tile);
}

// Every block type (as GGUF stores it and regrouped), each weight dequantized to f16 as it is
// staged: N and M multiples of no tile, one activation row. The types alternate between the
// two tiles (decoding does not depend on the tile; each pipeline costs seconds to compile on
// lavapipe), Q8_0 takes both.
TEST_F(MatmulCoopmatTest, BlockWeightsMatchReferenceOnRaggedShapes) {
    uint32_t i = 0;
    for (WeightType t : kQuantTypes) {
        std::vector<uint32_t> tiles{i++ % 2 ? 64u : 32u};
        if (t == WeightType::Q8_0) tiles = {32, 64};
        for (uint32_t tile : tiles)
            for (uint32_t cols : block_row_lengths(t))
                for (Shape s : {Shape{37, cols, 1}, Shape{131, cols, 70}})
                    check(t, s, tile);
    }
}

TEST_F(MatmulCoopmatTest, ChosenTileMatchesReference) {
    for (Shape s : {Shape{896, 896, 40}, Shape{64, 128, 128}, Shape{9, 64, 200}})
        check(WeightType::Q8_0, s, 0);
}

// The epilogue applies per element on the ragged edges: a bias, a scale, adding to what Y
// holds, and all three.
TEST_F(MatmulCoopmatTest, EpiloguesApplyToEveryOutput) {
    for (WeightType t : {WeightType::F32, WeightType::Q4_K})
        for (uint32_t tile : {32u, 64u}) {
            uint32_t cols = t == WeightType::Q4_K ? 256 : 96;
            check(t, Shape{67, cols, 19}, tile, Ends{true, false, 1});
            check(t, Shape{67, cols, 19}, tile, Ends{false, false, 0.375f});
            check(t, Shape{67, cols, 19}, tile, Ends{false, true, 1});
            check(t, Shape{67, cols, 19}, tile, Ends{true, true, -1.5f});
        }
}

// Prefill's linear() of more than 8 rows takes the coopmat matmul on every device (lavapipe's
// groups of 8 matrix-vector products, which fold an input norm, are left to decode).
TEST_F(MatmulCoopmatTest, LinearOfManyRowsTakesTheMatmul) {
    std::vector<float> w;
    Buffer wb, xb = floats(size_t(20) * 96), gb = floats(96);
    Matrix m = weights(WeightType::F32, 37, 96, 1, w, wb);
    EXPECT_FALSE(kernels().norm_fusable(m, xb.range(), gb.range(), 20));
    check(WeightType::F32, Shape{37, 96, 20}, 0, Ends{true, false, 1}, true);
    check(WeightType::Q8_0, Shape{37, 96, 9}, 0, Ends{}, true);
}

// A weight larger than maxStorageBufferRange (128 MiB on lavapipe) is bound in row chunks, each
// chunk's outputs written at its own columns of Y.
TEST_F(MatmulCoopmatTest, WeightLargerThanStorageBufferRangeIsSplitByRows) {
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    uint32_t cols = 2048;
    uint32_t rows = uint32_t(limit / (cols * 4)) + 77;
    if (uint64_t(rows) * cols * 4 > (uint64_t(1) << 31))
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    ASSERT_GT(uint64_t(rows) * cols * 4, limit);
    check(WeightType::F32, Shape{rows, cols, 2}, 32, Ends{true, false, 1});
}

// llvmpipe silently stops a loop after 65,535 iterations of an invocation: rows too long for
// the kernel's K slices are refused rather than summed in part; long rows within the limit (a
// 20,000-wide feed-forward's down projection: 625 K slices) are summed to the end.
TEST_F(MatmulCoopmatTest, VeryLongRowsAreRightOrRefusedNeverTruncated) {
    check(WeightType::F32, Shape{3, 20000, 9}, 0);
    try {
        check(WeightType::F32, Shape{3, 600000, 9}, 0);
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_UNSUPPORTED) << e.what();
    }
}

// On a device or build without cooperative matrices, asking for them changes nothing.
TEST(MatmulCoopmatChoice, StaysOffWhereTheDeviceOrBuildLacksThem) {
    ContextParams p;
    p.validation = vkllm_test_validation_in_process();
    Context ctx(p);
    ctx.kernels().set_coopmat(true);
    EXPECT_EQ(ctx.kernels().coopmat(), ctx.device().coopmat_enabled());
    ctx.kernels().set_coopmat(false);
    EXPECT_FALSE(ctx.kernels().coopmat());
}
