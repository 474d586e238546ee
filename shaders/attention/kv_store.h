// The bindings, specialization and push constants of kv_store.comp, declared once for the shader
// and the C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_KV_STORE_H
#define VKLLM_SHADER_KV_STORE_H

#include "interface.h"
#include "kv_cache.h"

VKLLM_SPEC_BEGIN(KvStoreSpec)
VKLLM_SPEC(0, uint, KV_TYPE, 1)  // KV_F32, KV_F16 or KV_Q8_0 (kv_cache.h)
VKLLM_SPEC(1, uint, ROPE, 0)     // ROPE_NONE, ROPE_PAIRS or ROPE_NEOX (kv_cache.h)
VKLLM_SPEC_END(KvStoreSpec)
VKLLM_PUSH_BEGIN(KvStorePush)
uint n_tokens;
uint kv_dim;
uint head_dim;
uint capacity;
uint n_sink;
uint n_seq;  // sequences the cache bindings hold
uint rot_dim;
uint n_pos;  // rows in the table
uint q_heads;
VKLLM_PUSH_END(KvStorePush)
VKLLM_BINDINGS_BEGIN(KvStoreBindings)
VKLLM_BINDING(KvStoreBindings, 0, k)
VKLLM_BINDING(KvStoreBindings, 1, v)
VKLLM_BINDING(KvStoreBindings, 2, k_cache)
VKLLM_BINDING(KvStoreBindings, 3, v_cache)
VKLLM_BINDING(KvStoreBindings, 4, positions)
VKLLM_BINDING(KvStoreBindings, 5, seq_ids)
VKLLM_BINDING(KvStoreBindings, 6, table)
VKLLM_BINDING(KvStoreBindings, 7, q)
VKLLM_BINDINGS_END(KvStoreBindings)

#endif
