// Reading weights as GGUF stores them, in every type the kernels run. Include after declaring
// the weight buffer as `uint NAME[]`, `#define WEIGHTS NAME` and the specialization constant
// WTYPE (gpu::WeightType). Weights are read as 32-bit words so that no 8- or 16-bit storage
// feature is needed; blocks need not start on a word (Q4_0's 18-byte blocks, Q6_K's 210-byte
// ones), so multi-byte fields are assembled from the words that hold them. The constant WTYPE
// folds every branch on the type away.
//
// Block layouts (ggml's, little-endian, `h` = F16):
//   Q8_0  34 B / 32: h d, int8 q[32]                             w = d q
//   Q4_0  18 B / 32: h d, u8 qs[16]                              w = d (q - 8)
//   Q4_1  20 B / 32: h d, h m, u8 qs[16]                         w = d q + m
//   Q5_0  22 B / 32: h d, u32 qh, u8 qs[16]                      w = d (q - 16)
//   Q5_1  24 B / 32: h d, h m, u32 qh, u8 qs[16]                 w = d q + m
//   MXFP4 17 B / 32: u8 e, u8 qs[16]                             w = fp4[q] 2^(e - 128)
//     (element i < 16 is the low nibble of qs[i], element i + 16 the high one; the 5th bit of
//      element i is bit i of qh)
//   Q4_K 144 B / 256: h d, h dmin, u8 scales[12], u8 qs[128]     w = d sc q - dmin m
//   Q5_K 176 B / 256: h d, h dmin, u8 scales[12], u8 qh[32], u8 qs[128]
//     (sub-block s of 32 has a 6-bit scale sc and min m; its element l is the low (s even) or
//      high (s odd) nibble of qs[32 (s / 2) + l], Q5_K's 5th bit is bit s of qh[l])
//   Q8_0_G8, Q4_0_G8, Q5_0_G8 (regrouped at load, gpu::group_blocks): groups of 8 blocks,
//     16-byte aligned: h d[8], then the 8 blocks' quants (int8 q[32] or u8 qs[16] each; Q5_0_G8
//     first u32 qh[8]); 272 / 144 / 176 B per group
//   Q6_K_G8 (likewise): groups of 8 super-blocks: h d[8], then each block's first 208 bytes
//     (ql, qh, sc); 1680 B per group
//   Q4_1_G8, Q5_1_G8 (likewise): (h d, h m)[8], (Q5_1_G8: u32 qh[8],) u8 qs[16] each; 160 /
//     192 B per group
//   MXFP4_G16 (likewise, groups of 16 blocks): u8 e[16], then u8 qs[16] each; 272 B per group
//   Q6_K 210 B / 256: u8 ql[128], u8 qh[64], int8 sc[16], h d    w = d sc (q - 32)
//     (half n of 128, group g of 32 within it, element l: low 4 bits from
//      ql[64 n + 32 (g & 1) + l] (low nibble for g < 2), high 2 bits at bit 2 g of
//      qh[32 n + l], scale sc[8 n + 2 g + l / 16])

#include "unpack.glsl"
#include "weight_types.glsl"

// Byte o of the weights.
uint w_byte(uint o) { return (WEIGHTS[o >> 2u] >> ((o & 3u) << 3u)) & 0xffu; }

// The 4 bytes at byte o (any alignment). For an unaligned o the second word read still holds
// byte o + 3, so it is inside a binding that covers the data rounded up to words.
uint w_word(uint o) {
    uint s = (o & 3u) << 3u;
    uint lo = WEIGHTS[o >> 2u];
    return s == 0u ? lo : (lo >> s) | (WEIGHTS[(o >> 2u) + 1u] << (32u - s));
}

// The F16 at byte o (o even, so within one word).
float w_half(uint o) { return unpackHalf2x16(WEIGHTS[o >> 2u] >> ((o & 2u) << 3u)).x; }

// Bits [b, b + 1] or [b] (count c) of each byte of w as a vec4.
vec4 bits4(uint w, uint b, uint c) {
    uint m = (1u << c) - 1u;
    return vec4((w >> b) & m, (w >> (b + 8u)) & m, (w >> (b + 16u)) & m, (w >> (b + 24u)) & m);
}

