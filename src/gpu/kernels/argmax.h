// The end of a decode step on the device: the greedy choice of each row of logits, and the
// advance of chained decode steps (tests/test_kernels_attention.cpp's Argmax tests,
// tests/test_chained_decode.cpp).
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
