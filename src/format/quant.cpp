#include "format/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "common/error.h"
#include "common/half.h"
#include "format/ggml_types.h"

namespace vkllm::format {

namespace {

// Block codecs see a whole number of blocks in aligned local buffers; the row functions do the
// (possibly unaligned) copying in and out.
using DecodeFn = void (*)(const uint8_t *src, float *dst, size_t n_blocks);
using EncodeFn = void (*)(const float *src, uint8_t *dst, size_t n_blocks);

float load_f16(const uint8_t *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return half_to_float(h);
}

// Returns what a reader will decode, so later steps can quantize against the stored value.
float store_f16(uint8_t *p, float v) {
    uint16_t h = float_to_half(v);
    std::memcpy(p, &h, 2);
    return half_to_float(h);
}

float bf16_to_float(uint16_t h) {
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Round to nearest even, as ggml does; a NaN keeps its payload's top bits and stays quiet.
uint16_t float_to_bf16(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
    return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// Nearest integer with ties to even (ggml's nearest_int), without a libm call: adding
// 1.5 * 2^23 leaves the integer in the low mantissa bits. NaN gives 0 and the magnitude is
// capped, so a hostile input cannot make a float-to-int conversion undefined.
int round_int(float v) {
    if (!(v == v)) return 0;
    v = std::min(std::max(v, -4194303.0f), 4194303.0f);
    float f = v + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &f, 4);
    return (i & 0x007fffff) - 0x00400000;
}

// ggml's legacy quantizers truncate after adding an offset; clamping first (NaN to lo) keeps
// the conversion defined for any input.
int trunc_clamped(float v, int lo, int hi) {
    if (!(v >= float(lo))) return lo;
    if (v >= float(hi)) return hi;
    return int(v);
}

int clamp_int(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

// ---- Plain types ----

void decode_f32(const uint8_t *src, float *dst, size_t n) {
    std::memcpy(dst, src, n * 4);
}
void encode_f32(const float *src, uint8_t *dst, size_t n) {
    std::memcpy(dst, src, n * 4);
}

void decode_f16(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        dst[i] = load_f16(src + 2 * i);
}
void encode_f16(const float *src, uint8_t *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        store_f16(dst + 2 * i, src[i]);
}

void decode_bf16(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = bf16_to_float(h);
    }
}
void encode_bf16(const float *src, uint8_t *dst, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        uint16_t h = float_to_bf16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
    }
}

// ---- Blocks of 32 ----
// The decoders keep ggml's operation order (int * float, then + m) so results are identical
// to the bit.

void decode_q4_0(const uint8_t *b, float *y) {
    float d = load_f16(b);
    const uint8_t *qs = b + 2;
    for (int j = 0; j < 16; ++j) {
        int x0 = (qs[j] & 0x0f) - 8;
        int x1 = (qs[j] >> 4) - 8;
        y[j] = x0 * d;
        y[j + 16] = x1 * d;
    }
}

void decode_q4_1(const uint8_t *b, float *y) {
    float d = load_f16(b), m = load_f16(b + 2);
    const uint8_t *qs = b + 4;
    for (int j = 0; j < 16; ++j) {
        int x0 = qs[j] & 0x0f;
        int x1 = qs[j] >> 4;
        y[j] = x0 * d + m;
        y[j + 16] = x1 * d + m;
    }
}

void decode_q5_0(const uint8_t *b, float *y) {
    float d = load_f16(b);
    uint32_t qh;
    std::memcpy(&qh, b + 2, 4);
    const uint8_t *qs = b + 6;
    for (int j = 0; j < 16; ++j) {
        int hi0 = int((qh >> j) & 1u) << 4;
        int hi1 = int((qh >> (j + 16)) & 1u) << 4;
        int x0 = ((qs[j] & 0x0f) | hi0) - 16;
        int x1 = ((qs[j] >> 4) | hi1) - 16;
        y[j] = x0 * d;
        y[j + 16] = x1 * d;
    }
}

void decode_q5_1(const uint8_t *b, float *y) {
    float d = load_f16(b), m = load_f16(b + 2);
    uint32_t qh;
    std::memcpy(&qh, b + 4, 4);
    const uint8_t *qs = b + 8;
    for (int j = 0; j < 16; ++j) {
        int hi0 = int((qh >> j) & 1u) << 4;
        int hi1 = int((qh >> (j + 16)) & 1u) << 4;
        y[j] = ((qs[j] & 0x0f) | hi0) * d + m;
        y[j + 16] = ((qs[j] >> 4) | hi1) * d + m;
    }
}

void decode_q8_0(const uint8_t *b, float *y) {
    float d = load_f16(b);
    for (int j = 0; j < 32; ++j)
        y[j] = int8_t(b[2 + j]) * d;
}

// MXFP4: E2M1 values (doubled, so they are integers) scaled by an E8M0 exponent halved.
const int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

void decode_mxfp4(const uint8_t *b, float *y) {
    // 2^(e - 128) built from its bits: e = 0 and 1 are subnormal floats.
    uint32_t e = b[0];
    uint32_t bits = e < 2 ? 0x00200000u << e : (e - 1) << 23;
    float d;
    std::memcpy(&d, &bits, 4);
    const uint8_t *qs = b + 1;
    for (int j = 0; j < 16; ++j) {
        y[j] = kMxfp4Values[qs[j] & 0x0f] * d;
        y[j + 16] = kMxfp4Values[qs[j] >> 4] * d;
    }
}

// ggml's quantize_row_mxfp4_ref: the shared exponent puts the block's largest magnitude
// in [4, 8) E2M1 units before rounding (floor(log2(amax)) - 2), so it maps to 4 or 6 (values
// of 6 up to 8 units are clipped to 6); each value then takes the code of least error, the
// lowest code on ties (a scan in code order, as ggml's best_index_mxfp4). Exponents are
// clamped to E8M0's finite range (ggml's cast is undefined for a tiny or infinite amax).
void encode_mxfp4(const float *x, uint8_t *b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
    int e = 0;
    if (amax > 0.0f) {
        float l = std::floor(std::log2(amax)) - 2.0f + 127.0f;
        e = !(l >= 0.0f) ? 0 : l >= 254.0f ? 254 : int(l);
    }
    b[0] = uint8_t(e);
    // Half the scale, as kMxfp4Values holds doubled E2M1 values: 2^(e - 128).
    uint32_t bits = e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
    float d;
    std::memcpy(&d, &bits, 4);
    auto best = [d](float v) {
        int index = 0;
        float best_err = std::fabs(kMxfp4Values[0] * d - v);
        for (int i = 1; i < 16; ++i) {
            float err = std::fabs(kMxfp4Values[i] * d - v);
            if (err < best_err) {
                index = i;
                best_err = err;
            }
        }
        return index;
    };
    for (int j = 0; j < 16; ++j)
        b[1 + j] = uint8_t(best(x[j]) | (best(x[j + 16]) << 4));
}

// The element of largest magnitude, with its sign (the first one on ties, as ggml).
float signed_absmax(const float *x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j)
        if (std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    return max;
}

void encode_q4_0(const float *x, uint8_t *b) {
    // The extreme maps to -8, the end of the range with one more step.
    float d = signed_absmax(x, 32) / -8.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(b, d);
    for (int j = 0; j < 16; ++j) {
        int q0 = trunc_clamped(x[j] * id + 8.5f, 0, 15);
        int q1 = trunc_clamped(x[j + 16] * id + 8.5f, 0, 15);
        b[2 + j] = uint8_t(q0 | (q1 << 4));
    }
}

void block_min_max(const float *x, int n, float *lo, float *hi) {
    *lo = x[0];
    *hi = x[0];
    for (int j = 1; j < n; ++j) {
        *lo = std::min(*lo, x[j]);
        *hi = std::max(*hi, x[j]);
    }
}

void encode_q4_1(const float *x, uint8_t *b) {
    float lo, hi;
    block_min_max(x, 32, &lo, &hi);
    float d = (hi - lo) / 15.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(b, d);
    store_f16(b + 2, lo);
    for (int j = 0; j < 16; ++j) {
        int q0 = trunc_clamped((x[j] - lo) * id + 0.5f, 0, 15);
        int q1 = trunc_clamped((x[j + 16] - lo) * id + 0.5f, 0, 15);
        b[4 + j] = uint8_t(q0 | (q1 << 4));
    }
}

void encode_q5_0(const float *x, uint8_t *b) {
    float d = signed_absmax(x, 32) / -16.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(b, d);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        int q0 = trunc_clamped(x[j] * id + 16.5f, 0, 31);
        int q1 = trunc_clamped(x[j + 16] * id + 16.5f, 0, 31);
        b[6 + j] = uint8_t((q0 & 0x0f) | ((q1 & 0x0f) << 4));
        qh |= uint32_t(q0 >> 4) << j;
        qh |= uint32_t(q1 >> 4) << (j + 16);
    }
    std::memcpy(b + 2, &qh, 4);
}

void encode_q5_1(const float *x, uint8_t *b) {
    float lo, hi;
    block_min_max(x, 32, &lo, &hi);
    float d = (hi - lo) / 31.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(b, d);
    store_f16(b + 2, lo);
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        int q0 = trunc_clamped((x[j] - lo) * id + 0.5f, 0, 31);
        int q1 = trunc_clamped((x[j + 16] - lo) * id + 0.5f, 0, 31);
        b[8 + j] = uint8_t((q0 & 0x0f) | ((q1 & 0x0f) << 4));
        qh |= uint32_t(q0 >> 4) << j;
        qh |= uint32_t(q1 >> 4) << (j + 16);
    }
    std::memcpy(b + 4, &qh, 4);
}

