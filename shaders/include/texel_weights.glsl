// Reading weights as texels (RGBA32UI, 16 bytes per load), for the texel matrix-vector kernels
// (matvec_texel.glsl, moe_matvec_texel.comp): the 32 weights of a unit, with the scale and
// offset that apply to the unit's dot product as a whole. Include after the specialization
// constant WTYPE (gpu::WeightType) and `uvec4 fetch(uint m, uint t)`, texel t of matrix m.
// Layouts in weights.glsl.
#include "unpack.glsl"
#include "weight_types.glsl"

// The 32 weights of unit u (layouts in weights.glsl) are d * (wv - OFFSET), d wv - dm for
// Q4_K and Q5_K (K_MIN; Q4_1_G8 and Q5_1_G8 likewise with dm = -m), and d wv then dm wv for
// the two halves of a Q6_K_G8 unit (16 weights per scale): the scale is applied once to the
// unit's dot product rather than to each weight, and the offsets and mins through the sum of
// x (fewer instructions per weight: lavapipe is bound by their count). xoff holds OFFSET
// times that sum.
const bool K_MIN = WTYPE == WT_Q4_K || WTYPE == WT_Q5_K || WTYPE == WT_Q4_1_G8 || WTYPE == WT_Q5_1_G8;
const float OFFSET = WTYPE == WT_Q4_0_G8 ? 8.0 : WTYPE == WT_Q5_0_G8 ? 16.0 : K_MIN ? 1.0 : 0.0;
const bool HALVES = WTYPE == WT_Q6_K_G8;

// A unit's dot product from the sums of wv times x (of the second half apart when HALVES,
// else all in `sum`), the unit's d and dm, and xoff.
float unit_value(float sum, float sum_hi, float d, float dm, float xo) {
    return HALVES ? d * sum + dm * sum_hi : K_MIN ? d * sum - dm * xo : d * (sum - xo);
}

// The texels of unit u of matrix m as decode_unit reads them: t[0 .. TEXELS) its weights
// and, for the grouped types, `scale` the word holding its F16 scale in the low half (Q4_1_G8,
// Q5_1_G8: and its min in the high half; Q5_0_G8, Q5_1_G8: `qh` its 5th bits). Q4_K is read
// as stored (a 144-byte super-block is 9 texels: d, dmin and the 12 scale bytes, then 128
// bytes of nibbles): t[0], t[1] the 32 bytes whose low or high nibbles are the unit, t[2] the
// super-block's first texel, `sub` the unit's sub-block.
// Q5_K likewise as stored (176 bytes, 11 texels: the Q4_K header, 32 bytes of 5th bits, 128 of
// nibbles), with t[3], t[4] the 5th bits (bit `sub` of each byte). Q6_K_G8: t[0], t[1] the 32
// ql bytes whose low or high nibbles are the unit, t[2], t[3] the 32 qh bytes holding its high
// 2 bits, `sc` its two int8 scales, `sub` its sub-block. MXFP4_G16: `scale` its exponent byte.
const uint TEXELS = WTYPE == WT_F32 ? 8u : WTYPE == WT_F16 || WTYPE == WT_BF16 || WTYPE == WT_Q6_K_G8 ? 4u : WTYPE == WT_Q8_0_G8 ? 2u : WTYPE == WT_Q4_K ? 3u : WTYPE == WT_Q5_K ? 5u : 1u;
struct Unit {
    uvec4 t[8];  // TEXELS used (a struct may not hold an array sized by a specialization constant)
    uint scale;
    uint qh;
    uint sc;
    uint sub;
};

