// Unpacking the bytes and nibbles of a 32-bit word (weights.glsl and matvec_texel.comp).

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