// Scale and min of sub-block s of a K-quant super-block whose 12 scale bytes start at byte o.
vec2 k_scale_min(uint o, uint s) {
    if (s < 4u) return vec2(w_byte(o + s) & 63u, w_byte(o + s + 4u) & 63u);
    uint a = w_byte(o + s + 4u);
    return vec2((a & 15u) | ((w_byte(o + s - 4u) >> 6u) << 4u), (a >> 4u) | ((w_byte(o + s) >> 6u) << 4u));
}

const uint BLOCK_BYTES[WT_COUNT] = WT_BLOCK_BYTES;

// Grouped types (not Q6_K_G8): word index of the group of block u, and block u's F16 scale
// (Q4_1_G8, Q5_1_G8: scale and min).
const bool GROUP_MIN = WTYPE == WT_Q4_1_G8 || WTYPE == WT_Q5_1_G8;
uint group_word(uint u) {
    return (u >> 3u) * (WTYPE == WT_Q8_0_G8 ? 68u : WTYPE == WT_Q4_0_G8 ? 36u : WTYPE == WT_Q5_0_G8 ? 44u : WTYPE == WT_Q4_1_G8 ? 40u : 48u);
}
float group_scale(uint u) { return unpackHalf2x16(WEIGHTS[group_word(u) + ((u & 7u) >> 1u)] >> ((u & 1u) << 4u)).x; }
vec2 group_dm(uint u) { return unpackHalf2x16(WEIGHTS[group_word(u) + (u & 7u)]); }
// First word of block u's quants, and (Q5_0_G8, Q5_1_G8) its word of 5th bits.
const uint GROUP_HEAD = GROUP_MIN ? 8u : 4u;  // words of scales
uint group_quants(uint u) {
    return group_word(u) + GROUP_HEAD + (WTYPE == WT_Q5_0_G8 || WTYPE == WT_Q5_1_G8 ? 8u : 0u) + (u & 7u) * (WTYPE == WT_Q8_0_G8 ? 8u : 4u);
}
uint group_qh(uint u) { return WEIGHTS[group_word(u) + GROUP_HEAD + (u & 7u)]; }

// block u's exponent byte and the first word of its quants (68 words per group).
uint mx_exponent(uint u) { return (WEIGHTS[(u >> 4u) * 68u + ((u & 15u) >> 2u)] >> ((u & 3u) << 3u)) & 0xffu; }
uint mx_quants(uint u) { return (u >> 4u) * 68u + 4u + 4u * (u & 15u); }

// Q6_K, Q6_K_G8: the byte where the super-block of unit u starts (its ql, qh, sc at the
// offsets of Q6_K's layout), and its d.
uint q6_block(uint u) { return WTYPE == WT_Q6_K_G8 ? 4u * ((u >> 6u) * 420u + 4u + ((u >> 3u) & 7u) * 52u) : (u >> 3u) * 210u; }
float q6_d(uint u) {
    return WTYPE == WT_Q6_K_G8 ? unpackHalf2x16(WEIGHTS[(u >> 6u) * 420u + ((u >> 4u) & 3u)] >> (((u >> 3u) & 1u) << 4u)).x
                        : w_half((u >> 3u) * 210u + 208u);
}

// Bit b + 4 k of qh (k = 0 .. 3) as a vec4.
vec4 fifth_bits4(uint qh, uint b) {
    uint h = qh >> b;
    return vec4(h & 1u, (h >> 1u) & 1u, (h >> 2u) & 1u, (h >> 3u) & 1u);
}

