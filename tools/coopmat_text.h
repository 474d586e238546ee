// How `vkllm devices` and `vkllm bench` describe a device's cooperative matrices.
#pragma once

#include <string>

#include "vkllm.h"

namespace vkllm_tool {

// "16x16x16 f16*f16+f32->f32" (" workgroup scope" appended where it is not a subgroup's).
std::string coopmat_shape_text(const vkllm_coopmat_shape &s);

// Whether prefill runs on cooperative matrices, and with which shape, or why not, then the
// shapes the device offers: "used, 8x8x8 f16*f16+f32->f32 (offered: ...)", "none", "not used:
// this build has no cooperative-matrix shaders (offered: ...)".
std::string coopmat_summary(const vkllm_device_info &d);

}  // namespace vkllm_tool
