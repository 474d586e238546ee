// How vkllm may use Vulkan, below what the loader and the device offer: a cap on the API version
// and features treated as absent. They let a Vulkan 1.3 driver (lavapipe) stand in for the 1.1
// phones and the feature-poor devices vkllm must run on, so that those paths are tested here.
#pragma once

#include <cstdint>

#include "gpu/vulkan.h"

namespace vkllm::gpu {

// Features, properties and extensions that can be masked, one bit each. The extensions are
// the ones vkllm reads on a Vulkan 1.1 device and VK_KHR_cooperative_matrix (the prefill
// kernels it enables); masking one hides it from the device's list.
enum MaskedFeature : uint32_t {
    kMaskShaderFloat16 = 1u << 0,               // VkPhysicalDeviceShaderFloat16Int8Features
    kMaskShaderInt8 = 1u << 1,                  // ... its shaderInt8
    kMaskStorageBuffer16BitAccess = 1u << 2,    // VkPhysicalDevice16BitStorageFeatures
    kMaskSubgroupArithmetic = 1u << 3,          // VK_SUBGROUP_FEATURE_ARITHMETIC_BIT in compute
    kMaskDriverPropertiesExtension = 1u << 4,   // VK_KHR_driver_properties
    kMaskFloat16Int8Extension = 1u << 5,        // VK_KHR_shader_float16_int8
    kMaskCooperativeMatrixExtension = 1u << 6,  // VK_KHR_cooperative_matrix
};

// Each maskable name, as VKLLM_VULKAN_MASK_FEATURES spells it, with its bit.
struct MaskName {
    const char *name;
    uint32_t bit;
};
extern const MaskName kMaskNames[];
extern const size_t kMaskNameCount;

struct VulkanOptions {
    // The highest Vulkan version vkllm uses, VK_MAKE_API_VERSION(0, 1, minor, 0); 0: no cap
    // (the instance asks for 1.2, every device is used at up to 1.2).
    uint32_t api_version = 0;
    uint32_t masked = 0;  // MaskedFeature bits

    bool masks(uint32_t bit) const { return (masked & bit) != 0; }
};

// Parses the environment's form of the options: a version "1.0", "1.1" or "1.2" (NULL or
// empty: no cap), and a comma-separated list of kMaskNames (NULL or empty: none). Throws
// VKLLM_ERR_INVALID_ARGUMENT naming `what` and the accepted values for anything else, so that a
// misspelt feature cannot pass a test by masking nothing.
uint32_t parse_api_version(const char *text, const char *what);
uint32_t parse_feature_mask(const char *text, const char *what);

// VKLLM_VULKAN_API_VERSION and VKLLM_VULKAN_MASK_FEATURES, parsed as above.
VulkanOptions vulkan_options_from_environment();

}  // namespace vkllm::gpu
