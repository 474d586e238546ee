// The bindings, specialization and push constants of softmax.comp, declared once for the shader and
// the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_SOFTMAX_H
#define VKLLM_SHADER_SOFTMAX_H

#include "interface.h"

VKLLM_SPEC_BEGIN(SoftmaxSpec)
VKLLM_SPEC(0, uint, WG, 64)
VKLLM_SPEC_END(SoftmaxSpec)
VKLLM_PUSH_BEGIN(SoftmaxPush)
uint cols;
float scale;
VKLLM_PUSH_END(SoftmaxPush)
VKLLM_BINDINGS_BEGIN(SoftmaxBindings)
VKLLM_BINDING(SoftmaxBindings, 0, x)
VKLLM_BINDING(SoftmaxBindings, 1, y)
VKLLM_BINDINGS_END(SoftmaxBindings)

#endif
