// Mixture of experts: the router, the expert products with each expert's weights read once for
// the tokens routed to it (on cooperative matrices in prefill, where the kernels use them), the
// fused SwiGLU of a pair of expert tensors, and the weighted combination
// (tests/test_kernels_moe.cpp, tests/test_kernels_moe_coopmat.cpp).
#pragma once

#include <cstdint>

#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/env.h"
#include "gpu/kernels/linear.h"

namespace vkllm::gpu {

class MoeKernels {
  public:
    MoeKernels(KernelEnv &env, LinearKernels &linear, ElementwiseKernels &eltwise)
        : env_(env), linear_(linear), eltwise_(eltwise) {}

    // moe_route: from router logits [n_tokens][n_expert] (F32), each token's k experts and
    // weights, then the entries (token t's j-th expert is entry t k + j) grouped by expert, into
    // `route` (moe_route_words() words). k <= 8, n_expert <= 256.
    void moe_route(Recording &rec, const BufferRange &logits, const BufferRange &route,
                   uint32_t n_tokens, uint32_t n_expert, uint32_t k, Gating gating, bool norm);
    // y[e][:] = W_x in_e (+ bias_x) for every entry e routed to expert x, each expert's weights
    // read once for its group. in_e is x[e / k] (x_per_entry false: [n_tokens][cols]) or x[e]
    // (true: [n_tokens k][cols]); y is [n_tokens k][rows]; bias [n_expert][rows] F32 or empty.
    // Steps of more than 8 tokens take moe_matmul_coopmat.comp where the kernels use
    // cooperative matrices (LinearKernels::coopmat), as linear() takes the coopmat matmul.
    void moe_matvec(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                    const BufferRange &y, const BufferRange &route, const BufferRange &bias,
                    uint32_t n_tokens, uint32_t k, bool x_per_entry);
    // y[e][:] = act(gate_x in_e + gate_bias_x, up_x in_e + up_bias_x) for every entry e routed
    // to expert x, in_e = x[e / k] (a feed-forward's first half; act SwiGLU or SwiGLUOai, as
    // binary()'s; the biases both present or both empty). Where the texel kernel takes both
    // tensors (moe_swiglu_fusable) one pass over x computes both products and the activation;
    // otherwise (and on the cooperative-matrix path) two moe_matvec and the element-wise op,
    // with `up_out` holding the up products.
    void moe_swiglu(Recording &rec, const ExpertMatrix &gate, const ExpertMatrix &up,
                    const BufferRange &x, const BufferRange &y, const BufferRange &up_out,
                    const BufferRange &route, const BufferRange &gate_bias,
                    const BufferRange &up_bias, uint32_t n_tokens, uint32_t k, Binary act);
    // moe_matvec of one token (k entries) with the variant `v` rather than the tuned or
    // default one: what tuning times and checks (gpu/tuner.h); `texel` false takes the
    // storage-buffer kernel (tuning's reference).
    void moe_matvec_variant(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                            const BufferRange &y, const BufferRange &route, uint32_t k,
                            const MatvecVariant &v, bool texel = true);
    bool moe_swiglu_fusable(const ExpertMatrix &gate, const ExpertMatrix &up, const BufferRange &x,
                            const BufferRange &gate_bias, const BufferRange &up_bias) const;
    // out[t][:] = sum_j weight(t k + j) y[t k + j][:] (+ sigmoid(shared_gate[t]) shared[t][:]
    // when shared is not empty); out is [n_tokens][n].
    void moe_combine(Recording &rec, const BufferRange &y, const BufferRange &route,
                     const BufferRange &shared, const BufferRange &shared_gate,
                     const BufferRange &out, uint32_t n_tokens, uint32_t n, uint32_t k);

  private:
    // Whether a step of n_tokens takes the coopmat expert matmul.
    bool coopmat_step(uint32_t n_tokens) const;
    // moe_matvec on cooperative matrices (moe_matmul_coopmat.comp); false where no tile shape
    // fits the device's shared memory.
    bool moe_matmul_coopmat(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                            const BufferRange &y, const BufferRange &route, const BufferRange &bias,
                            uint32_t n_tokens, uint32_t k, bool x_per_entry);
    // Experts per binding of `w`: all of them, or chunks within the binding limit (texel or
    // storage), each starting on an expert whose first block starts a group (grouped types) at
    // an offset that keeps the binding alignment, so that each workgroup's expert lies whole in
    // its chunk.
    uint64_t experts_per_binding(const ExpertMatrix &w, bool texel) const;
    // moe_matvec, and with `up` the fused activation `act` of moe_swiglu.
    void moe_matvec(Recording &rec, const ExpertMatrix &w, const ExpertMatrix *up,
                    const BufferRange &x, const BufferRange &y, const BufferRange &route,
                    const BufferRange &bias, const BufferRange &up_bias, uint32_t n_tokens,
                    uint32_t k, bool x_per_entry, Binary act, const MatvecVariant *forced = nullptr,
                    bool texel_allowed = true);

    KernelEnv &env_;
    LinearKernels &linear_;
    ElementwiseKernels &eltwise_;
};

}  // namespace vkllm::gpu
