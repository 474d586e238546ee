// Random blocks of every block-quantized weight type, as GGUF stores them (random quants, sane
// random scales, so every bit of every field matters), with their CPU dequantization
// (format/quant.h): the weights of the quantized kernel tests.
#pragma once

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/half.h"
#include "format/ggml_types.h"
#include "format/quant.h"
#include "gpu/kernels/weight_layout.h"

namespace vkllm::gpu::test_blocks {

inline const WeightType kQuantTypes[] = {
    WeightType::Q8_0,    WeightType::Q4_0,    WeightType::Q4_1,    WeightType::Q5_0,
    WeightType::Q5_1,    WeightType::Q4_K,    WeightType::Q5_K,    WeightType::Q6_K,
    WeightType::MXFP4,   WeightType::Q8_0_G8, WeightType::Q4_0_G8, WeightType::Q5_0_G8,
    WeightType::Q6_K_G8, WeightType::Q4_1_G8, WeightType::Q5_1_G8, WeightType::MXFP4_G16};

// The GGUF type whose blocks a grouped type regroups (the type itself otherwise).
inline WeightType file_type(WeightType t) {
    return t == WeightType::Q8_0_G8     ? WeightType::Q8_0
           : t == WeightType::Q4_0_G8   ? WeightType::Q4_0
           : t == WeightType::Q5_0_G8   ? WeightType::Q5_0
           : t == WeightType::Q6_K_G8   ? WeightType::Q6_K
           : t == WeightType::Q4_1_G8   ? WeightType::Q4_1
           : t == WeightType::Q5_1_G8   ? WeightType::Q5_1
           : t == WeightType::MXFP4_G16 ? WeightType::MXFP4
                                        : t;
}

inline uint32_t ggml_id(WeightType t) {
    t = file_type(t);
    for (uint32_t id = 0; id < 64; ++id) {
        WeightType w;
        if (weight_type_from_ggml(id, &w) && w == t) return id;
    }
    return ~0u;
}

inline std::string name(WeightType t) {
    return vkllm::format::ggml_type(ggml_id(t))->name +
           std::string(file_type(t) != t ? " grouped" : "");
}

// Byte offsets of the F16 scale fields in a block of `t` (MXFP4's exponent is byte 0).
inline std::vector<uint32_t> half_fields(WeightType t) {
    switch (t) {
        case WeightType::Q4_1:
        case WeightType::Q5_1:
        case WeightType::Q4_K:
        case WeightType::Q5_K:
            return {0, 2};
        case WeightType::Q6_K:
            return {208};
        case WeightType::MXFP4:
            return {};
        default:
            return {0};
    }
}

// `count` weights (whole blocks) of random blocks whose scales are small and finite; the
// second value is what they decode to on the CPU. Grouped types: random blocks of the file
// type, regrouped as the loader does.
inline std::pair<std::vector<uint8_t>, std::vector<float>> random_blocks(WeightType grouped,
                                                                         uint64_t count,
                                                                         uint32_t seed) {
    WeightType t = file_type(grouped);
    std::mt19937 rng(seed);
    uint64_t blocks = count / block_weights(t);
    std::vector<uint8_t> data(blocks * block_bytes(t));
    for (uint8_t &b : data)
        b = uint8_t(rng());
    std::uniform_real_distribution<float> scale(-0.02f, 0.02f);
    for (uint64_t i = 0; i < blocks; ++i) {
        uint8_t *block = data.data() + i * block_bytes(t);
        for (uint32_t o : half_fields(t)) {
            uint16_t h = vkllm::float_to_half(scale(rng));
            block[o] = uint8_t(h);
            block[o + 1] = uint8_t(h >> 8);
        }
        if (t == WeightType::MXFP4) block[0] = uint8_t(118 + rng() % 12);  // 2^-10 .. 2^1
    }
    std::vector<float> values(count);
    vkllm::format::dequantize_row(ggml_id(t), data.data(), values.data(), count);
    if (grouped != t) data = group_blocks(t, data.data(), blocks);
    return {data, values};
}

}  // namespace vkllm::gpu::test_blocks
