// The bindings, specialization and push constants of attention_small_head.comp, declared once for
// the shader and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ATTENTION_SMALL_HEAD_H
#define VKLLM_SHADER_ATTENTION_SMALL_HEAD_H

#include "interface.h"
#include "kv_cache.h"

VKLLM_SPEC_BEGIN(AttentionSmallHeadSpec)
VKLLM_SPEC(0, uint, WG, 32)
VKLLM_SPEC(1, uint, KV_TYPE, 1)  // KV_F32, KV_F16 or KV_Q8_0 (kv_cache.h)
VKLLM_SPEC(2, uint, SOFTCAP, 0)  // 1: soft-cap the scores by the push constant softcap
VKLLM_SPEC_END(AttentionSmallHeadSpec)
VKLLM_PUSH_BEGIN(AttentionSmallHeadPush)
uint n_tokens;
uint n_heads;
uint n_kv_heads;
uint head_dim;
uint capacity;
uint n_sink;
float scale;
uint window;  // 0: none; else positions [pos - window + 1, pos] (sliding-window layers)
uint has_sinks;
float softcap;  // with SOFTCAP: scores = softcap * tanh(scores / softcap) (Gemma 2)
VKLLM_PUSH_END(AttentionSmallHeadPush)
VKLLM_BINDINGS_BEGIN(AttentionSmallHeadBindings)
VKLLM_BINDING(AttentionSmallHeadBindings, 0, q)
VKLLM_BINDING(AttentionSmallHeadBindings, 1, k_cache)
VKLLM_BINDING(AttentionSmallHeadBindings, 2, v_cache)
VKLLM_BINDING(AttentionSmallHeadBindings, 3, out)
VKLLM_BINDING(AttentionSmallHeadBindings, 4, positions)
VKLLM_BINDING(AttentionSmallHeadBindings, 5, seq_ids)
VKLLM_BINDING(AttentionSmallHeadBindings, 6, kv_begin)
VKLLM_BINDING(AttentionSmallHeadBindings, 7, sinks)
VKLLM_BINDINGS_END(AttentionSmallHeadBindings)

#endif
