// The bindings, specialization and push constants of moe_matvec_texel.glsl, declared once for the
// shader and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MOE_MATVEC_TEXEL_H
#define VKLLM_SHADER_MOE_MATVEC_TEXEL_H

#include "interface.h"

VKLLM_CONST(SWIGLU_NONE, 0)
VKLLM_CONST(SWIGLU_PLAIN, 1)  // gpu::Binary::SwiGLU
VKLLM_CONST(SWIGLU_OAI, 2)    // gpu::Binary::SwiGLUOai
VKLLM_SPEC_BEGIN(MoeMatvecTexelSpec)
VKLLM_SPEC(0, uint, WG, 8)
VKLLM_SPEC(1, uint, ROWS, 16)
VKLLM_SPEC(2, uint, WTYPE, 0)
VKLLM_SPEC(3, uint, NB, 1)
VKLLM_SPEC(4, uint, X_PER_ENTRY, 0)
VKLLM_SPEC(5, uint, SWIGLU, 0)   // SWIGLU_NONE, SWIGLU_PLAIN or SWIGLU_OAI
VKLLM_SPEC(6, uint, X_UNITS, 0)  // see walk_rows
// The *_subgroup shader's subgroups per workgroup at most (matvec_reduce.glsl): 1 where the
// workgroup is one subgroup.
VKLLM_SPEC(7, uint, SUBGROUPS, 1)
VKLLM_SPEC_END(MoeMatvecTexelSpec)
VKLLM_PUSH_BEGIN(MoeMatvecTexelPush)
uint rows;
uint cols;       // a multiple of 32
uint k;          // experts per token
uint n_entries;  // n_tokens * k
uint n_expert;
uint e0;  // first expert of this binding
uint n_here;
uint has_bias;
VKLLM_PUSH_END(MoeMatvecTexelPush)
VKLLM_BINDINGS_BEGIN(MoeMatvecTexelBindings)
VKLLM_TEXEL_BINDING(MoeMatvecTexelBindings, 0, w, R32G32B32A32_UINT)
VKLLM_TEXEL_BINDING(MoeMatvecTexelBindings, 1, x, R32G32B32A32_SFLOAT)
VKLLM_BINDING(MoeMatvecTexelBindings, 2, y)
VKLLM_BINDING(MoeMatvecTexelBindings, 3, route)
VKLLM_BINDING(MoeMatvecTexelBindings, 4, bias)
VKLLM_TEXEL_BINDING(MoeMatvecTexelBindings, 5, w2, R32G32B32A32_UINT)
VKLLM_BINDING(MoeMatvecTexelBindings, 6, bias2)
VKLLM_BINDINGS_END(MoeMatvecTexelBindings)

#endif
