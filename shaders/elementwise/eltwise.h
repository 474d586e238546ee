// The bindings, specialization and push constants of eltwise.comp, declared once for the shader and
// the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ELTWISE_H
#define VKLLM_SHADER_ELTWISE_H

#include "interface.h"

// The operations (OP), equal to gpu::Binary's and gpu::Unary's values.
VKLLM_CONST(OP_ADD, 0)
VKLLM_CONST(OP_MUL, 1)
VKLLM_CONST(OP_SILU, 2)
VKLLM_CONST(OP_GELU, 3)
VKLLM_CONST(OP_SWIGLU, 4)
VKLLM_CONST(OP_SWIGLU_OAI, 5)
VKLLM_CONST(OP_GEGLU, 6)
VKLLM_CONST(OP_SOFTCAP, 7)
VKLLM_SPEC_BEGIN(EltwiseSpec)
VKLLM_SPEC(0, uint, OP, 0)
VKLLM_SPEC_END(EltwiseSpec)
VKLLM_PUSH_BEGIN(EltwisePush)
uint n;
uint nb;
float param;  // softcap's cap
VKLLM_PUSH_END(EltwisePush)
VKLLM_BINDINGS_BEGIN(EltwiseBindings)
VKLLM_BINDING(EltwiseBindings, 0, a)
VKLLM_BINDING(EltwiseBindings, 1, b)
VKLLM_BINDING(EltwiseBindings, 2, y)
VKLLM_BINDINGS_END(EltwiseBindings)

#endif
