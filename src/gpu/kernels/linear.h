// Linear layers: matrix-vector products (batched, texel and storage-buffer paths, lavapipe's
// row walk), the tiled matrix-matrix product, and the fused forms (SwiGLU, stacked QKV and its
// KV cache store, an input norm, a bias or residual epilogue) (tests/test_kernels_matmul.cpp,
// tests/test_kernels_quant.cpp, tests/test_kernels_qkv_store.cpp).
#pragma once

#include <cstdint>

#include "gpu/kernels/attention.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/env.h"

namespace vkllm::gpu {

class LinearKernels {
  public:
    LinearKernels(KernelEnv &env, ElementwiseKernels &eltwise, const AttentionKernels &attention)
        : env_(env), eltwise_(eltwise), attention_(attention) {}

    // y[b][rows] = W x[b][cols] for b < n (decode of n sequences at once; n = 1: y = W x).
    void matvec(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                uint32_t n = 1, const Epilogue &end = Epilogue{}, const InputNorm &norm = {});
    // Y[n][rows] = X[n][cols] W^T with the kernel that suits n and the device: the batched
    // matrix-vector kernel for a few rows; for many rows matmul() on GPUs and wherever the
    // cooperative-matrix kernel is used, but otherwise on lavapipe (where the tiled matmul is
    // slow) the batched one over groups of 8 rows.
    void linear(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                uint32_t n, const Epilogue &end = Epilogue{}, const InputNorm &norm = {});
    // Whether linear() of w over n rows of x can apply an InputNorm of `weight` itself: where
    // it takes the texel matrix-vector kernel (decode, and lavapipe's prefill).
    bool norm_fusable(const Matrix &w, const BufferRange &x, const BufferRange &weight,
                      uint32_t n) const;
    // Y[n][rows] = silu(X gate^T) * (X up^T) (a SwiGLU feed-forward's first half). Where the
    // texel matrix-vector kernel takes both (same type and shape: decode, and lavapipe's
    // prefill), one pass over x computes both projections and the product per row; otherwise
    // two linear() and the element-wise SwiGLU, with `up_out` holding the up projection.
    // An InputNorm needs norm_fusable for both matrices. `glu` Binary::GeGLU (Gemma's
    // gelu(gate) * up) is fused alike (the texel kernel's GLU 2).
    void linear_swiglu(Recording &rec, const Matrix &gate, const Matrix &up, const BufferRange &x,
                       const BufferRange &y, const BufferRange &up_out, uint32_t n,
                       const InputNorm &norm = {}, Binary glu = Binary::SwiGLU);
    // Whether linear_swiglu can fuse for these matrices and input.
    bool fusable_swiglu(const Matrix &gate, const Matrix &up, const BufferRange &x) const;
    // The attention projections from a matrix stacking them (stack_rows of wq, wk, wv, with the
    // biases stacked likewise; size 0: none): q[n][rows - 2 kv_rows], k[n][kv_rows],
    // v[n][kv_rows]. Where the texel kernel can take it (qkv_fusable) one pass over x and one
    // dispatch compute all three, each output row stored where it belongs; otherwise a
    // linear() per projection on the matrix's row blocks. An InputNorm needs norm_fusable.
    void linear_qkv(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &q,
                    const BufferRange &k, const BufferRange &v, uint32_t kv_rows, uint32_t n,
                    const BufferRange &bias = {}, const InputNorm &norm = {});
    bool qkv_fusable(const Matrix &w, const BufferRange &x, uint32_t kv_rows, uint32_t n) const;
    // linear_qkv that also stores K and V into the KV cache and rotates Q, as
    // AttentionKernels::kv_store with `store.rope` would after it, in the projection's own
    // dispatch (matvec_kv_epilogue.glsl): a decode step's kv_store dispatch and its barrier
    // fewer. k and v still receive the projections (unrotated). Only where
    // qkv_store_fusable says so (VKLLM_ERR_INTERNAL otherwise).
    void linear_qkv_store(Recording &rec, const Matrix &w, const BufferRange &x,
                          const BufferRange &q, const BufferRange &k, const BufferRange &v,
                          uint32_t n, const BufferRange &bias, const InputNorm &norm,
                          const KvStoreTarget &store);
    // Whether linear_qkv_store can take w (stacking heads of `shape`) over n rows of x: one
    // dispatch of the texel kernel (a few rows, a matrix one binding covers) and heads that
    // kv_store's units divide.
    bool qkv_store_fusable(const Matrix &w, const BufferRange &x, uint32_t n,
                           const AttentionShape &shape) const;
    // The bytes of linear_qkv_store's `arrivals` for a model of n_heads query and n_kv_heads
    // KV heads, for any n it fuses.
    static uint64_t qkv_arrivals_bytes(uint32_t n_heads, uint32_t n_kv_heads);
    // Y[n][rows] = X[n][cols] W^T, for n activation rows (prefill): on cooperative matrices
    // where they are used (coopmat()), else the tiled kernel.
    void matmul(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                uint32_t n, const Epilogue &end = Epilogue{});
    // Whether matmul() and prefill's linear() take the cooperative-matrix kernel, and turning it
    // on or off (tests compare both paths on one device); it stays off where the device or the
    // build has no cooperative matrices.
    bool coopmat() const { return env_.coopmat; }
    void set_coopmat(bool on);
    // The coopmat matmul's workgroup tile side, 32 or 64 (0: chosen per matrix and device), so
    // that tests cover both on any device.
    void set_coopmat_tile(uint32_t side) { env_.coopmat_tile = side; }

