#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Attention for heads too odd for attention.comp (head_dim not a multiple of 8: test models
// such as a random Llama's heads of 4; no real model). Same contract: token t,
// query head h, keys at positions [0, min(n_sink, pos + 1)) and [kv_begin, pos] of sequence
// seq_ids[t], from slot p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink), KV head
// h / (n_heads / n_kv_heads).
//
// A workgroup per (query head, token); lane d owns dimension d (head_dim <= WG). Each key's
// score is a shared-memory sum over the lanes, then every lane updates the same online
// softmax and its own output dimension. One loop iteration per key: the kernel refuses
// caches long enough to reach llvmpipe's loop limit.
#include "common.glsl"

#include "attention_small_head.h"
layout(local_size_x_id = 0) in;

layout(binding = AttentionSmallHeadBindings_q) readonly buffer Q { float q[]; };  // [n_tokens][n_heads][head_dim]
layout(binding = AttentionSmallHeadBindings_k_cache) readonly buffer KCache { uint kc[]; };
layout(binding = AttentionSmallHeadBindings_v_cache) readonly buffer VCache { uint vc[]; };
layout(binding = AttentionSmallHeadBindings_out) writeonly buffer Out { float o[]; };
layout(binding = AttentionSmallHeadBindings_positions) readonly buffer Positions { int positions[]; };
layout(binding = AttentionSmallHeadBindings_seq_ids) readonly buffer SeqIds { int seq_ids[]; };
layout(binding = AttentionSmallHeadBindings_kv_begin) readonly buffer KvBegin { int kv_begin[]; };
layout(binding = AttentionSmallHeadBindings_sinks) readonly buffer Sinks { float sinks[]; };  // [n_heads] when has_sinks

shared float partial[WG];

// Gemma 2's attention-logit soft-capping (attention_common.glsl's soft_capped).
float soft_capped(float s) {
    return SOFTCAP != 0u ? p.softcap * tanh(clamp(s / p.softcap, -10.0, 10.0)) : s;
}

// Value d of K/V row `row` (rows of head_dim values, gpu::KvType's layouts).
float cache_value(bool is_k, uint row, uint d) {
    if (KV_TYPE == KV_Q8_0) {
        uint o = row * (p.head_dim + 16u);
        uint qo = o + d, so = o + p.head_dim + 2u * (d >> 5u);
        uint qw = is_k ? kc[qo >> 2u] : vc[qo >> 2u];
        uint sw = is_k ? kc[so >> 2u] : vc[so >> 2u];
        return unpackHalf2x16(sw >> ((so & 2u) << 3u)).x * float(bitfieldExtract(int(qw), int((qo & 3u) << 3u), 8));
    }
    uint e = row * p.head_dim + d;
    if (KV_TYPE == KV_F16) {
        uint w = is_k ? kc[e >> 1u] : vc[e >> 1u];
        return unpackHalf2x16(w)[e & 1u];
    }
    return uintBitsToFloat(is_k ? kc[e] : vc[e]);
}

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint h = gl_WorkGroupID.x;
    uint t = gl_WorkGroupID.y;
    uint hd = p.head_dim;
    bool in_head = lane < hd;
    uint kvh = h / (p.n_heads / p.n_kv_heads);
    uint pos = uint(positions[t]);
    uint seq = uint(seq_ids[t]);
    uint n_s = min(p.n_sink, pos + 1u);
    uint begin = max(uint(kv_begin[t]), n_s);
    if (p.window > 0u && pos + 1u > p.window) begin = max(begin, pos + 1u - p.window);
    uint n_keys = n_s + (pos + 1u > begin ? pos + 1u - begin : 0u);
    float qd = in_head ? q[(t * p.n_heads + h) * hd + lane] * p.scale : 0.0;

    // A sink is a key with this logit and no value: the softmax starts from it.
    float m = p.has_sinks != 0u ? sinks[h] : -3.0e38;
    float l = p.has_sinks != 0u ? 1.0 : 0.0;
    float acc = 0.0;
    for (uint j = 0; j < n_keys; ++j) {
        uint position = j < n_s ? j : begin + (j - n_s);
        uint slot = position < p.n_sink ? position
                                        : p.n_sink + (position - p.n_sink) % (p.capacity - p.n_sink);
        uint row = (seq * p.capacity + slot) * p.n_kv_heads + kvh;
        partial[lane] = in_head ? qd * cache_value(true, row, lane) : 0.0;
        barrier();
        [[unroll]] for (uint s = WG / 2u; s > 0u; s >>= 1u) {
            if (lane < s) partial[lane] += partial[lane + s];
            barrier();
        }
        float score = soft_capped(partial[0]);
        barrier();
        float m_new = max(m, score);
        float corr = exp(m - m_new);
        float w = exp(score - m_new);
        l = l * corr + w;
        acc = acc * corr + (in_head ? w * cache_value(false, row, lane) : 0.0);
        m = m_new;
    }
    if (in_head) o[(t * p.n_heads + h) * hd + lane] = l > 0.0 ? acc / l : 0.0;
}