// Weights 8 q .. 8 q + 7 of 32-weight unit u (weights 32 u .. 32 u + 31 of the tensor, which is
// whole blocks: rows are) of a block-quantized type, as a and b.
void unit_weights8(uint u, uint q, out vec4 a, out vec4 b) {
    if (WTYPE == WT_Q8_0_G8) {
        float d = group_scale(u);
        uint qw = group_quants(u) + 2u * q;
        a = d * int8x4(WEIGHTS[qw]);
        b = d * int8x4(WEIGHTS[qw + 1u]);
    } else if (WTYPE == WT_Q4_0_G8) {  // quarters 2, 3 are the high nibbles
        float d = group_scale(u);
        uint qw = group_quants(u) + 2u * (q & 1u);
        a = d * (nibbles4(WEIGHTS[qw], q >> 1u) - 8.0);
        b = d * (nibbles4(WEIGHTS[qw + 1u], q >> 1u) - 8.0);
    } else if (WTYPE == WT_Q5_0_G8) {  // as Q4_0_G8, plus the 5th bits
        float d = group_scale(u);
        uint qw = group_quants(u) + 2u * (q & 1u), qh = group_qh(u);
        a = d * (nibbles4(WEIGHTS[qw], q >> 1u) + 16.0 * fifth_bits4(qh, 8u * q) - 16.0);
        b = d * (nibbles4(WEIGHTS[qw + 1u], q >> 1u) + 16.0 * fifth_bits4(qh, 8u * q + 4u) - 16.0);
    } else if (GROUP_MIN) {  // Q4_1_G8, Q5_1_G8: d q + m (Q5_1_G8: with the 5th bits)
        vec2 dm = group_dm(u);
        uint qw = group_quants(u) + 2u * (q & 1u), qh = WTYPE == WT_Q5_1_G8 ? group_qh(u) : 0u;
        a = dm.x * (nibbles4(WEIGHTS[qw], q >> 1u) + 16.0 * fifth_bits4(qh, 8u * q)) + dm.y;
        b = dm.x * (nibbles4(WEIGHTS[qw + 1u], q >> 1u) + 16.0 * fifth_bits4(qh, 8u * q + 4u)) + dm.y;
    } else if (WTYPE == WT_MXFP4_G16) {  // quarters 2, 3 are the high nibbles
        float d = e8m0_half(mx_exponent(u));
        uint qw = mx_quants(u) + 2u * (q & 1u);
        a = d * fp4x4(WEIGHTS[qw], q >> 1u);
        b = d * fp4x4(WEIGHTS[qw + 1u], q >> 1u);
    } else if (WTYPE == WT_Q8_0) {
        uint o = u * 34u;
        float d = w_half(o);
        a = d * int8x4(w_word(o + 2u + 8u * q));
        b = d * int8x4(w_word(o + 6u + 8u * q));
    } else if (WTYPE == WT_Q4_0 || WTYPE == WT_Q4_1) {  // quarters 2, 3 are the high nibbles
        uint o = u * BLOCK_BYTES[WTYPE];
        uint qs = o + (WTYPE == WT_Q4_0 ? 2u : 4u) + 8u * (q & 1u);
        vec4 qa = nibbles4(w_word(qs), q >> 1u), qb = nibbles4(w_word(qs + 4u), q >> 1u);
        if (WTYPE == WT_Q4_0) {
            float d = w_half(o);
            a = d * (qa - 8.0);
            b = d * (qb - 8.0);
        } else {
            vec2 dm = unpackHalf2x16(WEIGHTS[o >> 2u]);
            a = dm.x * qa + dm.y;
            b = dm.x * qb + dm.y;
        }
    } else if (WTYPE == WT_Q5_0 || WTYPE == WT_Q5_1) {
        uint o = u * BLOCK_BYTES[WTYPE];
        uint h = WTYPE == WT_Q5_0 ? 2u : 4u;
        uint qh = w_word(o + h) >> (8u * q);  // the 5th bits of this quarter, one per weight
        uint qs = o + h + 4u + 8u * (q & 1u);
        vec4 qa = nibbles4(w_word(qs), q >> 1u) + 16.0 * vec4(qh & 1u, (qh >> 1u) & 1u, (qh >> 2u) & 1u, (qh >> 3u) & 1u);
        vec4 qb = nibbles4(w_word(qs + 4u), q >> 1u) +
                  16.0 * vec4((qh >> 4u) & 1u, (qh >> 5u) & 1u, (qh >> 6u) & 1u, (qh >> 7u) & 1u);
        if (WTYPE == WT_Q5_0) {
            float d = w_half(o);
            a = d * (qa - 16.0);
            b = d * (qb - 16.0);
        } else {
            vec2 dm = unpackHalf2x16(WEIGHTS[o >> 2u]);
            a = dm.x * qa + dm.y;
            b = dm.x * qb + dm.y;
        }
    } else if (WTYPE == WT_Q4_K || WTYPE == WT_Q5_K) {
        uint s = u & 7u;
        uint o = (u >> 3u) * BLOCK_BYTES[WTYPE];
        vec2 dm = unpackHalf2x16(WEIGHTS[o >> 2u]);
        vec2 sm = k_scale_min(o + 4u, s);
        float d = dm.x * sm.x, m = dm.y * sm.y;
        uint qs = o + (WTYPE == WT_Q4_K ? 16u : 48u) + 32u * (s >> 1u) + 8u * q;
        vec4 qa = nibbles4(WEIGHTS[qs >> 2u], s & 1u), qb = nibbles4(WEIGHTS[(qs >> 2u) + 1u], s & 1u);
        if (WTYPE == WT_Q5_K) {
            uint qh = o + 16u + 8u * q;
            qa += 16.0 * bits4(WEIGHTS[qh >> 2u], s, 1u);
            qb += 16.0 * bits4(WEIGHTS[(qh >> 2u) + 1u], s, 1u);
        }
        a = d * qa - m;
        b = d * qb - m;
    } else if (WTYPE == WT_Q6_K || WTYPE == WT_Q6_K_G8) {
        uint s = u & 7u;
        uint o = q6_block(u);
        uint n = s >> 2u, g = s & 3u;
        uint ql = o + 64u * n + 32u * (g & 1u) + 8u * q;
        uint qh = o + 128u + 32u * n + 8u * q;
        float d = q6_d(u) * float(bitfieldExtract(int(w_byte(o + 192u + 8u * n + 2u * g + (q >> 1u))), 0, 8));
        a = d * (nibbles4(w_word(ql), g >> 1u) + 16.0 * bits4(w_word(qh), 2u * g, 2u) - 32.0);
        b = d * (nibbles4(w_word(ql + 4u), g >> 1u) + 16.0 * bits4(w_word(qh + 4u), 2u * g, 2u) - 32.0);
    } else {  // MXFP4
        uint o = u * 17u;
        float d = e8m0_half(w_byte(o));
        uint qs = o + 1u + 8u * (q & 1u);
        a = d * fp4x4(w_word(qs), q >> 1u);
        b = d * fp4x4(w_word(qs + 4u), q >> 1u);
    }
}

