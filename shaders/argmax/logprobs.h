// The bindings, specialization and push constants of logprobs.comp, declared once for the shader
// and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_LOGPROBS_H
#define VKLLM_SHADER_LOGPROBS_H

#include "interface.h"

VKLLM_SPEC_BEGIN(LogprobsSpec)
VKLLM_SPEC(0, uint, WG, 8)
VKLLM_SPEC(1, uint, K, 1)  // candidates each lane keeps: max(top, 1)
VKLLM_SPEC_END(LogprobsSpec)
VKLLM_PUSH_BEGIN(LogprobsPush)
uint rows;  // rows in this chunk
uint cols;  // the row stride
uint row0;  // first row of this chunk
uint n;     // candidates: the first n of each row, 1 to cols
uint top;   // (id, logprob) pairs written per row, 0 to K
uint out0;  // first output row of the dispatch (a chained step's slice)
VKLLM_PUSH_END(LogprobsPush)
VKLLM_BINDINGS_BEGIN(LogprobsBindings)
VKLLM_BINDING(LogprobsBindings, 0, x)
VKLLM_BINDING(LogprobsBindings, 1, out)
VKLLM_BINDINGS_END(LogprobsBindings)

#endif
