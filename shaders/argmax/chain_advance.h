// The bindings and push constants of chain_advance.comp, declared once for the shader and the C++
// that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_CHAIN_ADVANCE_H
#define VKLLM_SHADER_CHAIN_ADVANCE_H

#include "interface.h"

VKLLM_PUSH_BEGIN(ChainAdvancePush)
uint n;       // sequences in the step
uint step;    // which step of the chain just ran
uint window;  // n_ctx - n_sink
uint n_sink;
VKLLM_PUSH_END(ChainAdvancePush)
VKLLM_BINDINGS_BEGIN(ChainAdvanceBindings)
VKLLM_BINDING(ChainAdvanceBindings, 0, ids)
VKLLM_BINDING(ChainAdvanceBindings, 1, tokens)
VKLLM_BINDING(ChainAdvanceBindings, 2, positions)
VKLLM_BINDING(ChainAdvanceBindings, 3, kv_begin)
VKLLM_BINDING(ChainAdvanceBindings, 4, out)
VKLLM_BINDINGS_END(ChainAdvanceBindings)

#endif
