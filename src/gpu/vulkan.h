// Vulkan through volk: the library links no libvulkan; the loader is opened at run time.
#pragma once

#include <volk.h>

#include "common/error.h"

namespace vkllm::gpu {

// Maps a failed VkResult to the library's status and throws, naming the call.
void check(VkResult result, const char *what);

const char *result_name(VkResult result);

}  // namespace vkllm::gpu
