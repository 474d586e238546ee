// The bindings, specialization and push constants of argmax.comp, declared once for the shader and
// the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ARGMAX_H
#define VKLLM_SHADER_ARGMAX_H

#include "interface.h"

VKLLM_SPEC_BEGIN(ArgmaxSpec)
VKLLM_SPEC(0, uint, WG, 64)
VKLLM_SPEC_END(ArgmaxSpec)
VKLLM_PUSH_BEGIN(ArgmaxPush)
uint rows;  // rows in this chunk
uint cols;  // the row stride
uint row0;  // first row of this chunk
uint n;     // candidates: the first n of each row, 1 to cols
VKLLM_PUSH_END(ArgmaxPush)
VKLLM_BINDINGS_BEGIN(ArgmaxBindings)
VKLLM_BINDING(ArgmaxBindings, 0, x)
VKLLM_BINDING(ArgmaxBindings, 1, ids)
VKLLM_BINDINGS_END(ArgmaxBindings)

#endif