void encode_q8_0(const float *x, uint8_t *b) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j)
        amax = std::max(amax, std::fabs(x[j]));
    float d = amax / 127.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_f16(b, d);
    for (int j = 0; j < 32; ++j) {
        // ggml rounds half away from zero here (roundf), unlike the K-quants.
        float v = x[j] * id;
        int q = !(v == v) ? 0 : int(std::round(std::min(std::max(v, -127.0f), 127.0f)));
        b[2 + j] = uint8_t(int8_t(q));
    }
}

// ---- Super-blocks of 256 ----

// Sub-block scale and min of Q4_K/Q5_K: 6 bits each, packed in 12 bytes (ggml's
// get_scale_min_k4): sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins);
// sub-blocks 4-7 in the nibbles of bytes 8-11, their top 2 bits in the top bits of bytes 0-7.
void scale_min_k4(int j, const uint8_t *s, int *sc, int *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

void pack_scale_min_k4(const uint8_t *ls, const uint8_t *lm, uint8_t *s) {
    std::memset(s, 0, 12);
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            s[j] |= ls[j];
            s[j + 4] |= lm[j];
        } else {
            s[j + 4] = uint8_t((ls[j] & 0x0f) | ((lm[j] & 0x0f) << 4));
            s[j - 4] |= uint8_t((ls[j] >> 4) << 6);
            s[j] |= uint8_t((lm[j] >> 4) << 6);
        }
    }
}

