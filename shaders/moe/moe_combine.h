// The bindings and push constants of moe_combine.comp, declared once for the shader and the C++
// that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_MOE_COMBINE_H
#define VKLLM_SHADER_MOE_COMBINE_H

#include "interface.h"

VKLLM_PUSH_BEGIN(MoeCombinePush)
uint n_tokens;
uint n;
uint k;
uint has_shared;
VKLLM_PUSH_END(MoeCombinePush)
VKLLM_BINDINGS_BEGIN(MoeCombineBindings)
VKLLM_BINDING(MoeCombineBindings, 0, y)
VKLLM_BINDING(MoeCombineBindings, 1, route)
VKLLM_BINDING(MoeCombineBindings, 2, shared)
VKLLM_BINDING(MoeCombineBindings, 3, shared_gate)
VKLLM_BINDING(MoeCombineBindings, 4, out)
VKLLM_BINDINGS_END(MoeCombineBindings)

#endif
