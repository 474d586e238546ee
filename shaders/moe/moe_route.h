// The bindings, specialization and push constants of moe_route.comp, declared once for the shader
// and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MOE_ROUTE_H
#define VKLLM_SHADER_MOE_ROUTE_H

#include "interface.h"

VKLLM_CONST(GATING_SOFTMAX_TOPK, 0)  // gpu::Gating::SoftmaxTopK
VKLLM_CONST(GATING_TOPK_SOFTMAX, 1)  // gpu::Gating::TopKSoftmax
VKLLM_SPEC_BEGIN(MoeRouteSpec)
VKLLM_SPEC(0, uint, GATING, 0)  // GATING_SOFTMAX_TOPK or GATING_TOPK_SOFTMAX
VKLLM_SPEC(1, uint, MAXK, 8)
VKLLM_SPEC_END(MoeRouteSpec)
VKLLM_PUSH_BEGIN(MoeRoutePush)
uint n_tokens;
uint n_expert;
uint k;
uint norm;  // GATING 0: renormalise the k probabilities
VKLLM_PUSH_END(MoeRoutePush)
VKLLM_BINDINGS_BEGIN(MoeRouteBindings)
VKLLM_BINDING(MoeRouteBindings, 0, logits)
VKLLM_BINDING(MoeRouteBindings, 1, route)
VKLLM_BINDINGS_END(MoeRouteBindings)

#endif