void decode_q4_k(const uint8_t *b, float *y) {
    float d = load_f16(b), dmin = load_f16(b + 2);
    const uint8_t *scales = b + 4, *q = b + 16;
    for (int c = 0; c < 4; ++c, q += 32) {
        int sc, m;
        scale_min_k4(2 * c, scales, &sc, &m);
        float d1 = d * sc, m1 = dmin * m;
        scale_min_k4(2 * c + 1, scales, &sc, &m);
        float d2 = d * sc, m2 = dmin * m;
        for (int l = 0; l < 32; ++l)
            *y++ = d1 * (q[l] & 0x0f) - m1;
        for (int l = 0; l < 32; ++l)
            *y++ = d2 * (q[l] >> 4) - m2;
    }
}

void decode_q5_k(const uint8_t *b, float *y) {
    float d = load_f16(b), dmin = load_f16(b + 2);
    const uint8_t *scales = b + 4, *qh = b + 16, *ql = b + 48;
    for (int c = 0; c < 4; ++c, ql += 32) {
        int sc, m;
        scale_min_k4(2 * c, scales, &sc, &m);
        float d1 = d * sc, m1 = dmin * m;
        scale_min_k4(2 * c + 1, scales, &sc, &m);
        float d2 = d * sc, m2 = dmin * m;
        uint8_t u1 = uint8_t(1u << (2 * c)), u2 = uint8_t(2u << (2 * c));
        for (int l = 0; l < 32; ++l)
            *y++ = d1 * ((ql[l] & 0x0f) + (qh[l] & u1 ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l)
            *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    }
}

void decode_q6_k(const uint8_t *b, float *y) {
    const uint8_t *ql = b, *qh = b + 128;
    const int8_t *sc = reinterpret_cast<const int8_t *>(b + 192);
    float d = load_f16(b + 208);
    for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
        for (int l = 0; l < 32; ++l) {
            int is = l / 16;
            int q1 = int((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) - 32;
            int q2 = int((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
            int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * sc[is] * q1;
            y[l + 32] = d * sc[is + 2] * q2;
            y[l + 64] = d * sc[is + 4] * q3;
            y[l + 96] = d * sc[is + 6] * q4;
        }
    }
}

// Fits x ~= scale * q - offset, q integer in [0, qmax], scale >= 0, offset >= 0, minimising
// the weighted squared error. The starting grid spans min..max; a few neighbouring grids are
// refitted by least squares (the idea of ggml's make_qkx2_quants), since the best grid
// rarely puts the extremes exactly on its ends.
float fit_scale_offset(const float *x, const float *w, int n, int qmax, float *offset) {
    float lo, hi;
    block_min_max(x, n, &lo, &hi);
    if (lo > 0.0f) lo = 0.0f;  // the offset subtracts: a positive minimum cannot be stored
    if (!(hi > lo)) {
        *offset = -lo;
        return 0.0f;
    }
    float sw = 0.0f, swx = 0.0f, swx2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        sw += w[i];
        swx += w[i] * x[i];
        swx2 += w[i] * x[i] * x[i];
    }
    // Each grid is one pass: the weighted error of (scale, mn) expands into the same sums the
    // least-squares solution needs.
    float best_scale = (hi - lo) / qmax, best_min = lo, best_err = INFINITY;
    for (int step = -10; step <= 10; ++step) {
        float iscale = (qmax + 0.1f * step) / (hi - lo);
        float swl = 0.0f, swl2 = 0.0f, swxl = 0.0f;
        for (int i = 0; i < n; ++i) {
            int l = clamp_int(round_int(iscale * (x[i] - lo)), 0, qmax);
            swl += w[i] * l;
            swl2 += w[i] * l * l;
            swxl += w[i] * l * x[i];
        }
        float det = sw * swl2 - swl * swl;
        if (!(det > 0.0f)) continue;
        float scale = (sw * swxl - swx * swl) / det;
        float mn = (swl2 * swx - swl * swxl) / det;
        if (mn > 0.0f) {
            mn = 0.0f;
            scale = swxl / swl2;
        }
        if (!(scale > 0.0f)) continue;
        float err = scale * scale * swl2 + 2.0f * scale * mn * swl + mn * mn * sw -
                    2.0f * scale * swxl - 2.0f * mn * swx + swx2;
        if (err < best_err) {
            best_err = err;
            best_scale = scale;
            best_min = mn;
        }
    }
    *offset = -best_min;
    return best_scale;
}

// Q4_K and Q5_K share everything but the bits per weight: 8 sub-blocks of 32 each get a scale
// and an offset, which are then stored as 6-bit multiples of the super-block's d and dmin;
// the weights are finally quantized against the scales as a reader will decode them.
void quantize_k_scales(const float *x, int qmax, uint8_t *b, uint8_t *levels) {
    float scales[8], mins[8], w[32];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; ++j) {
        const float *xs = x + 32 * j;
        float sum2 = 0.0f;
        for (int l = 0; l < 32; ++l)
            sum2 += xs[l] * xs[l];
        // Larger weights matter more to a matrix product; the mean keeps small ones in play.
        float av = std::sqrt(sum2 / 32.0f);
        for (int l = 0; l < 32; ++l)
            w[l] = av + std::fabs(xs[l]);
        scales[j] = fit_scale_offset(xs, w, 32, qmax, &mins[j]);
        max_scale = std::max(max_scale, scales[j]);
        max_min = std::max(max_min, mins[j]);
    }
    float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    uint8_t ls[8], lm[8];
    for (int j = 0; j < 8; ++j) {
        ls[j] = uint8_t(clamp_int(round_int(inv_scale * scales[j]), 0, 63));
        lm[j] = uint8_t(clamp_int(round_int(inv_min * mins[j]), 0, 63));
    }
    pack_scale_min_k4(ls, lm, b + 4);
    float d = store_f16(b, max_scale / 63.0f);
    float dmin = store_f16(b + 2, max_min / 63.0f);
    for (int j = 0; j < 8; ++j) {
        float dj = d * ls[j], mj = dmin * lm[j];
        for (int l = 0; l < 32; ++l)
            levels[32 * j + l] =
                dj == 0.0f ? 0 : uint8_t(clamp_int(round_int((x[32 * j + l] + mj) / dj), 0, qmax));
    }
}

void encode_q4_k(const float *x, uint8_t *b) {
    uint8_t L[256];
    quantize_k_scales(x, 15, b, L);
    uint8_t *q = b + 16;
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l)
            q[32 * c + l] = uint8_t(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
}

void encode_q5_k(const float *x, uint8_t *b) {
    uint8_t L[256];
    quantize_k_scales(x, 31, b, L);
    uint8_t *qh = b + 16, *ql = b + 48;
    std::memset(qh, 0, 32);
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l) {
            int lo = L[64 * c + l], hi = L[64 * c + 32 + l];
            qh[l] |= uint8_t(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
            ql[32 * c + l] = uint8_t((lo & 0x0f) | ((hi & 0x0f) << 4));
        }
}

// Fits x ~= scale * q with q integer in [-32, 31] for a Q6_K group of 16: the extreme goes to
// -32 (the longer side), and nearby grids are refitted, weighting each value by its square
// as ggml's make_qx_quants does.
float fit_scale_symmetric(const float *x, int n) {
    float max = signed_absmax(x, n);
    if (std::fabs(max) < 1e-30f) return 0.0f;
    float best_scale = 0.0f, best_score = -1.0f;
    for (int step = -9; step <= 9; ++step) {
        float iscale = -(32.0f + 0.1f * step) / max;
        float sumlx = 0.0f, suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            int l = clamp_int(round_int(iscale * x[i]), -32, 31);
            float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        // The weighted error is sum(w x^2) - sumlx^2 / suml2: maximise the second term.
        if (suml2 > 0.0f && sumlx * sumlx / suml2 > best_score) {
            best_score = sumlx * sumlx / suml2;
            best_scale = sumlx / suml2;
        }
    }
    return best_scale;
}

void encode_q6_k(const float *x, uint8_t *b) {
    float scales[16];
    float max_scale = 0.0f;
    for (int g = 0; g < 16; ++g) {
        scales[g] = fit_scale_symmetric(x + 16 * g, 16);
        if (std::fabs(scales[g]) > std::fabs(max_scale)) max_scale = scales[g];
    }
    std::memset(b, 0, 210);
    if (std::fabs(max_scale) < 1e-30f) return;  // all zero: d = 0 decodes every weight to 0
    // The largest scale maps to -128, the longer side of int8.
    float iscale = -128.0f / max_scale;
    float d = store_f16(b + 208, 1.0f / iscale);
    int8_t *sc = reinterpret_cast<int8_t *>(b + 192);
    uint8_t L[256];
    for (int g = 0; g < 16; ++g) {
        sc[g] = int8_t(clamp_int(round_int(iscale * scales[g]), -128, 127));
        float dg = d * sc[g];
        for (int l = 0; l < 16; ++l)
            L[16 * g + l] =
                uint8_t(dg == 0.0f ? 32 : clamp_int(round_int(x[16 * g + l] / dg), -32, 31) + 32);
    }
    uint8_t *ql = b, *qh = b + 128;
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32) {
        const uint8_t *h = L + 128 * half;
        for (int l = 0; l < 32; ++l) {
            ql[l] = uint8_t((h[l] & 0x0f) | ((h[l + 64] & 0x0f) << 4));
            ql[l + 32] = uint8_t((h[l + 32] & 0x0f) | ((h[l + 96] & 0x0f) << 4));
            qh[l] = uint8_t((h[l] >> 4) | ((h[l + 32] >> 4) << 2) | ((h[l + 64] >> 4) << 4) |
                            ((h[l + 96] >> 4) << 6));
        }
    }
}

