// How the KV cache stores its rows (the KV_TYPE specialization constant of the attention
// kernels, kv_store and matvec_texel_kv: gpu::KvType, whose values the kernels check equal
// these) and the RoPE a kernel applies to K on its way into the cache (their ROPE).
#ifndef VKLLM_SHADER_KV_CACHE_H
#define VKLLM_SHADER_KV_CACHE_H

#include "interface.h"

VKLLM_CONST(KV_F32, 0)
VKLLM_CONST(KV_F16, 1)   // two per word, low half first
VKLLM_CONST(KV_Q8_0, 2)  // int8 quants then a 16-byte tail of F16 scales, one per 32 values
VKLLM_CONST(ROPE_NONE, 0)
VKLLM_CONST(ROPE_PAIRS, 1)  // rotate (2i, 2i+1): gpu::RopeLayout::Interleaved
VKLLM_CONST(ROPE_NEOX, 2)   // rotate (i, i + rot_dim/2): gpu::RopeLayout::Neox

#endif
