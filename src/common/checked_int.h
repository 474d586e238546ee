// 64-bit integer arithmetic that reports overflow instead of wrapping (undefined behaviour in
// C++), for the template interpreter's Python-like integers. Plain comparisons rather than the
// GNU __builtin_*_overflow, so that the code stays MSVC-clean (docs/PLATFORMS.md).
#pragma once

#include <cstdint>
#include <limits>

namespace vkllm {

// Each returns false, leaving *r alone, where the exact result does not fit in int64_t.
inline bool checked_add(int64_t x, int64_t y, int64_t *r) {
    const int64_t hi = std::numeric_limits<int64_t>::max(),
                  lo = std::numeric_limits<int64_t>::min();
    if ((y > 0 && x > hi - y) || (y < 0 && x < lo - y)) return false;
    *r = x + y;
    return true;
}

inline bool checked_sub(int64_t x, int64_t y, int64_t *r) {
    const int64_t hi = std::numeric_limits<int64_t>::max(),
                  lo = std::numeric_limits<int64_t>::min();
    if ((y < 0 && x > hi + y) || (y > 0 && x < lo + y)) return false;
    *r = x - y;
    return true;
}

inline bool checked_mul(int64_t x, int64_t y, int64_t *r) {
    const int64_t hi = std::numeric_limits<int64_t>::max(),
                  lo = std::numeric_limits<int64_t>::min();
    if (x != 0 && y != 0) {
        bool fits =
            x > 0 ? (y > 0 ? x <= hi / y : y >= lo / x) : (y > 0 ? x >= lo / y : x >= hi / y);
        if (!fits) return false;
    }
    *r = x * y;
    return true;
}

}  // namespace vkllm
