// What a physical device offers, and which one to run on.
#pragma once

#include <string>
#include <vector>

#include "gpu/coopmat.h"
#include "gpu/instance.h"

namespace vkllm::gpu {

struct DeviceCaps {
    vkllm_device_info info{};  // the public description, struct_size = sizeof
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    uint32_t queue_family = 0;
    std::string unusable_reason;  // empty when info.usable
    VkDeviceSize storage_offset_align = 256;
    VkDeviceSize texel_offset_align = 256;
    uint32_t max_groups_x = 65535;
    uint32_t max_storage_buffers = 4;  // per shader stage (maxPerStageDescriptorStorageBuffers)
    float timestamp_period_ns = 1.0f;
    uint32_t timestamp_valid_bits = 0;
    uint8_t cache_uuid[VK_UUID_SIZE]{};
    uint32_t driver_version = 0;  // VkPhysicalDeviceProperties::driverVersion, vendor-encoded
    bool is_llvmpipe = false;
    uint32_t used_version = 0;         // the Vulkan version it is used at: its own, the instance's
                                       // or the options' cap, whichever is lowest
    bool subgroup_arithmetic = false;  // subgroupAdd and friends in compute shaders
    bool portability_subset = false;   // lists VK_KHR_portability_subset (MoltenVK)
    CoopmatCaps coopmat;               // VK_KHR_cooperative_matrix (masked: as if absent)

    // A CPU device (lavapipe): the kernels take its shapes (gpu/kernels/env.h's DeviceClass).
    bool cpu_device() const { return is_llvmpipe || info.type == VKLLM_DEVICE_CPU; }
};

// What `physical` offers as seen through `instance`: at most the instance's API version, with
// the features its options mask taken away.
DeviceCaps query_device(const Instance &instance, VkPhysicalDevice physical, uint32_t index);

std::vector<DeviceCaps> query_devices(const Instance &instance);

// Picks by explicit index, else by name substring, else from the VKLLM_DEVICE environment
// variable, else the best usable device. Throws VKLLM_ERR_NO_DEVICE naming what was asked.
const DeviceCaps &choose_device(const std::vector<DeviceCaps> &devices, int32_t index,
                                const char *name);

// Copies the fields of `from` that fit in the caller's struct (its struct_size).
void copy_device_info(const vkllm_device_info &from, vkllm_device_info *to);

}  // namespace vkllm::gpu
