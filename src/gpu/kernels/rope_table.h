// The cos/sin table the RoPE kernels read, computed on the host once per model. Free of Vulkan.
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/tensor.h"

namespace vkllm::gpu {

// cos/sin pairs for positions [0, n_pos) and pairs [0, rot_dim/2), angle = pos *
// base^(-2i/rot_dim) / freq_factors[i] (with YaRN, ggml's blend of that and the angle / factor
// by a ramp over the pairs, and the magnitude scale), computed in double once per model:
// [n_pos][rot_dim/2][2] floats.
std::vector<float> rope_table(uint32_t n_pos, uint32_t rot_dim, double base,
                              const RopeScaling &scaling = {});

}  // namespace vkllm::gpu
