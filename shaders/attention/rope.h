// The bindings, specialization and push constants of rope.comp, declared once for the shader and
// the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ROPE_H
#define VKLLM_SHADER_ROPE_H

#include "interface.h"

VKLLM_SPEC_BEGIN(RopeSpec)
VKLLM_SPEC(0, uint, NEOX, 0)
VKLLM_SPEC_END(RopeSpec)
VKLLM_PUSH_BEGIN(RopePush)
uint n_tokens;
uint n_heads;
uint head_dim;
uint rot_dim;
uint n_pos;  // rows in the table
VKLLM_PUSH_END(RopePush)
VKLLM_BINDINGS_BEGIN(RopeBindings)
VKLLM_BINDING(RopeBindings, 0, x)
VKLLM_BINDING(RopeBindings, 1, table)
VKLLM_BINDING(RopeBindings, 2, positions)
VKLLM_BINDINGS_END(RopeBindings)

#endif
