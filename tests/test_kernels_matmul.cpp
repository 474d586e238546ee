// Matrix-vector (decode) and tiled matrix-matrix (prefill) products against the CPU reference.
// Tolerance: |error| <= 1e-5 * sum_k |w_k x_k| + 1e-6 per output, the bound of F32
// accumulation over K terms; F16 weights are compared with a reference that uses the same
// F16-rounded weights, so the tolerance is the same (BF16 likewise). A batched matvec (n > 1)
// is held to the same bound, and to equality with n single matvecs.
#include <cmath>
#include <functional>

#include "gpu_fixture.h"
#include "reference/attention_ref.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;

namespace {

struct Shape {
    uint32_t rows, cols, n;
};

class MatmulTest : public GpuTest {
  protected:
    // Uploads random weights of `type` and returns the values the GPU will see.
    Matrix weights(WeightType type, uint32_t rows, uint32_t cols, uint32_t seed,
                   std::vector<float> &seen, Buffer &storage) {
        std::vector<float> w = ref::random(size_t(rows) * cols, seed);
        if (type == WeightType::Q8_0) {
            std::vector<uint8_t> q = ref::to_q8_0(w, &seen);
            q.resize((q.size() + 3) / 4 * 4);  // bound in whole 32-bit words
            storage = upload(q);
        } else if (type != WeightType::F32) {
            std::vector<uint16_t> h =
                type == WeightType::F16 ? ref::to_f16(w, &seen) : ref::to_bf16(w, &seen);
            h.resize((h.size() + 1) / 2 * 2);  // 16-bit data is bound in whole 32-bit words
            storage = upload(h);
        } else {
            seen = w;
            storage = upload(w);
        }
        return Matrix{storage.range(), type, rows, cols};
    }

    // Checks every kernel variant, or only `only` when given.
    void check_product(WeightType type, Shape s, bool use_matmul, Kernels *only = nullptr) {
        std::vector<float> w;
        Buffer wb;
        Matrix m = weights(type, s.rows, s.cols, 7 + s.rows, w, wb);
        std::vector<float> x = ref::random(size_t(s.n) * s.cols, 11 + s.cols);
        std::vector<double> scale;
        std::vector<float> want = ref::matmul(w, x, s.rows, s.cols, s.n, &scale);
        Buffer xb = upload(x), yb = floats(want.size());
        // The tiled matmul has one shape; the matvec has one per device class.
        std::vector<Kernels *> ks = variants();
        if (use_matmul) ks.resize(1);
        if (only) ks = {only};
        for (size_t v = 0; v < ks.size(); ++v) {
            run([&](Recording &rec) {
                if (use_matmul)
                    ks[v]->matmul(rec, m, xb.range(), yb.range(), s.n);
                else
                    ks[v]->matvec(rec, m, xb.range(), yb.range(), s.n);
            });
            std::vector<float> got = download(yb, want.size());
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_LE(std::fabs(double(got[i]) - want[i]), 1e-5 * scale[i] + 1e-6)
                    << "output " << i << " of " << s.rows << "x" << s.cols << " n=" << s.n
                    << " variant " << v;
        }
    }
};

}  // namespace

TEST_F(MatmulTest, MatvecF32MatchesReferenceOnOddShapes) {
    for (Shape s : {Shape{1, 1, 1}, Shape{37, 70, 1}, Shape{129, 257, 1}, Shape{896, 896, 1},
                    Shape{300, 4864, 1}})
        check_product(WeightType::F32, s, false);
}

// Rows of whole lane rounds plus half a round end with a round whose units are split between
// two lanes, half the rows each (matvec_texel's SPLIT_TAIL): 128 and 896 columns on 8 lanes,
// 1024 on 64, batched too, and rows that end inside a workgroup.
TEST_F(MatmulTest, MatvecWithAHalfRoundOfUnitsSplitsItAcrossLanes) {
    for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::BF16})
        for (Shape s :
             {Shape{37, 128, 1}, Shape{61, 896, 1}, Shape{19, 1024, 2}, Shape{45, 896, 3}})
            check_product(t, s, false);
}

// lavapipe walks the rows of a single vector's short rows (up to 12 units of 32 per lane) one
// after another: full, partial and half last rounds, GPT-OSS's 2880 (90 units: a round of 2
// lanes), the longest such row and the next size up.
TEST_F(MatmulTest, MatvecOfShortRowsMatchesReferenceInEveryRoundShape) {
    for (WeightType t : {WeightType::F32, WeightType::F16})
        for (Shape s :
             {Shape{200, 32, 1}, Shape{70, 160, 1}, Shape{65, 384, 1}, Shape{130, 2048, 1},
              Shape{67, 2080, 1}, Shape{33, 2880, 1}, Shape{35, 3072, 1}, Shape{17, 3104, 1}})
            check_product(t, s, false);
}

