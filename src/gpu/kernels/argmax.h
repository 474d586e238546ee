// The end of a decode step on the device: the greedy choice of each row of logits, a sampled
// one, its log-probabilities, and the advance of chained decode steps
// (tests/test_kernels_argmax.cpp, tests/test_kernels_sampling.cpp,
// tests/test_kernels_logprobs.cpp, tests/test_chained_decode.cpp).
#pragma once

#include <cstdint>

#include "gpu/kernels/env.h"

namespace vkllm::gpu {

class ArgmaxKernels {
  public:
    explicit ArgmaxKernels(KernelEnv &env) : env_(env) {}

    // ids[r] (int32) = index of the largest of the first `n` values of row r of x ([rows][cols]
    // F32, 1 <= n <= cols), lowest index on ties (NaNs are never chosen over a number). Logits
    // rows of a padded embedding pass the tokenizer's size as `n`.
    void argmax(Recording &rec, const BufferRange &x, const BufferRange &ids, uint32_t rows,
                uint32_t cols, uint32_t n);

    // The most top-k candidates the sampling kernel sorts.
    static constexpr uint32_t kMaxSampleTopK = 512;
    struct SampleBuffers {
        BufferRange options;  // [rows][SAMPLE_ROW_WORDS] (shaders/argmax/sample.h)
        BufferRange bias;     // the (id, bias) pairs the rows' options point into
        BufferRange history;  // [rows][capacity] token ids, a ring per row
        BufferRange state;    // [rows][2]: tokens in the history so far, draws so far
        BufferRange ids;      // [rows] the chosen tokens
    };
    // ids[r] = a token drawn from the first `n` logits of row r of x ([rows][cols] F32, changed
    // in place by the bias and penalties) through the host sampler's chain with row r's options
    // (sample.comp); the token joins row r's history and its draw count goes on.
    void sample(Recording &rec, const BufferRange &x, const SampleBuffers &s, uint32_t rows,
                uint32_t cols, uint32_t n, uint32_t capacity);

    // The most (id, log-probability) pairs logprobs() reports per row.
    static constexpr uint32_t kMaxTop = 20;
    // Words logprobs() writes per row for `top` pairs.
    static constexpr uint32_t logprobs_row_words(uint32_t top) { return 2 + 2 * top; }
    // Over the first `n` values of each row of x ([rows][cols] F32): output row out_row0 + r of
    // `out` (logprobs_row_words(top) 32-bit words each) = the row's max and log-sum-exp (float
    // bits), then its `top` (0 to kMaxTop) largest values as (id, value - lse) pairs, largest
    // first, the lowest id first on ties; id -1 (logprob -inf) where fewer than `top` remain.
    // NaNs join neither the sum nor the pairs.
    void logprobs(Recording &rec, const BufferRange &x, const BufferRange &out, uint32_t rows,
                  uint32_t cols, uint32_t n, uint32_t top, uint32_t out_row0 = 0);

    // Between chained decode steps of `n` sequences: tokens[r] = ids[r], out[step * n + r] =
    // ids[r], and each sequence one position on (the step's positions and kv_begin, whose
    // visible window is the sinks and the most recent `window` positions).
    void chain_advance(Recording &rec, const BufferRange &ids, const BufferRange &tokens,
                       const StepView &step_view, const BufferRange &out, uint32_t n, uint32_t step,
                       uint32_t window, uint32_t n_sink);

  private:
    KernelEnv &env_;
};

}  // namespace vkllm::gpu
