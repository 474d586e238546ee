// The logprobs kernel (shaders/argmax/logprobs.comp) against the double-precision reference
// (reference/logprobs_ref.h): each row's log-sum-exp within 1e-5 (relative to the row's scale)
// and its top ids exactly, with their log-probabilities within the same bound, on both device
// classes' shapes; ties, NaNs, infinities, padded rows and vocabulary-wide rows in an order that
// makes every element enter a lane's kept list (the worst case for its loops on llvmpipe).
#include <cmath>
#include <cstring>
#include <limits>

#include "gpu_fixture.h"
#include "reference/cpu_ops.h"
#include "reference/logprobs_ref.h"

using namespace vkllm::gpu;

namespace {

struct Row {
    float max, lse;
    std::vector<int32_t> ids;
    std::vector<float> logprobs;
};

class LogprobsKernel : public GpuTest {
  protected:
    // Runs the kernel of every variant on rows x cols and checks each row against the reference.
    void check(const std::vector<float> &x, uint32_t rows, uint32_t cols, uint32_t n, uint32_t top,
               const char *what) {
        Buffer xb = upload(x);
        uint32_t words = ArgmaxKernels::logprobs_row_words(top);
        Buffer ob = floats(size_t(rows) * words + 2 * words);
        for (Kernels *k : variants()) {
            // Output rows from 1 on: a chained step's slice (out_row0) must land where it says.
            run([&](Recording &r) {
                k->logprobs(r, xb.range(), ob.range(), rows, cols, n, top, 1);
            });
            std::vector<uint32_t> got(size_t(rows + 1) * words);
            ctx_->transfer().download(ob, got.data(), got.size() * 4);
            for (uint32_t r = 0; r < rows; ++r) {
                const uint32_t *w = &got[size_t(r + 1) * words];
                std::vector<double> row(x.begin() + long(r) * cols, x.begin() + long(r + 1) * cols);
                double lse = ref::log_sum_exp(row.data(), n);
                std::vector<ref::IdLogprob> want = ref::top_logprobs(row.data(), n, top);
                float lse_got;
                std::memcpy(&lse_got, &w[1], 4);
                double tol = 1e-5 * std::max(1.0, std::fabs(lse));
                EXPECT_NEAR(lse_got, lse, tol) << what << ", row " << r;
                for (uint32_t k = 0; k < top; ++k) {
                    int32_t id = int32_t(w[2 + 2 * k]);
                    float lp;
                    std::memcpy(&lp, &w[3 + 2 * k], 4);
                    if (k >= want.size()) {
                        EXPECT_EQ(id, -1) << what << ", row " << r << ", pair " << k;
                        continue;
                    }
                    EXPECT_EQ(id, want[k].id) << what << ", row " << r << ", pair " << k;
                    EXPECT_NEAR(lp, want[k].logprob, tol)
                        << what << ", row " << r << ", pair " << k;
                }
            }
        }
    }
};

}  // namespace

TEST_F(LogprobsKernel, MatchesTheReferenceOnRandomRowsForEveryTopCount) {
    const uint32_t rows = 5, cols = 1003;
    std::vector<float> x = ref::random(size_t(rows) * cols, 61, -8, 8);
    for (uint32_t top : {0u, 1u, 2u, 5u, 20u})
        check(x, rows, cols, cols, top, "random rows");
}

TEST_F(LogprobsKernel, BreaksTiesByTheLowestIdAndSkipsNaNs) {
    const uint32_t rows = 4, cols = 300;
    std::vector<float> x(size_t(rows) * cols, -3.0f);  // row 0: all equal
    for (uint32_t c = 0; c < cols; c += 7)             // row 1: a tie of many at the top
        x[cols + c] = 1.5f;
    float inf = std::numeric_limits<float>::infinity();
    for (uint32_t c = 0; c < cols; ++c)  // row 2: NaNs, -inf and a few numbers
        x[2 * cols + c] = c % 3 == 0 ? NAN : (c % 3 == 1 ? -inf : -float(c) / 50.0f);
    for (uint32_t c = 0; c < cols; ++c)  // row 3: a few numbers among NaNs, fewer than top
        x[3 * cols + c] = c % 100 == 5 ? float(c) : NAN;
    check(x, rows, cols, cols, 20, "ties and NaNs");
}

TEST_F(LogprobsKernel, NeverReportsAnIdPastItsCandidates) {
    // A padded embedding: the columns past the tokenizer's `n` ids hold the largest values.
    const uint32_t rows = 3, cols = 1000, n = 777;
    std::vector<float> x = ref::random(size_t(rows) * cols, 62, -5, 5);
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = n; c < cols; ++c)
            x[size_t(r) * cols + c] = 100.0f + float(c);
    check(x, rows, cols, n, 20, "padded rows");
}

TEST_F(LogprobsKernel, VocabularyWideRowsInIncreasingOrder) {
    // 262,144 ids (Gemma 3's vocabulary) rising along the row: every element enters a lane's
    // kept list, the most work its unrolled insertion does; were it a loop llvmpipe counts, its
    // 65,535-iteration limit would cut the scan short and the top ids would be wrong.
    const uint32_t rows = 2, cols = 262144;
    std::vector<float> x(size_t(rows) * cols);
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c)
            x[size_t(r) * cols + c] = float(c) * 1e-4f - float(r);
    check(x, rows, cols, cols, 20, "rising rows");
}