// The bytes of a block of at most 24 bytes at byte o, as words from its first byte: A[i] holds
// block bytes 4i .. 4i + 3 (the words holding the block are loaded once, none past it).
void block_words(uint o, uint nbytes, out uint A[7]) {
    uint b = o >> 2u, sh = (o & 3u) << 3u;
    uint W[8];
    [[unroll]] for (uint i = 0; i < 8u; ++i) W[i] = 4u * i < (o & 3u) + nbytes ? WEIGHTS[b + i] : 0u;
    [[unroll]] for (uint i = 0; i < 7u; ++i) A[i] = sh == 0u ? W[i] : (W[i] >> sh) | (W[i + 1u] << (32u - sh));
}

// The 4 bytes at block byte t of A (t a constant once unrolled).
uint field4(uint A[7], uint t) {
    uint i = t >> 2u, sh = (t & 3u) << 3u;
    return sh == 0u ? A[i] : (A[i] >> sh) | (A[i + 1u] << (32u - sh));
}

// The 32 bytes at byte o (o even), as 8 words.
void words32(uint o, out uint A[8]) {
    uint b = o >> 2u;
    bool odd = (o & 2u) != 0u;
    uint W[9];
    [[unroll]] for (uint i = 0; i < 8u; ++i) W[i] = WEIGHTS[b + i];
    W[8] = odd ? WEIGHTS[b + 8u] : 0u;
    [[unroll]] for (uint i = 0; i < 8u; ++i) A[i] = odd ? (W[i] >> 16u) | (W[i + 1u] << 16u) : W[i];
}