template <void (*Block)(const uint8_t *, float *), size_t Elements, size_t Bytes>
void decode_blocks(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        Block(src + i * Bytes, dst + i * Elements);
}

template <void (*Block)(const float *, uint8_t *), size_t Elements, size_t Bytes>
void encode_blocks(const float *src, uint8_t *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        Block(src + i * Elements, dst + i * Bytes);
}

struct Codec {
    uint32_t id;
    DecodeFn decode;
    EncodeFn encode;  // null: this build does not quantize to the type
};

#define VKLLM_BLOCKS(name, elements, bytes) \
    decode_blocks<decode_##name, elements, bytes>, encode_blocks<encode_##name, elements, bytes>

const Codec kCodecs[] = {
    {0, decode_f32, encode_f32},        {1, decode_f16, encode_f16},
    {30, decode_bf16, encode_bf16},     {2, VKLLM_BLOCKS(q4_0, 32, 18)},
    {3, VKLLM_BLOCKS(q4_1, 32, 20)},    {6, VKLLM_BLOCKS(q5_0, 32, 22)},
    {7, VKLLM_BLOCKS(q5_1, 32, 24)},    {8, VKLLM_BLOCKS(q8_0, 32, 34)},
    {12, VKLLM_BLOCKS(q4_k, 256, 144)}, {13, VKLLM_BLOCKS(q5_k, 256, 176)},
    {14, VKLLM_BLOCKS(q6_k, 256, 210)}, {39, VKLLM_BLOCKS(mxfp4, 32, 17)},
};

