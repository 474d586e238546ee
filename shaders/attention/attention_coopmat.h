// The specialization constants of attention_coopmat.comp, declared once for the shader and the
// C++ that dispatches it (shaders/include/interface.h). Its bindings and push constants are
// attention_common.h's.
#ifndef VKLLM_SHADER_ATTENTION_COOPMAT_H
#define VKLLM_SHADER_ATTENTION_COOPMAT_H

#include "interface.h"
#include "kv_cache.h"

VKLLM_SPEC_BEGIN(AttentionCoopmatSpec)
VKLLM_SPEC(0, uint, HEAD_DIM, 64)  // a multiple of 8 up to 256
VKLLM_SPEC(1, uint, KV_TYPE, 1)    // KV_F32, KV_F16 or KV_Q8_0 (kv_cache.h)
VKLLM_SPEC(2, uint, SOFTCAP, 0)    // 1: soft-cap the scores by the push constant softcap
VKLLM_SPEC(3, uint, ROWS, 16)      // query rows (tokens x heads) per workgroup: 8 to 64
VKLLM_SPEC(4, uint, BC, 16)        // keys per tile, a multiple of TN and TK
VKLLM_SPEC(5, uint, GH, 1)         // query heads of one KV head per workgroup, at most ROWS
VKLLM_SPEC(6, uint, TM, 16)        // the device's cooperative-matrix shape (CoopmatShape m, n, k)
VKLLM_SPEC(7, uint, TN, 16)
VKLLM_SPEC(8, uint, TK, 16)
VKLLM_SPEC_END(AttentionCoopmatSpec)

#endif
