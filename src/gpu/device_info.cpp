#include "gpu/device_info.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "shader_names.h"

namespace vkllm::gpu {

static vkllm_device_type map_type(VkPhysicalDeviceType t) {
    switch (t) {
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
            return VKLLM_DEVICE_INTEGRATED_GPU;
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
            return VKLLM_DEVICE_DISCRETE_GPU;
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
            return VKLLM_DEVICE_VIRTUAL_GPU;
        case VK_PHYSICAL_DEVICE_TYPE_CPU:
            return VKLLM_DEVICE_CPU;
        default:
            return VKLLM_DEVICE_OTHER;
    }
}

static void copy_string(char *dst, size_t cap, const char *src) {
    std::snprintf(dst, cap, "%s", src);
}

// The device's extensions less those the options mask.
static std::vector<std::string> device_extensions(VkPhysicalDevice physical,
                                                  const VulkanOptions &options) {
    uint32_t n = 0;
    if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, nullptr) != VK_SUCCESS)
        return {};
    std::vector<VkExtensionProperties> extensions(n);
    if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &n, extensions.data()) !=
        VK_SUCCESS)
        return {};
    std::vector<std::string> names;
    for (uint32_t i = 0; i < n; ++i) {
        std::string name = extensions[i].extensionName;
        bool masked = false;
        for (size_t m = 0; m < kMaskNameCount; ++m)
            masked |= options.masks(kMaskNames[m].bit) && name == kMaskNames[m].name;
        if (!masked) names.push_back(name);
    }
    return names;
}

// The component types are Vulkan's values (vkllm_component_type mirrors them).
static vkllm_coopmat_shape public_shape(const CoopmatShape &s) {
    return vkllm_coopmat_shape{s.m,
                               s.n,
                               s.k,
                               vkllm_component_type(s.a),
                               vkllm_component_type(s.b),
                               vkllm_component_type(s.c),
                               vkllm_component_type(s.result),
                               s.subgroup_scope ? 1 : 0};
}

static uint32_t major_minor(uint32_t version) {
    return VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version), 0);
}

static std::string version_text(uint32_t version) {
    return std::to_string(VK_API_VERSION_MAJOR(version)) + "." +
           std::to_string(VK_API_VERSION_MINOR(version));
}

