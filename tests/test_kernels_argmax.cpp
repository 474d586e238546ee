// The greedy choice of each row of logits on the device (shaders/argmax) against the CPU
// reference's: the first largest value wins, NaN never does, and no id past the tokenizer's
// candidates is chosen; rows as wide as a real vocabulary.
#include <cmath>
#include <limits>
#include <vector>

#include "gpu_fixture.h"
#include "reference/attention_ref.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;

TEST_F(GpuTest, ArgmaxFindsTheFirstLargestValueOfEachRow) {
    const uint32_t cols = 1001;
    std::vector<float> x = ref::random(size_t(6) * cols, 51);
    x[3] = 5, x[700] = 5, x[999] = 5;    // row 0: ties -> 3
    x[cols + 1000] = 2;                  // row 1: the last element
    x[2 * cols + 0] = 3;                 // row 2: the first element
    for (uint32_t c = 0; c < cols; ++c)  // row 3: all equal -> 0
        x[3 * cols + c] = -1.5f;
    float inf = std::numeric_limits<float>::infinity();
    for (uint32_t c = 0; c < cols; ++c)  // row 4: -inf, NaN, then -1e30
        x[4 * cols + c] = c < 10 ? -inf : (c < 20 ? NAN : -1e30f);
    x[5 * cols + 17] = NAN, x[5 * cols + 500] = inf;  // row 5: NaN skipped, +inf wins
    Buffer xb = upload(x), ib = floats(6);
    std::vector<int32_t> want = ref::argmax(x, 6, cols);
    ASSERT_EQ(want[0], 3);
    ASSERT_EQ(want[4], 20);
    for (Kernels *k : variants()) {
        run([&](Recording &r) { k->argmax(r, xb.range(), ib.range(), 6, cols, cols); });
        std::vector<int32_t> got(6);
        ctx_->transfer().download(ib, got.data(), got.size() * 4);
        EXPECT_EQ(got, want);
    }
}

TEST_F(GpuTest, ArgmaxNeverChoosesAnIdPastItsCandidates) {
    // A padded embedding: every row's largest values lie past the tokenizer's `n` ids (the
    // last candidate wins among those left), as in Qwen's 151,936 rows for 151,665 tokens.
    struct Shape {
        uint32_t cols, n;
    };
    for (Shape sh : {Shape{1001, 267}, Shape{64, 1}, Shape{151936, 151665}}) {
        const uint32_t rows = 3;
        std::vector<float> x = ref::random(size_t(rows) * sh.cols, 53, -10, 10);
        for (uint32_t r = 0; r < rows; ++r) {
            x[size_t(r) * sh.cols + sh.n - 1] = 10.5f;
            for (uint32_t c = sh.n; c < sh.cols; ++c)
                x[size_t(r) * sh.cols + c] = 100.0f + float(c);
        }
        Buffer xb = upload(x), ib = floats(rows);
        for (Kernels *k : variants()) {
            run([&](Recording &rec) {
                k->argmax(rec, xb.range(), ib.range(), rows, sh.cols, sh.n);
            });
            std::vector<int32_t> got(rows);
            ctx_->transfer().download(ib, got.data(), got.size() * 4);
            for (uint32_t r = 0; r < rows; ++r)
                EXPECT_EQ(got[r], int32_t(sh.n - 1)) << sh.n << " of " << sh.cols << ", row " << r;
        }
    }
}

TEST_F(GpuTest, ArgmaxOverAVocabularyWideRow) {
    // Qwen2's vocabulary: each lane scans thousands of elements; the maximum is the last one.
    const uint32_t cols = 151936;
    for (uint32_t rows : {1u, 3u}) {
        std::vector<float> x = ref::random(size_t(rows) * cols, 52, -10, 10);
        for (uint32_t r = 0; r < rows; ++r)
            x[size_t(r) * cols + cols - 1 - r] = 10.5f;
        Buffer xb = upload(x), ib = floats(rows);
        for (Kernels *k : variants()) {
            run([&](Recording &rec) { k->argmax(rec, xb.range(), ib.range(), rows, cols, cols); });
            std::vector<int32_t> got(rows);
            ctx_->transfer().download(ib, got.data(), got.size() * 4);
            for (uint32_t r = 0; r < rows; ++r)
                EXPECT_EQ(got[r], int32_t(cols - 1 - r)) << "row " << r;
        }
    }
}
