#include "gpu/vulkan_options.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace vkllm::gpu {

const MaskName kMaskNames[] = {
    {"shaderFloat16", kMaskShaderFloat16},
    {"shaderInt8", kMaskShaderInt8},
    {"storageBuffer16BitAccess", kMaskStorageBuffer16BitAccess},
    {"subgroupArithmetic", kMaskSubgroupArithmetic},
    {"VK_KHR_driver_properties", kMaskDriverPropertiesExtension},
    {"VK_KHR_shader_float16_int8", kMaskFloat16Int8Extension},
    {"VK_KHR_cooperative_matrix", kMaskCooperativeMatrixExtension},
};
const size_t kMaskNameCount = sizeof kMaskNames / sizeof kMaskNames[0];

uint32_t parse_api_version(const char *text, const char *what) {
    if (!text || !*text) return 0;
    for (uint32_t minor = 0; minor <= 2; ++minor)
        if (std::string(text) == "1." + std::to_string(minor))
            return VK_MAKE_API_VERSION(0, 1, minor, 0);
    fail(VKLLM_ERR_INVALID_ARGUMENT, "%s is \"%s\"; it takes 1.0, 1.1 or 1.2", what, text);
}

uint32_t parse_feature_mask(const char *text, const char *what) {
    uint32_t mask = 0;
    std::string list = text ? text : "";
    size_t start = 0;
    while (start < list.size()) {
        size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        std::string name = list.substr(start, end - start);
        uint32_t bit = 0;
        for (size_t i = 0; i < kMaskNameCount; ++i)
            if (name == kMaskNames[i].name) bit = kMaskNames[i].bit;
        if (!bit) {
            std::string names;
            for (size_t i = 0; i < kMaskNameCount; ++i)
                names += std::string(i ? ", " : "") + kMaskNames[i].name;
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s names \"%s\", which cannot be masked (it takes: %s)", what, name.c_str(),
                 names.c_str());
        }
        mask |= bit;
        start = end + 1;
    }
    return mask;
}

VulkanOptions vulkan_options_from_environment() {
    VulkanOptions o;
    o.api_version =
        parse_api_version(std::getenv("VKLLM_VULKAN_API_VERSION"), "VKLLM_VULKAN_API_VERSION");
    o.masked =
        parse_feature_mask(std::getenv("VKLLM_VULKAN_MASK_FEATURES"), "VKLLM_VULKAN_MASK_FEATURES");
    return o;
}

}  // namespace vkllm::gpu
