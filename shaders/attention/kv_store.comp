#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Writes the K and V rows of a step's tokens (F32, [n_tokens][kv_dim], RoPE already applied to
// K) into the KV cache [n_seq][capacity][kv_dim] at the slot of each token's position:
// p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink). The cache holds F32 (KV_TYPE 0),
// F16 (1, two per word, low half first) or Q8_0 rows (2, see gpu::KvType: per head, head_dim
// int8 quants then a 16-byte tail of F16 scales, one per 32 values). One invocation moves 8
// values of K and of V (kv_dim is a multiple of 16), or quantizes one head's K and V rows.
// Tokens with a negative position or a sequence outside the cache are skipped.
// ROPE > 0 rotates K on its way into the cache (rope.comp's rotation, from the same table): a
// dispatch and a pass over K fewer than rotating it in place first. 1: pairs (2i, 2i+1);
// 2: pairs (i, i + rot_dim / 2). With q_heads > 0 the invocations past the cache's also rotate
// Q in place, one pair each, as rope.comp would: the step's RoPE takes no dispatch of its own.
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

float k_at(uint i) { return k[i >> 2u][i & 3u]; }

// Element e of the head row starting at float `row` of K, rotated for position `pos`.
float roped_k(uint row, uint e, uint pos) {
    float xe = k_at(row + e);
    if (ROPE == 0u || e >= p.rot_dim) return xe;
    uint half_dim = p.rot_dim / 2u;
    bool first = ROPE == 1u ? (e & 1u) == 0u : e < half_dim;
    uint partner = ROPE == 1u ? (first ? e + 1u : e - 1u) : (first ? e + half_dim : e - half_dim);
    uint i = ROPE == 1u ? e / 2u : (first ? e : e - half_dim);
    vec2 cs = cos_sin[min(pos, p.n_pos - 1u) * half_dim + i];
    float xp = k_at(row + partner);
    return first ? xe * cs.x - xp * cs.y : xp * cs.y + xe * cs.x;
}

// The vec4 at float `at` of K (4 values of one head row), rotated when ROPE is set.
vec4 k_vec4(uint at, uint pos) {
    if (ROPE == 0u) return k[at >> 2u];
    uint row = at - at % p.head_dim, e = at % p.head_dim;
    return vec4(roped_k(row, e, pos), roped_k(row, e + 1u, pos), roped_k(row, e + 2u, pos),
                roped_k(row, e + 3u, pos));
}

uvec4 pack8(vec4 a, vec4 b) {
    return uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(b.xy), packHalf2x16(b.zw));
}

// One head's row of K (is_k) or V, from vec4 `src` of the input to uvec4 `dst` of the cache,
// as ggml quantizes Q8_0: scale = max |value| / 127 per 32 values, quant = round(value / scale).
void store_q8_0(bool is_k, uint src, uint dst, uint pos) {
    uint blocks = p.head_dim / 32u;
    uvec4 scales = uvec4(0u);
    for (uint b = 0; b < blocks; ++b) {
        vec4 vals[8];
        float amax = 0.0;
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            vals[i] = is_k ? k_vec4(4u * (src + 8u * b + i), pos) : v[src + 8u * b + i];
            vec4 a = abs(vals[i]);
            amax = max(amax, max(max(a.x, a.y), max(a.z, a.w)));
        }
        float d = amax / 127.0;
        float id = d > 0.0 ? 1.0 / d : 0.0;
        [[unroll]] for (uint h = 0; h < 2u; ++h) {
            uvec4 q;
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                ivec4 qi = clamp(ivec4(roundEven(vals[4u * h + i] * id)), -127, 127) & 0xff;
                q[i] = uint(qi.x | (qi.y << 8) | (qi.z << 16) | (qi.w << 24));
            }
            if (is_k)
                kc[dst + 2u * b + h] = q;
            else
                vc[dst + 2u * b + h] = q;
        }
        scales[b >> 1u] |= (packHalf2x16(vec2(d, 0.0)) & 0xffffu) << ((b & 1u) << 4u);
    }
    if (is_k)
        kc[dst + 2u * blocks] = scales;
    else
        vc[dst + 2u * blocks] = scales;
}

// Pair i of Q's rows, rotated in place (rope.comp's arithmetic; positions clamped likewise).
void rotate_q(uint i) {
    uint half_dim = p.rot_dim / 2u;
    if (i >= p.n_tokens * p.q_heads * half_dim) return;
    uint th = i / half_dim;  // token * q_heads + head
    uint e = i % half_dim;
    uint position = uint(clamp(positions[th / p.q_heads], 0, int(p.n_pos) - 1));
    vec2 cs = cos_sin[position * half_dim + e];
    uint base = th * p.head_dim;
    uint a = ROPE == 2u ? base + e : base + 2u * e;
    uint b = ROPE == 2u ? base + e + half_dim : base + 2u * e + 1u;
    float x0 = q[a];
    float x1 = q[b];
    q[a] = x0 * cs.x - x1 * cs.y;
    q[b] = x0 * cs.y + x1 * cs.x;
}

void main() {
    uint idx = flat_group() * 64u + gl_LocalInvocationID.x;
    uint kv_work = p.n_tokens * (KV_TYPE == 2u ? p.kv_dim / p.head_dim : p.kv_dim / 8u);
    if (ROPE > 0u && p.q_heads > 0u && idx >= kv_work) {
        rotate_q(idx - kv_work);
        return;
    }
    if (KV_TYPE == 2u) {
        uint heads = p.kv_dim / p.head_dim;
        if (idx >= p.n_tokens * heads) return;
        uint t = idx / heads;
        int pos = positions[t];
        int seq = seq_ids[t];
        if (pos < 0 || seq < 0 || seq >= int(p.n_seq)) return;
        uint up = uint(pos);
        uint slot = up < p.n_sink ? up : p.n_sink + (up - p.n_sink) % (p.capacity - p.n_sink);
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
    uint slot = up < p.n_sink ? up : p.n_sink + (up - p.n_sink) % (p.capacity - p.n_sink);
    uint dst = (uint(seq) * p.capacity + slot) * units + u;  // in units of 8 values
    vec4 k0 = k_vec4(8u * idx, up), k1 = k_vec4(8u * idx + 4u, up);
    vec4 v0 = v[2u * idx], v1 = v[2u * idx + 1u];
    if (KV_TYPE == 1u) {
        kc[dst] = pack8(k0, k1);
        vc[dst] = pack8(v0, v1);
    } else {
        kc[2u * dst] = floatBitsToUint(k0);
        kc[2u * dst + 1u] = floatBitsToUint(k1);
        vc[2u * dst] = floatBitsToUint(v0);
        vc[2u * dst + 1u] = floatBitsToUint(v1);
    }
}
