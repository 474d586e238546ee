// Blocks of 32 weights: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and MXFP4.
#include <algorithm>
#include <cmath>

#include "format/quant_blocks.h"

namespace vkllm::format::blocks {

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

}  // namespace vkllm::format::blocks