#undef VKLLM_BLOCKS

const Codec *codec(uint32_t id) {
    for (const Codec &c : kCodecs)
        if (c.id == id) return &c;
    return nullptr;
}

// Checks the call and returns the type; `what` names the direction for the message.
const GgmlType &checked_type(uint32_t id, bool supported, uint64_t n, const char *what) {
    const GgmlType *t = ggml_type(id);
    if (!t || !supported)
        fail(VKLLM_ERR_UNSUPPORTED, "%s of ggml type %s is not supported", what,
             t ? t->name : std::to_string(id).c_str());
    if (n % t->block_elements != 0)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %llu elements are not whole %s blocks of %u", what,
             (unsigned long long)n, t->name, t->block_elements);
    return *t;
}

// Rows go through a local buffer of 256 elements, a whole number of blocks of every type.
const uint64_t kChunk = 256;

}  // namespace

bool can_dequantize(uint32_t type_id) {
    return codec(type_id) != nullptr;
}

bool can_quantize(uint32_t type_id) {
    const Codec *c = codec(type_id);
    return c && c->encode;
}

void dequantize_row(uint32_t type_id, const void *src, float *dst, uint64_t n) {
    const GgmlType &t = checked_type(type_id, can_dequantize(type_id), n, "dequantization");
    const Codec *c = codec(type_id);
    const uint8_t *in = static_cast<const uint8_t *>(src);
    unsigned char *out = reinterpret_cast<unsigned char *>(dst);
    float buf[kChunk];
    for (uint64_t done = 0; done < n; done += kChunk) {
        uint64_t count = std::min(kChunk, n - done);
        c->decode(in + done / t.block_elements * t.block_bytes, buf,
                  size_t(count / t.block_elements));
        std::memcpy(out + done * 4, buf, size_t(count) * 4);
    }
}

void quantize_row(uint32_t type_id, const float *src, void *dst, uint64_t n) {
    const GgmlType &t = checked_type(type_id, can_quantize(type_id), n, "quantization");
    const Codec *c = codec(type_id);
    const unsigned char *in = reinterpret_cast<const unsigned char *>(src);
    uint8_t *out = static_cast<uint8_t *>(dst);
    float buf[kChunk];
    for (uint64_t done = 0; done < n; done += kChunk) {
        uint64_t count = std::min(kChunk, n - done);
        std::memcpy(buf, in + done * 4, size_t(count) * 4);
        c->encode(buf, out + done / t.block_elements * t.block_bytes,
                  size_t(count / t.block_elements));
    }
}

}  // namespace vkllm::format
