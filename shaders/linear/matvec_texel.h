// The bindings, specialization and push constants of matvec_texel.glsl, declared once for the
// shader and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MATVEC_TEXEL_H
#define VKLLM_SHADER_MATVEC_TEXEL_H

#include "interface.h"
#include "kv_cache.h"
#include "linear_epilogue.h"

VKLLM_CONST(GLU_NONE, 0)
VKLLM_CONST(GLU_SWIGLU, 1)  // silu(gate) * up
VKLLM_CONST(GLU_GEGLU, 2)   // gelu(gate) * up
VKLLM_SPEC_BEGIN(MatvecTexelSpec)
VKLLM_SPEC(0, uint, WG, 8)
VKLLM_SPEC(1, uint, ROWS, 16)
VKLLM_SPEC(2, uint, WTYPE, 0)
VKLLM_SPEC(3, uint, NB, 1)
VKLLM_SPEC(4, uint, EPILOGUE, 0)        // see linear_epilogue.glsl
VKLLM_SPEC(5, bool, SPLIT_TAIL, false)  // cols / 32 % WG == WG / 2: see main
// A gated unit fused in: y = act(W x) * (W2 x), W the gate and W2 the up projection (same type
// and shape), both read in one pass over x, with no epilogue. GLU 0: none; 1: SwiGLU (act =
// silu); 2: GeGLU (act = GELU's tanh form, Gemma).
VKLLM_SPEC(6, uint, GLU, 0)  // GLU_NONE, GLU_SWIGLU or GLU_GEGLU
// One vector (NB 1) and at most X_UNITS units of K per lane: the rows are walked one after
// another instead (walk_rows; 0: not). Only in matvec_texel_subgroup.comp.
VKLLM_SPEC(7, uint, X_UNITS, 0)
// RMS norm fused in: x is the un-normalised input. Each vector is multiplied by the norm
// weight G on its way in, and its outputs by 1 / sqrt(mean(x^2) + eps), which every workgroup
// computes from the x it loads anyway (load_x adds up the squares of the units it counts,
// norm_scales adds the lanes' sums): the norm needs no pass of its own and no normalised copy.
VKLLM_SPEC(8, bool, NORM, false)
// Stacked outputs: W stacks Q, K and V's projections, and its rows from k_row0 and from v_row0
// on are stored in YK and YV ([n][their rows] each), the rest in y as [n][k_row0]. The bias
// (EPILOGUE bit 0) is stacked likewise; no accumulation.
VKLLM_SPEC(9, bool, QKV, false)
// The *_subgroup shader's subgroups per workgroup at most (matvec_reduce.glsl): 1 where the
// workgroup is one subgroup.
VKLLM_SPEC(10, uint, SUBGROUPS, 1)
// matvec_texel_kv*.comp (QKV with its K and V stored into the KV cache, matvec_kv_epilogue.glsl):
// the cache's type and the RoPE layout, as kv_store.comp's KV_TYPE and ROPE.
VKLLM_SPEC(11, uint, KV_TYPE, 0)  // KV_F32, KV_F16 or KV_Q8_0 (kv_cache.h)
VKLLM_SPEC(12, uint, ROPE, 0)     // ROPE_NONE, ROPE_PAIRS or ROPE_NEOX (kv_cache.h)
VKLLM_SPEC_END(MatvecTexelSpec)
VKLLM_PUSH_BEGIN(MatvecTexelPush)
uint rows;  // rows in this chunk
uint cols;  // a multiple of 32
uint y_offset;
uint n;         // vectors in the batch
uint y_stride;  // floats between the outputs of consecutive vectors
float eps;      // NORM
uint k_row0;    // QKV
uint v_row0;
float scale;  // EPILOGUE_SCALE (not with QKV)
// matvec_texel_kv*.comp: the cache and the RoPE table, as kv_store.comp's push constants.
uint head_dim;
uint capacity;
uint n_sink;
uint n_seq;
uint rot_dim;
uint n_pos;
VKLLM_PUSH_END(MatvecTexelPush)
// The bindings of every texel matvec, and those of matvec_texel_kv*.comp after them.
#define VKLLM_MATVEC_TEXEL_BINDINGS(S)                \
    VKLLM_TEXEL_BINDING(S, 0, w, R32G32B32A32_UINT)   \
    VKLLM_TEXEL_BINDING(S, 1, x, R32G32B32A32_SFLOAT) \
    VKLLM_BINDING(S, 2, y)                            \
    VKLLM_BINDING(S, 3, bias)                         \
    VKLLM_TEXEL_BINDING(S, 4, w2, R32G32B32A32_UINT)  \
    VKLLM_TEXEL_BINDING(S, 5, g, R32G32B32A32_SFLOAT) \
    VKLLM_BINDING(S, 6, yk)                           \
    VKLLM_BINDING(S, 7, yv)
VKLLM_BINDINGS_BEGIN(MatvecTexelBindings)
VKLLM_MATVEC_TEXEL_BINDINGS(MatvecTexelBindings)
VKLLM_BINDINGS_END(MatvecTexelBindings)
VKLLM_BINDINGS_BEGIN(MatvecTexelKvBindings)
VKLLM_MATVEC_TEXEL_BINDINGS(MatvecTexelKvBindings)
VKLLM_BINDING(MatvecTexelKvBindings, 8, k_cache)
VKLLM_BINDING(MatvecTexelKvBindings, 9, v_cache)
VKLLM_BINDING(MatvecTexelKvBindings, 10, positions)
VKLLM_BINDING(MatvecTexelKvBindings, 11, seq_ids)
VKLLM_BINDING(MatvecTexelKvBindings, 12, table)
// Per (vector, head) of the stacked output, the rows stored so far; zero between dispatches.
VKLLM_BINDING(MatvecTexelKvBindings, 13, arrivals)
VKLLM_BINDINGS_END(MatvecTexelKvBindings)

#endif
