// IEEE 754 binary16 <-> binary32 on the host (weights upload, tests), round to nearest even.
#pragma once

#include <cstdint>
#include <cstring>

namespace vkllm {

inline float half_to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: renormalise
            exp = 127 - 15 + 1;
            while ((mant & 0x400u) == 0) {
                mant <<= 1;
                --exp;
            }
            bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

inline uint16_t float_to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint16_t sign = uint16_t((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf / nan
    int e = int(exp) - 127 + 15;
    if (e >= 0x1f) return uint16_t(sign | 0x7c00u);  // overflow -> inf
    if (e <= 0) {                                    // subnormal or zero
        if (e < -10) return sign;
        mant |= 0x800000u;
        uint32_t shift = uint32_t(14 - e);
        uint32_t half_mant = mant >> shift;
        uint32_t rest = mant & ((1u << shift) - 1);
        uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half_mant & 1u))) ++half_mant;
        return uint16_t(sign | half_mant);
    }
    uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into exp: correct
    return uint16_t(sign | h);
}

}  // namespace vkllm
