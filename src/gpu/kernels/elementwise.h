// Element-wise kernels and the row-wise norms: rms_norm, layer_norm, softmax, binary and unary
// operations, and the gather of embedding rows (tests/test_kernels_norm.cpp,
// tests/test_kernels_elementwise.cpp).
#pragma once

#include <cstdint>

#include "gpu/kernels/env.h"

namespace vkllm::gpu {

class ElementwiseKernels {
  public:
    explicit ElementwiseKernels(KernelEnv &env) : env_(env) {}

    void rms_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                  const BufferRange &y, uint32_t rows, uint32_t cols, float eps);
    void layer_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                    const BufferRange &bias, const BufferRange &y, uint32_t rows, uint32_t cols,
                    float eps);
    void softmax(Recording &rec, const BufferRange &x, const BufferRange &y, uint32_t rows,
                 uint32_t cols, float scale);
    // y[i] = a[i] op b[i % nb].
    void binary(Recording &rec, Binary op, const BufferRange &a, const BufferRange &b,
                const BufferRange &y, uint32_t n, uint32_t nb);
    // y[i] = op(x[i]); `param` is SoftCap's cap (> 0).
    void unary(Recording &rec, Unary op, const BufferRange &x, const BufferRange &y, uint32_t n,
               float param = 0);
    // out[t][:] = table[ids[t]][:] * scale (rows of ids outside the table are zero).
    void get_rows(Recording &rec, const Matrix &table, const BufferRange &ids,
                  const BufferRange &out, uint32_t n_ids, float scale = 1.0f);

  private:
    KernelEnv &env_;
};

}  // namespace vkllm::gpu
