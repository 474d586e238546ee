// The specialization constants of attention_tiled.comp, declared once for the shader and the C++
// that dispatches it (shaders/include/interface.h). Its bindings and push constants are
// attention_common.h's.
#ifndef VKLLM_SHADER_ATTENTION_TILED_H
#define VKLLM_SHADER_ATTENTION_TILED_H

#include "interface.h"
#include "kv_cache.h"

VKLLM_SPEC_BEGIN(AttentionTiledSpec)
VKLLM_SPEC(0, uint, HEAD_DIM, 64)  // a multiple of 8 up to 256
VKLLM_SPEC(1, uint, KV_TYPE, 1)    // KV_F32, KV_F16 or KV_Q8_0 (kv_cache.h)
VKLLM_SPEC(2, uint, SOFTCAP, 0)    // 1: soft-cap the scores by the push constant softcap
VKLLM_SPEC(3, uint, BR, 16)        // tokens per workgroup: 16 or 8 (64 / BR lanes per token)
VKLLM_SPEC(4, uint, BC, 16)        // keys per tile, a multiple of 64 / BR
VKLLM_SPEC_END(AttentionTiledSpec)

#endif