TEST_F(MatmulTest, MatvecF16MatchesReferenceOnOddShapes) {
    // Odd column counts put rows at half-word offsets in the F16 data; even ones that are not
    // multiples of 8 take the word-at-a-time path, multiples of 8 the uvec4 path.
    for (Shape s : {Shape{1, 3, 1}, Shape{37, 71, 1}, Shape{37, 70, 1}, Shape{5, 2, 1},
                    Shape{129, 257, 1}, Shape{896, 896, 1}, Shape{151, 4864, 1}})
        check_product(WeightType::F16, s, false);
}

TEST_F(MatmulTest, MatmulF32MatchesReferenceOnOddShapes) {
    for (Shape s : {Shape{1, 1, 1}, Shape{33, 17, 3}, Shape{70, 129, 33}, Shape{200, 896, 65}})
        check_product(WeightType::F32, s, true);
}

TEST_F(MatmulTest, MatmulF16MatchesReferenceOnOddShapes) {
    for (Shape s : {Shape{5, 3, 2}, Shape{33, 71, 31}, Shape{96, 257, 64}, Shape{130, 1000, 7}})
        check_product(WeightType::F16, s, true);
}

// A weight matrix larger than maxStorageBufferRange (128 MiB on lavapipe) is bound in row
// chunks; every row, across the chunk boundaries, must still be right.
TEST_F(MatmulTest, WeightLargerThanStorageBufferRangeIsSplit) {
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    uint32_t cols = 4000;
    uint32_t rows = uint32_t(limit / (cols * 4)) + 77;
    if (uint64_t(rows) * cols * 4 > (uint64_t(1) << 31))
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    ASSERT_GT(uint64_t(rows) * cols * 4, limit);
    check_product(WeightType::F32, Shape{rows, cols, 1}, false);
    check_product(WeightType::F32, Shape{rows, cols, 2}, true);
}

TEST_F(MatmulTest, F16WeightLargerThanStorageBufferRangeIsSplit) {
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    uint32_t cols = 4097;  // odd: chunk starts must still land on whole F16 rows
    uint32_t rows = uint32_t(limit / (cols * 2)) + 5;
    if (uint64_t(rows) * cols * 2 > (uint64_t(1) << 31))
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    check_product(WeightType::F16, Shape{rows, cols, 1}, false);
}

// Q8_0 as GGUF stores it (34-byte blocks, so rows start at any byte): compared with the
// dequantized weights, the same tolerance as F32.
TEST_F(MatmulTest, Q8_0WeightsAreReadAsStored) {
    for (Shape s : {Shape{1, 32, 1}, Shape{37, 96, 1}, Shape{130, 896, 3}, Shape{5, 4864, 1}})
        check_product(WeightType::Q8_0, s, false);
    for (Shape s : {Shape{33, 64, 5}, Shape{70, 160, 33}})
        check_product(WeightType::Q8_0, s, true);
}

TEST_F(MatmulTest, Q8_0WeightLargerThanStorageBufferRangeIsSplit) {
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    uint32_t cols = 4096;
    uint32_t rows = uint32_t(limit / (cols / 32 * 34)) + 21;
    if (uint64_t(rows) * cols / 32 * 34 > (uint64_t(1) << 31))
        GTEST_SKIP() << "device binding limit is too large to exceed in a test";
    check_product(WeightType::Q8_0, Shape{rows, cols, 1}, false);
}

TEST_F(MatmulTest, VeryLongRowsAreRightOrRefusedNeverTruncated) {
    // llvmpipe silently stops a loop after 65,535 iterations of an invocation; rows that long
    // for the device's workgroup shape must be refused rather than summed in part.
    for (Kernels *k : variants()) {
        try {
            check_product(WeightType::F32, Shape{3, 600000, 1}, false, k);
        } catch (const vkllm::Error &e) {
            EXPECT_EQ(e.status(), VKLLM_ERR_UNSUPPORTED) << e.what();
        }
    }
}

TEST_F(MatmulTest, MatvecBF16MatchesReferenceOnOddShapes) {
    for (Shape s : {Shape{1, 3, 1}, Shape{37, 71, 1}, Shape{37, 70, 1}, Shape{129, 257, 1},
                    Shape{896, 896, 1}, Shape{151, 4864, 1}})
        check_product(WeightType::BF16, s, false);
}

TEST_F(MatmulTest, MatmulBF16MatchesReferenceOnOddShapes) {
    for (Shape s : {Shape{5, 3, 2}, Shape{33, 71, 31}, Shape{96, 257, 64}, Shape{130, 1000, 7}})
        check_product(WeightType::BF16, s, true);
}

// Decode of n sequences at once: y[b] = W x[b]. A workgroup serves up to 4 vectors, so batches
// of 2, 3, 5 and 9 also cover partly filled workgroups.
TEST_F(MatmulTest, BatchedMatvecMatchesReference) {
    for (WeightType type : {WeightType::F32, WeightType::F16, WeightType::BF16}) {
        for (uint32_t n : {2u, 3u, 4u, 5u, 9u}) {
            check_product(type, Shape{37, 71, n}, false);
            check_product(type, Shape{37, 70, n}, false);
            check_product(type, Shape{300, 896, n}, false);
        }
    }
}

