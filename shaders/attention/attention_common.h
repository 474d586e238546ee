// The push constants of attention_common.glsl, declared once for the shader and the C++ that
// dispatches it (shaders/include/interface.h).
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
    uint window;     // 0: all positions the ring holds
    uint has_sinks;
VKLLM_PUSH_END(AttentionPush)

#endif