// All 32 weights of unit u, as wv[0..7], loading each word of the unit's data once (the
// quarter-by-quarter decoding of unit_weights8 reloads headers and straddling words). Any
// type; for F32/F16/BF16 the rows must be whole units of 32.
void unit_weights32(uint u, out vec4 wv[8]) {
    if (WTYPE == WT_F32) {
        [[unroll]] for (uint i = 0; i < 8u; ++i)
            wv[i] = uintBitsToFloat(uvec4(WEIGHTS[32u * u + 4u * i], WEIGHTS[32u * u + 4u * i + 1u],
                                          WEIGHTS[32u * u + 4u * i + 2u], WEIGHTS[32u * u + 4u * i + 3u]));
    } else if (WTYPE == WT_F16 || WTYPE == WT_BF16) {  // two 16-bit weights per word
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            uint a = WEIGHTS[16u * u + 2u * i], b = WEIGHTS[16u * u + 2u * i + 1u];
            wv[i] = WTYPE == WT_F16 ? vec4(unpackHalf2x16(a), unpackHalf2x16(b))
                                : uintBitsToFloat(uvec4(a << 16u, a & 0xffff0000u, b << 16u, b & 0xffff0000u));
        }
    } else if (WTYPE >= WT_Q8_0_G8 && WTYPE <= WT_Q5_0_G8 || GROUP_MIN) {  // the grouped types but Q6_K_G8
        vec2 dm = GROUP_MIN ? group_dm(u) : vec2(group_scale(u), 0.0);
        float d = dm.x;
        uint qw = group_quants(u), qh = WTYPE == WT_Q5_0_G8 || WTYPE == WT_Q5_1_G8 ? group_qh(u) : 0u;
        [[unroll]] for (uint i = 0; i < (WTYPE == WT_Q8_0_G8 ? 8u : 4u); ++i) {
            uint q = WEIGHTS[qw + i];
            if (WTYPE == WT_Q8_0_G8) {
                wv[i] = d * int8x4(q);
            } else if (WTYPE == WT_Q4_0_G8) {
                wv[i] = d * (nibbles4(q, 0u) - 8.0);
                wv[4u + i] = d * (nibbles4(q, 1u) - 8.0);
            } else if (GROUP_MIN) {
                wv[i] = d * (nibbles4(q, 0u) + 16.0 * fifth_bits4(qh, 4u * i)) + dm.y;
                wv[4u + i] = d * (nibbles4(q, 1u) + 16.0 * fifth_bits4(qh, 16u + 4u * i)) + dm.y;
            } else {
                wv[i] = d * (nibbles4(q, 0u) + 16.0 * fifth_bits4(qh, 4u * i) - 16.0);
                wv[4u + i] = d * (nibbles4(q, 1u) + 16.0 * fifth_bits4(qh, 16u + 4u * i) - 16.0);
            }
        }
    } else if (WTYPE == WT_MXFP4_G16) {
        float d = e8m0_half(mx_exponent(u));
        uint qw = mx_quants(u);
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            wv[i] = d * fp4x4(WEIGHTS[qw + i], 0u);
            wv[4u + i] = d * fp4x4(WEIGHTS[qw + i], 1u);
        }
    } else if (WTYPE == WT_Q8_0) {  // the 9 words holding the 34-byte block
        uint o = u * 34u;
        uint bw = o >> 2u;
        bool aligned = (o & 3u) == 0u;  // else the block starts at byte 2 of its first word
        uint W[9];
        [[unroll]] for (uint i = 0; i < 9u; ++i) W[i] = WEIGHTS[bw + i];
        vec2 dd = unpackHalf2x16(W[0]);
        float d = aligned ? dd.x : dd.y;
        [[unroll]] for (uint i = 0; i < 8u; ++i) wv[i] = d * int8x4(aligned ? (W[i] >> 16u) | (W[i + 1u] << 16u) : W[i + 1u]);
    } else if (WTYPE >= WT_Q4_0 && WTYPE <= WT_Q5_1 || WTYPE == WT_MXFP4) {  // Q4_0, Q4_1, Q5_0, Q5_1, MXFP4
        uint A[7];
        block_words(u * BLOCK_BYTES[WTYPE], BLOCK_BYTES[WTYPE], A);
        // Where the quants start, the scale (and min), the 5th bits.
        uint qs = WTYPE == WT_Q4_0 ? 2u : WTYPE == WT_Q4_1 ? 4u : WTYPE == WT_Q5_0 ? 6u : WTYPE == WT_Q5_1 ? 8u : 1u;
        vec2 dm = unpackHalf2x16(A[0]);
        float d = WTYPE == WT_MXFP4 ? e8m0_half(A[0] & 0xffu) : dm.x;
        float m = WTYPE == WT_Q4_1 || WTYPE == WT_Q5_1 ? dm.y : WTYPE == WT_Q4_0 ? -8.0 * d : WTYPE == WT_Q5_0 ? -16.0 * d : 0.0;
        uint qh = WTYPE == WT_Q5_0 ? field4(A, 2u) : WTYPE == WT_Q5_1 ? A[1] : 0u;
        [[unroll]] for (uint j = 0; j < 4u; ++j) {
            uint q = field4(A, qs + 4u * j);
            if (WTYPE == WT_MXFP4) {
                wv[j] = d * fp4x4(q, 0u);
                wv[4u + j] = d * fp4x4(q, 1u);
                continue;
            }
            vec4 lo = nibbles4(q, 0u), hi = nibbles4(q, 1u);
            if (WTYPE == WT_Q5_0 || WTYPE == WT_Q5_1) {
                uint l = qh >> (4u * j), h = qh >> (16u + 4u * j);
                lo += 16.0 * vec4(l & 1u, (l >> 1u) & 1u, (l >> 2u) & 1u, (l >> 3u) & 1u);
                hi += 16.0 * vec4(h & 1u, (h >> 1u) & 1u, (h >> 2u) & 1u, (h >> 3u) & 1u);
            }
            wv[j] = d * lo + m;
            wv[4u + j] = d * hi + m;
        }
    } else if (WTYPE == WT_Q4_K || WTYPE == WT_Q5_K) {  // super-blocks start on 16 bytes
        uint s = u & 7u;
        uint o = (u >> 3u) * BLOCK_BYTES[WTYPE];
        uint b = o >> 2u;
        vec2 dm = unpackHalf2x16(WEIGHTS[b]);
        vec2 sm = k_scale_min_words(uvec3(WEIGHTS[b + 1u], WEIGHTS[b + 2u], WEIGHTS[b + 3u]), s);
        float d = dm.x * sm.x, m = dm.y * sm.y;
        uint q0 = b + (WTYPE == WT_Q4_K ? 4u : 12u) + 8u * (s >> 1u);
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            vec4 q = nibbles4(WEIGHTS[q0 + i], s & 1u);
            if (WTYPE == WT_Q5_K) q += 16.0 * bits4(WEIGHTS[b + 4u + i], s, 1u);
            wv[i] = d * q - m;
        }
    } else if (WTYPE == WT_Q6_K || WTYPE == WT_Q6_K_G8) {
        uint s = u & 7u;
        uint o = q6_block(u);
        uint n = s >> 2u, g = s & 3u;
        uint ql[8], qh[8];
        words32(o + 64u * n + 32u * (g & 1u), ql);
        words32(o + 128u + 32u * n, qh);
        uint sw = w_word(o + 192u + 8u * n + 2u * g);  // the scales of l < 16 and l >= 16
        float d = q6_d(u);
        float d0 = d * float(bitfieldExtract(int(sw), 0, 8)), d1 = d * float(bitfieldExtract(int(sw), 8, 8));
        [[unroll]] for (uint i = 0; i < 8u; ++i)
            wv[i] = (i < 4u ? d0 : d1) * (nibbles4(ql[i], g >> 1u) + 16.0 * bits4(qh[i], 2u * g, 2u) - 32.0);
    } else {
        [[unroll]] for (uint q = 0; q < 4u; ++q) unit_weights8(u, q, wv[2u * q], wv[2u * q + 1u]);
    }
}

// Weight e of the tensor (row-major, so weight c of row r is e = r cols + c), any type.
float weight_at(uint e) {
    if (WTYPE == WT_F32) return uintBitsToFloat(WEIGHTS[e]);
    if (WTYPE == WT_F16) return unpackHalf2x16(WEIGHTS[e >> 1u])[e & 1u];
    if (WTYPE == WT_BF16) return uintBitsToFloat((WEIGHTS[e >> 1u] << ((~e & 1u) << 4u)) & 0xffff0000u);
    vec4 a, b;
    unit_weights8(e >> 5u, (e >> 3u) & 3u, a, b);
    uint i = e & 7u;
    return i < 4u ? a[i] : b[i - 4u];
}