TEST_F(MatmulTest, BatchedMatvecOfFourEqualsFourSingleMatvecs) {
    const uint32_t rows = 129, n = 4;
    for (uint32_t cols : {897u, 896u})
        for (WeightType type : {WeightType::F32, WeightType::F16, WeightType::BF16}) {
            std::vector<float> w;
            Buffer wb;
            Matrix m = weights(type, rows, cols, 5, w, wb);
            std::vector<float> x = ref::random(size_t(n) * cols, 6);
            Buffer xb = upload(x), yb = floats(size_t(n) * rows);
            std::vector<Buffer> xs, ys;
            for (uint32_t b = 0; b < n; ++b) {
                xs.push_back(
                    upload(std::vector<float>(x.begin() + b * cols, x.begin() + (b + 1) * cols)));
                ys.push_back(floats(rows));
            }
            for (Kernels *k : variants()) {
                run([&](Recording &rec) {
                    k->matvec(rec, m, xb.range(), yb.range(), n);
                    for (uint32_t b = 0; b < n; ++b)
                        k->matvec(rec, m, xs[b].range(), ys[b].range());
                });
                // The same products summed in the same order, but a single vector may take
                // another kernel (lavapipe's row walk), whose compiled arithmetic may fuse
                // multiply-adds differently: equal to the roundings of sums of ~900 products
                // of values in [-1, 1].
                std::vector<float> batched = download(yb, size_t(n) * rows), single;
                for (uint32_t b = 0; b < n; ++b) {
                    std::vector<float> y = download(ys[b], rows);
                    single.insert(single.end(), y.begin(), y.end());
                }
                expect_close(batched, single, 1e-6, 1e-5, "batched vs single");
            }
        }
}

// Rows long enough that the per-lane loop, if the loops over the rows and vectors of a
// workgroup were not unrolled, would pass llvmpipe's 65,535 iterations (odd: one weight per
// load, the longest loop).
TEST_F(MatmulTest, LongRowsAreNotTruncated) {
    check_product(WeightType::F32, Shape{20, 40001, 1}, false);
    check_product(WeightType::F16, Shape{20, 40001, 4}, false);
}

// The fused end of a linear layer: y = s (W x + bias) + y (a residual added in place, scaled as
// Granite's are), on every kernel that computes a linear layer (single and batched matvec on
// each variant, the lavapipe prefill path over groups of 8 rows, the tiled matmul), with each
// part on its own and every combination.
TEST_F(MatmulTest, EpilogueAddsBiasScalesAndAccumulatesIntoTheOutput) {
    const uint32_t rows = 45;
    // Rows of whole 32-weight units (texel kernels) and not (storage-buffer kernels).
    for (auto [cols, n] : {std::pair{96u, 1u}, std::pair{70u, 3u}, std::pair{96u, 20u}}) {
        std::vector<float> w;
        Buffer wb;
        Matrix m = weights(WeightType::F16, rows, cols, 3 + n, w, wb);
        std::vector<float> x = ref::random(size_t(n) * cols, 4 + n);
        std::vector<float> bias = ref::random(rows, 5), y0 = ref::random(size_t(n) * rows, 6);
        std::vector<double> scale;
        std::vector<float> product = ref::matmul(w, x, rows, cols, n, &scale);
        Buffer xb = upload(x), bb = upload(bias), yb = floats(y0.size());
        for (int parts = 1; parts <= 7; ++parts) {
            const float s = parts & 4 ? 0.22f : 1.0f;
            Epilogue end{parts & 1 ? bb.range() : BufferRange{}, (parts & 2) != 0, s};
            std::vector<float> want(product);
            for (size_t i = 0; i < want.size(); ++i)
                want[i] = s * (want[i] + (parts & 1 ? bias[i % rows] : 0.0f)) +
                          (parts & 2 ? y0[i] : 0.0f);
            std::vector<std::function<void(Recording &)>> paths;
            for (Kernels *k : variants()) {
                paths.push_back(
                    [&, k](Recording &r) { k->linear(r, m, xb.range(), yb.range(), n, end); });
                paths.push_back(
                    [&, k](Recording &r) { k->matvec(r, m, xb.range(), yb.range(), n, end); });
            }
            paths.push_back(
                [&](Recording &r) { kernels().matmul(r, m, xb.range(), yb.range(), n, end); });
            for (size_t v = 0; v < paths.size(); ++v) {
                ctx_->transfer().upload(yb, y0.data(), y0.size() * sizeof(float));
                run(paths[v]);
                std::vector<float> got = download(yb, want.size());
                for (size_t i = 0; i < got.size(); ++i)
                    ASSERT_LE(std::fabs(double(got[i]) - want[i]), 1e-5 * (scale[i] + 2) + 1e-6)
                        << "output " << i << " cols " << cols << " n " << n << " parts " << parts
                        << " path " << v;
            }
        }
    }
}
