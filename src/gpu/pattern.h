// Fixed pseudo-random inputs in [-1, 1) for the device's own checks (self-check, tuning): the
// same on every run, so that a check or a tuning can be repeated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkllm::gpu {

inline std::vector<float> pattern(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed * 747796405u + 2891336453u;
    for (float &x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(s >> 8) / float(1u << 23) - 1.0f;
    }
    return v;
}

}  // namespace vkllm::gpu
