// The block codecs of the quantized ggml types, one block each (quant.cpp converts rows with
// them), and the float conversions and roundings they share.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/half.h"

namespace vkllm::format::blocks {

inline float load_f16(const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return half_to_float(h);
}

// Returns what a reader will decode, so later steps can quantize against the stored value.
inline float store_f16(uint8_t *p, float v) {
    uint16_t h = float_to_half(v);
    std::memcpy(p, &h, 2);
    return half_to_float(h);
}

inline float bf16_to_float(uint16_t h) {
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Round to nearest even, as ggml does; a NaN keeps its payload's top bits and stays quiet.
inline uint16_t float_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Nearest integer with ties to even (ggml's nearest_int), without a libm call: adding
// 1.5 * 2^23 leaves the integer in the low mantissa bits. NaN gives 0 and the magnitude is
// capped, so a hostile input cannot make a float-to-int conversion undefined.
inline int round_int(float v) {
    if (!(v == v)) return 0;
    v = std::min(std::max(v, -4194303.0f), 4194303.0f);
    float f = v + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &f, 4);
    return (i & 0x007fffff) - 0x00400000;
}

// ggml's legacy quantizers truncate after adding an offset; clamping first (NaN to lo) keeps
// the conversion defined for any input.
inline int trunc_clamped(float v, int lo, int hi) {
    if (!(v >= float(lo))) return lo;
    if (v >= float(hi)) return hi;
    return int(v);
}

inline int clamp_int(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

// The element of largest magnitude, with its sign (the first one on ties, as ggml); the
// least and greatest of n elements. (quant_blocks_32.cpp; the K-quants use them too.)
float signed_absmax(const float *x, int n);
void block_min_max(const float *x, int n, float *lo, float *hi);

// Blocks of 32 (quant_blocks_32.cpp): decoders exact to ggml's bit for bit, encoders after
// ggml's reference quantizers.
void decode_q4_0(const uint8_t *b, float *y);
void decode_q4_1(const uint8_t *b, float *y);
void decode_q5_0(const uint8_t *b, float *y);
void decode_q5_1(const uint8_t *b, float *y);
void decode_q8_0(const uint8_t *b, float *y);
void decode_mxfp4(const uint8_t *b, float *y);
void encode_mxfp4(const float *x, uint8_t *b);
void encode_q4_0(const float *x, uint8_t *b);
void encode_q4_1(const float *x, uint8_t *b);
void encode_q5_0(const float *x, uint8_t *b);
void encode_q5_1(const float *x, uint8_t *b);
void encode_q8_0(const float *x, uint8_t *b);

// Super-blocks of 256 (quant_blocks_k.cpp).
void decode_q4_k(const uint8_t *b, float *y);
void decode_q5_k(const uint8_t *b, float *y);
void decode_q6_k(const uint8_t *b, float *y);
void encode_q4_k(const float *x, uint8_t *b);
void encode_q5_k(const float *x, uint8_t *b);
void encode_q6_k(const float *x, uint8_t *b);

}  // namespace vkllm::format::blocks
