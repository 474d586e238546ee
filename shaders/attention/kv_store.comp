#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Writes the K and V rows of a step's tokens (F32, [n_tokens][kv_dim]) into the KV cache
// [n_seq][capacity][kv_dim] at the slot of each token's position, in the cache's type
// (kv_write.glsl, shared with the QKV kernel that stores its own K and V). One invocation moves
// 8 values of K and of V (kv_dim is a multiple of 16), or quantizes one head's K and V rows.
// Tokens with a negative position or a sequence outside the cache are skipped.
// ROPE > 0 rotates K on its way into the cache (rope.comp's rotation, from the same table): a
// dispatch and a pass over K fewer than rotating it in place first. With q_heads > 0 the
// invocations past the cache's also rotate Q in place, one pair each, as rope.comp would: the
// step's RoPE takes no dispatch of its own.
#include "common.glsl"

#include "kv_store.h"
layout(local_size_x = 64) in;

layout(binding = KvStoreBindings_k) readonly buffer K { vec4 k[]; };
layout(binding = KvStoreBindings_v) readonly buffer V { vec4 v[]; };
layout(binding = KvStoreBindings_k_cache) writeonly buffer KCache { uvec4 kc[]; };
layout(binding = KvStoreBindings_v_cache) writeonly buffer VCache { uvec4 vc[]; };
layout(binding = KvStoreBindings_positions) readonly buffer Positions { int positions[]; };
layout(binding = KvStoreBindings_seq_ids) readonly buffer SeqIds { int seq_ids[]; };
layout(binding = KvStoreBindings_table) readonly buffer Table { vec2 cos_sin[]; };  // [n_pos][rot_dim / 2]
layout(binding = KvStoreBindings_q) buffer Q { float q[]; };                     // [n_tokens][q_heads][head_dim]

float kv_k(uint i) { return k[i >> 2u][i & 3u]; }
vec4 kv_k4(uint i) { return k[i]; }
vec4 kv_v4(uint i) { return v[i]; }
float kv_q(uint i) { return q[i]; }
void kv_set_q(uint i, float value) { q[i] = value; }
#include "kv_write.glsl"

// Pair i of Q's rows, rotated in place as rope.comp would (positions clamped likewise).
void rotate_q(uint i) {
    uint half_dim = p.rot_dim / 2u;
    if (i >= p.n_tokens * p.q_heads * half_dim) return;
    uint th = i / half_dim;  // token * q_heads + head
    uint position = uint(clamp(positions[th / p.q_heads], 0, int(p.n_pos) - 1));
    rotate_q_pair(th * p.head_dim, i % half_dim, position);
}

void main() {
    uint idx = flat_group() * 64u + gl_LocalInvocationID.x;
    uint kv_work = p.n_tokens * (KV_TYPE == KV_Q8_0 ? p.kv_dim / p.head_dim : p.kv_dim / 8u);
    if (ROPE != ROPE_NONE && p.q_heads > 0u && idx >= kv_work) {
        rotate_q(idx - kv_work);
        return;
    }
    if (KV_TYPE == KV_Q8_0) {
        uint heads = p.kv_dim / p.head_dim;
        if (idx >= p.n_tokens * heads) return;
        uint t = idx / heads;
        int pos = positions[t];
        int seq = seq_ids[t];
        if (pos < 0 || seq < 0 || seq >= int(p.n_seq)) return;
        uint up = uint(pos);
        uint slot = kv_slot(up);
        uint row4 = p.head_dim / 16u + 1u;
        uint dst = ((uint(seq) * p.capacity + slot) * heads + idx % heads) * row4;
        store_q8_0(true, idx * (p.head_dim / 4u), dst, up);
        store_q8_0(false, idx * (p.head_dim / 4u), dst, up);
        return;
    }
    uint units = p.kv_dim / 8u;
    if (idx >= p.n_tokens * units) return;
    uint t = idx / units;
    uint u = idx % units;
    int pos = positions[t];
    int seq = seq_ids[t];
    if (pos < 0 || seq < 0 || seq >= int(p.n_seq)) return;
    uint up = uint(pos);
    uint dst = (uint(seq) * p.capacity + kv_slot(up)) * units + u;  // in units of 8 values
    store8(true, dst, k_vec4(8u * idx, up), k_vec4(8u * idx + 4u, up));
    store8(false, dst, v[2u * idx], v[2u * idx + 1u]);
}