    // Whether the texel matrix-vector kernels (matvec_texel, moe_matvec_texel) can read w and x:
    // the weights' layout, both offsets on a texel, and texel loads allowed.
    bool texel_matvec(const Matrix &w, const BufferRange &x) const;
    // matvec() of one vector with the variant `v` rather than the tuned or default one: what
    // tuning times and checks (gpu/tuner.h); `texel` false takes the storage-buffer kernel
    // (tuning's reference). Fails (VKLLM_ERR_INTERNAL) where the device cannot run `v`
    // (KernelEnv::supports).
    void matvec_variant(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                        const MatvecVariant &v, bool texel = true);
    // Whether matvec may read weights and inputs as texels where their layout allows (the
    // default); tests turn it off to check the storage-buffer path on the same device.
    void set_texel_loads(bool on) { env_.texel_loads = on; }

  private:
    // linear_qkv's K and V outputs, for the fused dispatch: rows from q_rows on go to k, from
    // q_rows + kv_rows on to v.
    struct StackedOutputs {
        BufferRange k, v;
        uint32_t q_rows, kv_rows;
        const KvStoreTarget *store = nullptr;  // linear_qkv_store's
        uint32_t n_seq = 0;                    // sequences its caches hold
    };
    // The largest binding of a matvec's weights: texel buffers have their own limit.
    uint64_t matvec_max_range(bool texel) const;
    // Whether every group of n rows takes the texel kernel (matvec_row_groups' x slices too).
    bool texel_groups(const Matrix &w, const BufferRange &x, uint32_t n) const;
    // matvec, and with `up` the fused gated unit `glu` (SwiGLU or GeGLU) of linear_swiglu.
    void matvec(Recording &rec, const Matrix &w, const Matrix *up, const BufferRange &x,
                const BufferRange &y, uint32_t n, const Epilogue &end, const InputNorm &norm,
                const StackedOutputs *qkv = nullptr, Binary glu = Binary::SwiGLU,
                const MatvecVariant *forced = nullptr, bool texel_allowed = true);
    // Whether n rows of x may go through matvec in groups of 8 (always for up to 8), and doing so.
    bool row_groups_fit(const Matrix &w, uint32_t n) const;
    void matvec_row_groups(Recording &rec, const Matrix &w, const Matrix *up, const BufferRange &x,
                           const BufferRange &y, uint32_t n, const Epilogue &end,
                           const InputNorm &norm, const StackedOutputs *qkv = nullptr,
                           Binary glu = Binary::SwiGLU);

    // matmul() on cooperative matrices (matmul_coopmat.comp); false where no tile shape fits
    // the device's shared memory (the caller then takes the tiled kernel).
    bool matmul_coopmat(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                        uint32_t n, const Epilogue &end);

    KernelEnv &env_;
    ElementwiseKernels &eltwise_;
    const AttentionKernels &attention_;  // its checks of a KV cache
};

}  // namespace vkllm::gpu
