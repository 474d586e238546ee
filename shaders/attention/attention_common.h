// The bindings and push constants of attention_common.glsl, declared once for the shader and the
// C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ATTENTION_COMMON_H
#define VKLLM_SHADER_ATTENTION_COMMON_H

#include "interface.h"

VKLLM_PUSH_BEGIN(AttentionPush)
uint n_tokens;
uint n_heads;
uint n_kv_heads;
uint capacity;
uint n_sink;
uint n_seq;  // sequences the cache bindings hold
float scale;
uint window;  // 0: all positions the ring holds
uint has_sinks;
float softcap;  // with SOFTCAP: scores = softcap * tanh(scores / softcap) (Gemma 2)
VKLLM_PUSH_END(AttentionPush)
VKLLM_BINDINGS_BEGIN(AttentionBindings)
VKLLM_BINDING(AttentionBindings, 0, q)
VKLLM_BINDING(AttentionBindings, 1, k_cache)
VKLLM_BINDING(AttentionBindings, 2, v_cache)
VKLLM_BINDING(AttentionBindings, 3, out)
VKLLM_BINDING(AttentionBindings, 4, positions)
VKLLM_BINDING(AttentionBindings, 5, seq_ids)
VKLLM_BINDING(AttentionBindings, 6, kv_begin)
VKLLM_BINDING(AttentionBindings, 7, sinks)
VKLLM_BINDINGS_END(AttentionBindings)

#endif