DeviceCaps query_device(const Instance &instance, VkPhysicalDevice physical, uint32_t index) {
    const VulkanOptions &options = instance.options();
    DeviceCaps caps;
    caps.physical = physical;
    vkllm_device_info &info = caps.info;
    info.struct_size = sizeof(vkllm_device_info);
    info.index = index;

    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(physical, &props);
    uint32_t own = major_minor(props.apiVersion);
    caps.used_version = std::min(own, instance.api_version());
    bool capped = options.api_version && options.api_version < own;
    info.api_version = capped ? options.api_version : props.apiVersion;
    info.vendor_id = props.vendorID;
    info.device_id = props.deviceID;
    info.type = map_type(props.deviceType);
    copy_string(info.name, sizeof info.name, props.deviceName);
    std::memcpy(caps.cache_uuid, props.pipelineCacheUUID, VK_UUID_SIZE);
    caps.driver_version = props.driverVersion;
    const VkPhysicalDeviceLimits &lim = props.limits;
    info.max_storage_buffer_range = lim.maxStorageBufferRange;
    info.max_texel_buffer_elements = lim.maxTexelBufferElements;
    info.max_compute_shared_memory = lim.maxComputeSharedMemorySize;
    info.max_workgroup_invocations = lim.maxComputeWorkGroupInvocations;
    caps.storage_offset_align = lim.minStorageBufferOffsetAlignment;
    caps.texel_offset_align = lim.minTexelBufferOffsetAlignment;
    caps.max_groups_x = lim.maxComputeWorkGroupCount[0];
    caps.max_storage_buffers = lim.maxPerStageDescriptorStorageBuffers;
    caps.timestamp_period_ns = lim.timestampPeriod;

    // Vulkan 1.1 has the properties and features queries and the subgroup and 16-bit storage
    // structures in core; 1.2 adds driver properties and float16/int8 to core, which a 1.1
    // device may offer as extensions. A structure is chained only where the version used or a
    // listed extension provides it: the validation layer refuses any other.
    bool v11 = caps.used_version >= VK_API_VERSION_1_1;
    bool v12 = caps.used_version >= VK_API_VERSION_1_2;
    std::vector<std::string> extensions = device_extensions(physical, options);
    auto listed = [&](const char *name) {
        return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
    };
    if (v11) {
        VkPhysicalDeviceDriverProperties driver{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
        VkPhysicalDeviceSubgroupProperties subgroup{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
        if (v12 || listed(VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME)) subgroup.pNext = &driver;
        VkPhysicalDeviceMaintenance3Properties m3{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, &subgroup};
        VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &m3};
        vkGetPhysicalDeviceProperties2(physical, &p2);
        copy_string(info.driver_name, sizeof info.driver_name, driver.driverName);
        copy_string(info.driver_info, sizeof info.driver_info, driver.driverInfo);
        caps.is_llvmpipe = driver.driverID == VK_DRIVER_ID_MESA_LLVMPIPE;
        info.subgroup_size = subgroup.subgroupSize;
        // The subgroup shaders declare GroupNonUniform (the basic operations) as well as
        // GroupNonUniformArithmetic.
        const VkSubgroupFeatureFlags ops =
            VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
        caps.subgroup_arithmetic = (subgroup.supportedOperations & ops) == ops &&
                                   (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                   !options.masks(kMaskSubgroupArithmetic);
        info.max_allocation_size = m3.maxMemoryAllocationSize;

        VkPhysicalDeviceShaderFloat16Int8Features f16{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
        VkPhysicalDevice16BitStorageFeatures s16{
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
        if (v12 || listed(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)) s16.pNext = &f16;
        VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &s16};
        vkGetPhysicalDeviceFeatures2(physical, &f2);
        info.shader_float16 = f16.shaderFloat16 && !options.masks(kMaskShaderFloat16);
        info.shader_int8 = f16.shaderInt8 && !options.masks(kMaskShaderInt8);
        info.storage_16bit =
            s16.storageBuffer16BitAccess && !options.masks(kMaskStorageBuffer16BitAccess);
    }

    // A device that lists the subset must have it enabled (the spec's rule for vkCreateDevice).
    // Its features and its one property are not read: every feature but `events` concerns
    // graphics (blending, image views, samplers, tessellation, vertex input), and the kernels
    // order their dispatches with pipeline barriers and fences, never VkEvent, so nothing in
    // the subset can take away something a kernel needs. The limits that do bind compute
    // (workgroup size, shared memory, buffer ranges) are the core limits read above.
    caps.portability_subset = listed("VK_KHR_portability_subset");
    caps.coopmat =
        query_coopmat(instance.handle(), physical, listed(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME),
                      caps.used_version);
    info.cooperative_matrix =
        coopmat_use(caps.coopmat, shaders::kCoopmatShaders, caps.cpu_device());
    info.coopmat_shape = public_shape(caps.coopmat.f16);
    info.coopmat_shape_count =
        uint32_t(std::min<size_t>(caps.coopmat.shapes.size(), VKLLM_MAX_COOPMAT_SHAPES));
    for (uint32_t i = 0; i < info.coopmat_shape_count; ++i)
        info.coopmat_shapes[i] = public_shape(caps.coopmat.shapes[i]);

    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(physical, &mem);
    info.heap_count = std::min<uint32_t>(mem.memoryHeapCount, VKLLM_MAX_MEMORY_HEAPS);
    for (uint32_t i = 0; i < info.heap_count; ++i) {
        info.heap_size[i] = mem.memoryHeaps[i].size;
        info.heap_device_local[i] =
            (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    }
    // On a discrete GPU a host-visible device-local type is a small BAR window, not unified
    // memory; only integrated and CPU devices share their memory with the host.
    bool shares_memory = info.type == VKLLM_DEVICE_INTEGRATED_GPU || info.type == VKLLM_DEVICE_CPU;
    for (uint32_t i = 0; i < mem.memoryTypeCount && shares_memory; ++i) {
        VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
        const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        if ((f & want) == want) info.unified_memory = 1;
    }

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> queues(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &nq, queues.data());
    bool found = false;
    // Prefer a compute-only family (async compute on GPUs), else any family with compute.
    for (int pass = 0; pass < 2 && !found; ++pass) {
        for (uint32_t i = 0; i < nq; ++i) {
            bool compute = queues[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
            bool graphics = queues[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
            if (compute && (pass == 1 || !graphics)) {
                caps.queue_family = i;
                caps.timestamp_valid_bits = queues[i].timestampValidBits;
                found = true;
                break;
            }
        }
    }
    info.timestamps = found && caps.timestamp_valid_bits > 0 && lim.timestampComputeAndGraphics;

    // The shaders are SPIR-V 1.3 (Vulkan 1.1) and need no optional feature: without float16,
    // int8 or 16-bit storage they are what runs everywhere (F16 and bytes are unpacked from
    // 32-bit words), and without subgroup arithmetic the matvec kernels reduce through shared
    // memory (kernels/env.cpp). Only a version below 1.1 leaves nothing to run.
    if (!v11)
        caps.unusable_reason = (capped ? "is used at Vulkan " : "supports only Vulkan ") +
                               version_text(caps.used_version) +
                               (capped ? " (the cap of VKLLM_VULKAN_API_VERSION)" : "") +
                               " and vkllm needs 1.1 (its shaders are SPIR-V 1.3)";
    else if (!found)
        caps.unusable_reason = "has no compute queue";
    info.usable = caps.unusable_reason.empty();
    return caps;
}

std::vector<DeviceCaps> query_devices(const Instance &instance) {
    std::vector<VkPhysicalDevice> devices = instance.physical_devices();
    std::vector<DeviceCaps> out;
    for (size_t i = 0; i < devices.size(); ++i)
        out.push_back(query_device(instance, devices[i], uint32_t(i)));
    return out;
}

static int preference(vkllm_device_type t) {
    switch (t) {
        case VKLLM_DEVICE_DISCRETE_GPU:
            return 5;
        case VKLLM_DEVICE_INTEGRATED_GPU:
            return 4;
        case VKLLM_DEVICE_VIRTUAL_GPU:
            return 3;
        case VKLLM_DEVICE_OTHER:
            return 2;
        default:
            return 1;
    }
}

static bool name_contains(const char *name, const char *needle) {
    std::string a(name), b(needle);
    auto lower = [](std::string &s) {
        for (char &c : s)
            c = char(std::tolower(static_cast<unsigned char>(c)));
    };
    lower(a);
    lower(b);
    return a.find(b) != std::string::npos;
}

static const DeviceCaps &require_usable(const DeviceCaps &d) {
    if (!d.info.usable)
        fail(VKLLM_ERR_NO_DEVICE, "device %u (%s) cannot be used: it %s", d.info.index, d.info.name,
             d.unusable_reason.c_str());
    return d;
}

const DeviceCaps &choose_device(const std::vector<DeviceCaps> &devices, int32_t index,
                                const char *name) {
    std::string from = "device_index";
    const char *env = std::getenv("VKLLM_DEVICE");
    if (index < 0 && (!name || !*name) && env && *env) {
        char *end = nullptr;
        long v = std::strtol(env, &end, 10);
        if (*end == '\0' && v >= 0 && v <= INT32_MAX)
            index = int32_t(v);
        else
            name = env;
        from = "VKLLM_DEVICE";
    }
    if (index >= 0) {
        if (size_t(index) >= devices.size())
            fail(VKLLM_ERR_NO_DEVICE, "%s %d does not exist: there are %zu Vulkan devices",
                 from.c_str(), index, devices.size());
        return require_usable(devices[size_t(index)]);
    }
    if (name && *name) {
        for (const DeviceCaps &d : devices)
            if (name_contains(d.info.name, name)) return require_usable(d);
        std::string names;
        for (const DeviceCaps &d : devices)
            names += std::string(names.empty() ? "" : ", ") + d.info.name;
        fail(VKLLM_ERR_NO_DEVICE, "no Vulkan device name contains \"%s\" (devices: %s)", name,
             names.c_str());
    }
    const DeviceCaps *best = nullptr;
    for (const DeviceCaps &d : devices)
        if (d.info.usable && (!best || preference(d.info.type) > preference(best->info.type)))
            best = &d;
    if (!best) {
        std::string why;
        for (const DeviceCaps &d : devices)
            why += std::string("; ") + d.info.name + " " + d.unusable_reason;
        fail(VKLLM_ERR_NO_DEVICE, "no usable Vulkan device%s", why.c_str());
    }
    return *best;
}

void copy_device_info(const vkllm_device_info &from, vkllm_device_info *to) {
    size_t n = std::min(to->struct_size, sizeof(vkllm_device_info));
    size_t keep = to->struct_size;
    std::memcpy(to, &from, n);
    to->struct_size = keep;
}

}  // namespace vkllm::gpu
