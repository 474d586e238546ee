// Unpacking the bytes and nibbles of 32-bit words (weights.glsl and matvec_texel.glsl).

// Nibble n (0 = low) of each byte of w as a vec4.
vec4 nibbles4(uint w, uint n) {
    uint s = n << 2u;
    return vec4((w >> s) & 15u, (w >> (s + 8u)) & 15u, (w >> (s + 16u)) & 15u, (w >> (s + 24u)) & 15u);
}

// The four bytes of w as signed values.
vec4 int8x4(uint w) {
    return vec4(bitfieldExtract(int(w), 0, 8), bitfieldExtract(int(w), 8, 8), bitfieldExtract(int(w), 16, 8),
                bitfieldExtract(int(w), 24, 8));
}

// The 6-bit scale and min of sub-block s of a K-quant super-block (Q4_K, Q5_K) from the words
// holding its 12 scale bytes (ggml's packing: sub-blocks 4-7 keep their high bits in the top
// two bits of the first 8 bytes).
vec2 k_scale_min_words(uvec3 sc, uint s) {
    uint sh = (s & 3u) << 3u;
    uint b0 = (sc.x >> sh) & 0xffu, b1 = (sc.y >> sh) & 0xffu, b2 = (sc.z >> sh) & 0xffu;
    return s < 4u ? vec2(b0 & 63u, b1 & 63u) : vec2((b2 & 15u) | ((b0 >> 6u) << 4u), (b2 >> 4u) | ((b1 >> 6u) << 4u));
}

// FP4 (E2M1) values doubled, so that the block scale is 2^(e - 128).
const float FP4[16] = float[16](0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0,
                                -12.0);

vec4 fp4x4(uint w, uint n) {
    uint s = n << 2u;
    return vec4(FP4[(w >> s) & 15u], FP4[(w >> (s + 8u)) & 15u], FP4[(w >> (s + 16u)) & 15u],
                FP4[(w >> (s + 24u)) & 15u]);
}

// 2^(e - 128) for an E8M0 exponent byte (as ggml: the two smallest are denormals).
float e8m0_half(uint e) { return uintBitsToFloat(e < 2u ? 0x00200000u << e : (e - 1u) << 23u); }