Unit fetch_unit(uint m, uint u) {
    Unit w;
    w.scale = 0u;
    w.qh = 0u;
    w.sc = 0u;
    w.sub = u & 7u;
    if (WTYPE == WT_F32 || WTYPE == WT_F16 || WTYPE == WT_BF16) {
        [[unroll]] for (uint i = 0; i < TEXELS; ++i) w.t[i] = fetch(m, TEXELS * u + i);
    } else if (WTYPE == WT_Q4_K) {
        uint b = 9u * (u >> 3u), s = u & 7u;
        w.t[0] = fetch(m, b + 1u + 2u * (s >> 1u));
        w.t[1] = fetch(m, b + 2u + 2u * (s >> 1u));
        w.t[2] = fetch(m, b);
    } else if (WTYPE == WT_Q5_K) {
        uint b = 11u * (u >> 3u), s = u & 7u;
        w.t[0] = fetch(m, b + 3u + 2u * (s >> 1u));
        w.t[1] = fetch(m, b + 4u + 2u * (s >> 1u));
        w.t[2] = fetch(m, b);
        w.t[3] = fetch(m, b + 1u);
        w.t[4] = fetch(m, b + 2u);
    } else if (WTYPE == WT_Q6_K_G8) {
        // A group is 105 texels: the 8 d, then 13 per super-block (ql 8, qh 4, scales 1). Of
        // sub-block s, half n = s / 4 and quarter g = s % 4 of it.
        uint sb = u >> 3u, s = u & 7u, n = s >> 2u, g = s & 3u;
        uint base = (sb >> 3u) * 105u, slot = sb & 7u, blk = base + 1u + 13u * slot;
        w.scale = fetch(m, base)[slot >> 1u] >> ((slot & 1u) << 4u);
        w.t[0] = fetch(m, blk + 4u * n + 2u * (g & 1u));
        w.t[1] = fetch(m, blk + 4u * n + 2u * (g & 1u) + 1u);
        w.t[2] = fetch(m, blk + 8u + 2u * n);
        w.t[3] = fetch(m, blk + 9u + 2u * n);
        w.sc = fetch(m, blk + 12u)[2u * n + (g >> 1u)] >> ((g & 1u) << 4u);
    } else if (WTYPE == WT_MXFP4_G16) {
        // A group is 17 texels: the 16 exponent bytes, then a texel of quants per block.
        uint g = (u >> 4u) * 17u, j = u & 15u;
        w.scale = (fetch(m, g)[j >> 2u] >> ((j & 3u) << 3u)) & 0xffu;
        w.t[0] = fetch(m, g + 1u + j);
    } else {
        // A group is 17 (Q8_0_G8), 9 (Q4_0_G8), 11 (Q5_0_G8), 10 (Q4_1_G8) or 12 (Q5_1_G8)
        // texels: the 8 scales (and mins), (the 5th bits,) then the quants.
        const uint HEAD = WTYPE == WT_Q4_1_G8 || WTYPE == WT_Q5_1_G8 ? 2u : 1u;
        const uint QH = WTYPE == WT_Q5_0_G8 || WTYPE == WT_Q5_1_G8 ? 2u : 0u;
        uint g = (u >> 3u) * (HEAD + QH + 8u * TEXELS), j = u & 7u;
        w.scale = HEAD == 2u ? fetch(m, g + (j >> 2u))[j & 3u] : fetch(m, g)[j >> 1u] >> ((j & 1u) << 4u);
        if (QH > 0u) w.qh = fetch(m, g + HEAD + (j >> 2u))[j & 3u];
        [[unroll]] for (uint i = 0; i < TEXELS; ++i) w.t[i] = fetch(m, g + HEAD + QH + TEXELS * j + i);
    }
    return w;
}

// MXFP4: the 8 E2M1 codes of word q (sign, 2 exponent bits, a mantissa bit per nibble) as the
// int8 bytes of their doubled values, the low nibbles' in lo, the high ones' in hi, all 8 at
// once in the word rather than through a table per weight (whose per-lane lookups made
// lavapipe's MXFP4 matvec 4x slower than Q4_0's). The magnitude of code k (3 bits) is k for
// k <= 4, then 6, 8, 12: k + (k & 3 when bit 2 is set) + 2 (when k is 7); each stays within its
// nibble. The sign then negates the byte as (m ^ 0xff) + 1, which never carries out of it
// because group_blocks stores the code of -0 as +0.
void fp4_bytes(uint q, out uint lo, out uint hi) {
    uint b2 = (q >> 2u) & 0x11111111u;
    uint mag = (q & 0x77777777u) + (q & 0x33333333u & (b2 * 3u)) + ((q & (q >> 1u) & b2) << 1u);
    uint s = (q >> 3u) & 0x11111111u;
    uint sl = s & 0x01010101u, sh = (s >> 4u) & 0x01010101u;
    lo = ((mag & 0x0f0f0f0fu) ^ (sl * 0xffu)) + sl;
    hi = (((mag >> 4u) & 0x0f0f0f0fu) ^ (sh * 0xffu)) + sh;
}

