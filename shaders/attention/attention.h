// The specialization constants of attention.comp, declared once for the shader and the C++ that
// dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ATTENTION_H
#define VKLLM_SHADER_ATTENTION_H

#include "interface.h"

VKLLM_SPEC_BEGIN(AttentionSpec)
VKLLM_SPEC(0, uint, WG, 8)
VKLLM_SPEC(1, uint, HEAD_DIM, 64)  // 32, 64, 80, 96 or 128
VKLLM_SPEC(2, uint, KV_TYPE, 1)  // gpu::KvType
VKLLM_SPEC(3, uint, G, 1)  // query heads per workgroup, at most MAXG (8)
VKLLM_SPEC(4, uint, SPLITS, 1)  // slices of the keys (z of the grid)
VKLLM_SPEC_END(AttentionSpec)

#endif
