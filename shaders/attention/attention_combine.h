// The bindings, specialization and push constants of attention_combine.comp, declared once for the
// shader and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ATTENTION_COMBINE_H
#define VKLLM_SHADER_ATTENTION_COMBINE_H

#include "interface.h"

VKLLM_SPEC_BEGIN(AttentionCombineSpec)
VKLLM_SPEC(0, uint, HEAD_DIM, 64)
VKLLM_SPEC(1, uint, SPLITS, 2)
VKLLM_SPEC_END(AttentionCombineSpec)
VKLLM_PUSH_BEGIN(AttentionCombinePush)
uint n;  // n_tokens * n_heads
uint n_heads;
uint has_sinks;
VKLLM_PUSH_END(AttentionCombinePush)
VKLLM_BINDINGS_BEGIN(AttentionCombineBindings)
VKLLM_BINDING(AttentionCombineBindings, 0, part)
VKLLM_BINDING(AttentionCombineBindings, 1, sinks)
VKLLM_BINDING(AttentionCombineBindings, 2, out)
VKLLM_BINDINGS_END(AttentionCombineBindings)

#endif