void decode_unit(Unit w, out vec4 wv[8], out float d, out float dm) {
    d = 1.0;
    dm = 0.0;
    if (WTYPE == WT_F32) {
        [[unroll]] for (uint i = 0; i < 8u; ++i) wv[i] = uintBitsToFloat(w.t[i]);
    } else if (WTYPE == WT_F16 || WTYPE == WT_BF16) {
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            uvec4 q = w.t[i];
            if (WTYPE == WT_F16) {
                wv[2u * i] = vec4(unpackHalf2x16(q.x), unpackHalf2x16(q.y));
                wv[2u * i + 1u] = vec4(unpackHalf2x16(q.z), unpackHalf2x16(q.w));
            } else {
                wv[2u * i] = uintBitsToFloat(uvec4(q.x << 16u, q.x & 0xffff0000u, q.y << 16u, q.y & 0xffff0000u));
                wv[2u * i + 1u] = uintBitsToFloat(uvec4(q.z << 16u, q.z & 0xffff0000u, q.w << 16u, q.w & 0xffff0000u));
            }
        }
    } else if (WTYPE == WT_Q4_K || WTYPE == WT_Q5_K) {  // the same header and nibbles
        uint s = w.sub;
        vec2 sm = k_scale_min_words(w.t[2].yzw, s);
        vec2 dmin = unpackHalf2x16(w.t[2].x);
        d = dmin.x * sm.x;
        dm = dmin.y * sm.y;
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            if (WTYPE == WT_Q4_K) {
                wv[i] = nibbles4(w.t[i >> 2u][i & 3u], s & 1u);
            } else {
                uint q = ((w.t[i >> 2u][i & 3u] >> ((s & 1u) << 2u)) & 0x0f0f0f0fu) |
                         (((w.t[3u + (i >> 2u)][i & 3u] >> s) & 0x01010101u) << 4u);
                wv[i] = vec4(q & 0xffu, (q >> 8u) & 0xffu, (q >> 16u) & 0xffu, q >> 24u);
            }
        }
    } else if (WTYPE == WT_Q6_K_G8) {
        // q - 32 as a 6-bit signed value is q ^ 32; shifted up 2 its bytes are int8 4 (q - 32),
        // the 4 taken back in the scales.
        uint g = w.sub & 3u;
        float d4 = 0.25 * unpackHalf2x16(w.scale).x;
        d = d4 * float(bitfieldExtract(int(w.sc), 0, 8));
        dm = d4 * float(bitfieldExtract(int(w.sc), 8, 8));
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            uint q = ((w.t[i >> 2u][i & 3u] >> ((g >> 1u) << 2u)) & 0x0f0f0f0fu) |
                     (((w.t[2u + (i >> 2u)][i & 3u] >> (2u * g)) & 0x03030303u) << 4u);
            wv[i] = int8x4((q ^ 0x20202020u) << 2u);
        }
    } else if (WTYPE == WT_MXFP4_G16) {
        d = e8m0_half(w.scale);
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            uint lo, hi;
            fp4_bytes(w.t[0][i], lo, hi);
            wv[i] = int8x4(lo);
            wv[4u + i] = int8x4(hi);
        }
    } else {
        d = unpackHalf2x16(w.scale).x;
        dm = -unpackHalf2x16(w.scale).y;  // Q4_1_G8, Q5_1_G8
        if (WTYPE == WT_Q8_0_G8) {
            [[unroll]] for (uint i = 0; i < 2u; ++i) {
                uvec4 q = w.t[i];
                wv[4u * i] = int8x4(q.x), wv[4u * i + 1u] = int8x4(q.y);
                wv[4u * i + 2u] = int8x4(q.z), wv[4u * i + 3u] = int8x4(q.w);
            }
        } else if (WTYPE == WT_Q4_0_G8 || WTYPE == WT_Q4_1_G8) {
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                wv[i] = nibbles4(w.t[0][i], 0u);
                wv[4u + i] = nibbles4(w.t[0][i], 1u);
            }
        } else {
            // Each nibble's 5th bit is moved to bit 4 of its byte, four at once: the multiply
            // puts copies of the 4 bits at 4, 11, 18 and 25, and the mask keeps bit k of copy k.
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                uint lo = (w.t[0][i] & 0x0f0f0f0fu) | ((((w.qh >> (4u * i)) & 15u) * 0x02040810u) & 0x10101010u);
                uint hi = ((w.t[0][i] >> 4u) & 0x0f0f0f0fu) |
                          ((((w.qh >> (16u + 4u * i)) & 15u) * 0x02040810u) & 0x10101010u);
                wv[i] = vec4(lo & 0xffu, (lo >> 8u) & 0xffu, (lo >> 16u) & 0xffu, lo >> 24u);
                wv[4u + i] = vec4(hi & 0xffu, (hi >> 8u) & 0xffu, (hi >> 16u) & 0xffu, hi >> 24u);
            }
        }
    }
}

void unit_weights(uint m, uint u, out vec4 wv[8], out float d, out float dm) { decode_unit(fetch_unit(m, u), wv, d, dm); }
