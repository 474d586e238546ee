// A quick check that every kernel computes the right thing on this device and driver.
#pragma once

#include "gpu/context.h"

namespace vkllm::gpu {

// Fills the public result struct (struct_size is already set by the caller's copy).
void self_check(Context &context, vkllm_self_check_result &result);

}  // namespace vkllm::gpu
