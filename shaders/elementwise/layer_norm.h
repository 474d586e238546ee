// The bindings, specialization and push constants of layer_norm.comp, declared once for the shader
// and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_LAYER_NORM_H
#define VKLLM_SHADER_LAYER_NORM_H

#include "interface.h"

VKLLM_SPEC_BEGIN(LayerNormSpec)
VKLLM_SPEC(0, uint, WG, 64)
VKLLM_SPEC_END(LayerNormSpec)
VKLLM_PUSH_BEGIN(LayerNormPush)
uint cols;
float eps;
VKLLM_PUSH_END(LayerNormPush)
VKLLM_BINDINGS_BEGIN(LayerNormBindings)
VKLLM_BINDING(LayerNormBindings, 0, x)
VKLLM_BINDING(LayerNormBindings, 1, weight)
VKLLM_BINDING(LayerNormBindings, 2, bias)
VKLLM_BINDING(LayerNormBindings, 3, y)
VKLLM_BINDINGS_END(LayerNormBindings)

#endif
