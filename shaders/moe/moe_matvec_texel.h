// The specialization and push constants of moe_matvec_texel.glsl, declared once for the shader and
// the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MOE_MATVEC_TEXEL_H
#define VKLLM_SHADER_MOE_MATVEC_TEXEL_H

#include "interface.h"

VKLLM_SPEC_BEGIN(MoeMatvecTexelSpec)
VKLLM_SPEC(0, uint, WG, 8)
VKLLM_SPEC(1, uint, ROWS, 16)
VKLLM_SPEC(2, uint, WTYPE, 0)
VKLLM_SPEC(3, uint, NB, 1)
VKLLM_SPEC(4, uint, X_PER_ENTRY, 0)
VKLLM_SPEC(5, uint, SWIGLU, 0)
VKLLM_SPEC(6, uint, X_UNITS, 0)  // see walk_rows
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

#endif
