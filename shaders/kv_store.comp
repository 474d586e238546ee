#version 450
#extension GL_GOOGLE_include_directive : require
// Writes the K and V rows of a step's tokens (F32, [n_tokens][kv_dim], RoPE already applied to
// K) into the KV cache [n_seq][capacity][kv_dim] at the slot of each token's position:
// p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink). The cache holds F16 (KV_F16 = 1,
// two per word, low half first) or F32. One invocation moves 8 values of K and of V (kv_dim is
// a multiple of 16). Tokens with a negative position or a sequence outside the cache are
// skipped.
#include "common.glsl"

layout(constant_id = 0) const uint KV_F16 = 1;
layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer K { vec4 k[]; };
layout(binding = 1) readonly buffer V { vec4 v[]; };
layout(binding = 2) writeonly buffer KCache { uvec4 kc[]; };
layout(binding = 3) writeonly buffer VCache { uvec4 vc[]; };
layout(binding = 4) readonly buffer Positions { int positions[]; };
layout(binding = 5) readonly buffer SeqIds { int seq_ids[]; };
layout(push_constant) uniform Params {
    uint n_tokens;
    uint kv_dim;
    uint capacity;
    uint n_sink;
    uint n_seq;  // sequences the cache bindings hold
} p;

uvec4 pack8(vec4 a, vec4 b) {
    return uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(b.xy), packHalf2x16(b.zw));
}

void main() {
    uint units = p.kv_dim / 8u;
    uint idx = flat_group() * 64u + gl_LocalInvocationID.x;
    if (idx >= p.n_tokens * units) return;
    uint t = idx / units;
    uint u = idx % units;
    int pos = positions[t];
    int seq = seq_ids[t];
    if (pos < 0 || seq < 0 || seq >= int(p.n_seq)) return;
    uint up = uint(pos);
    uint slot = up < p.n_sink ? up : p.n_sink + (up - p.n_sink) % (p.capacity - p.n_sink);
    uint dst = (uint(seq) * p.capacity + slot) * units + u;  // in units of 8 values
    vec4 k0 = k[2u * idx], k1 = k[2u * idx + 1u];
    vec4 v0 = v[2u * idx], v1 = v[2u * idx + 1u];
    if (KV_F16 == 1u) {
        kc[dst] = pack8(k0, k1);
        vc[dst] = pack8(v0, v1);
    } else {
        kc[2u * dst] = floatBitsToUint(k0);
        kc[2u * dst + 1u] = floatBitsToUint(k1);
        vc[2u * dst] = floatBitsToUint(v0);
        vc[2u * dst + 1u] = floatBitsToUint(v1);
    }
}
