// The bindings, specialization and push constants of rms_norm.comp, declared once for the shader
// and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_RMS_NORM_H
#define VKLLM_SHADER_RMS_NORM_H

#include "interface.h"

VKLLM_SPEC_BEGIN(RmsNormSpec)
VKLLM_SPEC(0, uint, WG, 64)
VKLLM_SPEC_END(RmsNormSpec)
VKLLM_PUSH_BEGIN(RmsNormPush)
uint cols;
float eps;
VKLLM_PUSH_END(RmsNormPush)
VKLLM_BINDINGS_BEGIN(RmsNormBindings)
VKLLM_BINDING(RmsNormBindings, 0, x)
VKLLM_BINDING(RmsNormBindings, 1, weight)
VKLLM_BINDING(RmsNormBindings, 2, y)
VKLLM_BINDINGS_END(RmsNormBindings)

#endif
