// The bindings, specialization and push constants of moe_matvec.comp, declared once for the shader
// and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MOE_MATVEC_H
#define VKLLM_SHADER_MOE_MATVEC_H

#include "interface.h"

VKLLM_SPEC_BEGIN(MoeMatvecSpec)
VKLLM_SPEC(0, uint, WG, 64)
VKLLM_SPEC(1, uint, ROWS, 4)
VKLLM_SPEC(2, uint, WTYPE, 0)
VKLLM_SPEC(3, uint, NB, 1)
VKLLM_SPEC(4, uint, X_PER_ENTRY, 0)
VKLLM_SPEC_END(MoeMatvecSpec)
VKLLM_PUSH_BEGIN(MoeMatvecPush)
uint rows;
uint cols;
uint k;          // experts per token
uint n_entries;  // n_tokens * k
uint n_expert;
uint e0;  // first expert of this binding
uint n_here;
uint has_bias;
VKLLM_PUSH_END(MoeMatvecPush)
VKLLM_BINDINGS_BEGIN(MoeMatvecBindings)
VKLLM_BINDING(MoeMatvecBindings, 0, w)
VKLLM_BINDING(MoeMatvecBindings, 1, x)
VKLLM_BINDING(MoeMatvecBindings, 2, y)
VKLLM_BINDING(MoeMatvecBindings, 3, route)
VKLLM_BINDING(MoeMatvecBindings, 4, bias)
VKLLM_BINDINGS_END(MoeMatvecBindings)

#endif
