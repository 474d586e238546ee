// Writing K and V rows into the KV cache, rotating K on the way: shared by kv_store.comp and
// the QKV matrix-vector kernel that stores its own K and V (matvec_kv_epilogue.glsl), so both
// round, pack and place a value alike. The cache holds F32 (KV_TYPE 0), F16 (1, two per word,
// low half first) or Q8_0 rows (2, see gpu::KvType: per head, head_dim int8 quants then a
// 16-byte tail of F16 scales, one per 32 values). ROPE 1 rotates pairs (2i, 2i+1), 2 pairs
// (i, i + rot_dim / 2), from the table of rope.comp.
//
// The including shader declares the constants KV_TYPE and ROPE; the push constants head_dim,
// capacity, n_sink, rot_dim and n_pos; the buffers kc and vc (uvec4, the caches) and cos_sin
// (vec2, [n_pos][rot_dim / 2]); kv_k(i) (float i of the K input), kv_k4(i) and kv_v4(i) (vec4
// i of the K and V inputs), both inputs [n_tokens][kv_dim]; and kv_q(i), kv_set_q(i, v) (float
// i of Q, which rotates in place).

// The slot of position `pos` in its sequence's ring: the sink's positions keep theirs.
uint kv_slot(uint pos) {
    return pos < p.n_sink ? pos : p.n_sink + (pos - p.n_sink) % (p.capacity - p.n_sink);
}

// Element e of the head row starting at float `row` of K, rotated for position `pos`.
float roped_k(uint row, uint e, uint pos) {
    float xe = kv_k(row + e);
    if (ROPE == ROPE_NONE || e >= p.rot_dim) return xe;
    uint half_dim = p.rot_dim / 2u;
    bool first = ROPE == ROPE_PAIRS ? (e & 1u) == 0u : e < half_dim;
    uint partner = ROPE == ROPE_PAIRS ? (first ? e + 1u : e - 1u) : (first ? e + half_dim : e - half_dim);
    uint i = ROPE == ROPE_PAIRS ? e / 2u : (first ? e : e - half_dim);
    vec2 cs = cos_sin[min(pos, p.n_pos - 1u) * half_dim + i];
    float xp = kv_k(row + partner);
    return first ? xe * cs.x - xp * cs.y : xp * cs.y + xe * cs.x;
}

// The vec4 at float `at` of K (4 values of one head row), rotated when ROPE is set.
vec4 k_vec4(uint at, uint pos) {
    if (ROPE == ROPE_NONE) return kv_k4(at >> 2u);
    uint row = at - at % p.head_dim, e = at % p.head_dim;
    return vec4(roped_k(row, e, pos), roped_k(row, e + 1u, pos), roped_k(row, e + 2u, pos),
                roped_k(row, e + 3u, pos));
}

uvec4 pack8(vec4 a, vec4 b) {
    return uvec4(packHalf2x16(a.xy), packHalf2x16(a.zw), packHalf2x16(b.xy), packHalf2x16(b.zw));
}

// 8 values of K (is_k) or V into unit `dst` (8 values) of an F32 or F16 cache.
void store8(bool is_k, uint dst, vec4 a, vec4 b) {
    if (KV_TYPE == KV_F16) {
        if (is_k)
            kc[dst] = pack8(a, b);
        else
            vc[dst] = pack8(a, b);
        return;
    }
    if (is_k) {
        kc[2u * dst] = floatBitsToUint(a);
        kc[2u * dst + 1u] = floatBitsToUint(b);
    } else {
        vc[2u * dst] = floatBitsToUint(a);
        vc[2u * dst + 1u] = floatBitsToUint(b);
    }
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
            vals[i] = is_k ? k_vec4(4u * (src + 8u * b + i), pos) : kv_v4(src + 8u * b + i);
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

// Pair i of the Q head row starting at float `base`, rotated in place for position `pos`
// (rope.comp's arithmetic).
void rotate_q_pair(uint base, uint i, uint pos) {
    uint half_dim = p.rot_dim / 2u;
    vec2 cs = cos_sin[pos * half_dim + i];
    uint a = ROPE == ROPE_NEOX ? base + i : base + 2u * i;
    uint b = ROPE == ROPE_NEOX ? base + i + half_dim : base + 2u * i + 1u;
    float x0 = kv_q(a), x1 = kv_q(b);
    kv_set_q(a, x0 * cs.x - x1 * cs.y);
    kv_set_q(b, x0 * cs.y + x1 * cs.x);
}
