// Super-blocks of 256 weights: Q4_K, Q5_K and Q6_K.
#include <algorithm>
#include <cmath>

#include "format/quant_blocks.h"

namespace vkllm::format::blocks {

// Sub-block scale and min of Q4_K/Q5_K: 6 bits each, packed in 12 bytes (ggml's
// get_scale_min_k4): sub-blocks 0-3 in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins);
// sub-blocks 4-7 in the nibbles of bytes 8-11, their top 2 bits in the top bits of bytes 0-7.
static void scale_min_k4(int j, const uint8_t *s, int *sc, int *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

static void pack_scale_min_k4(const uint8_t *ls, const uint8_t *lm, uint8_t *s) {
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
static float fit_scale_offset(const float *x, const float *w, int n, int qmax, float *offset) {
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
static void quantize_k_scales(const float *x, int qmax, uint8_t *b, uint8_t *levels) {
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
static float fit_scale_symmetric(const float *x, int n) {
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

}  // namespace vkllm::format::blocks
