#include "gpu/coopmat.h"

namespace vkllm::gpu {

static const char *component_name(VkComponentTypeKHR t) {
    switch (t) {
        case VK_COMPONENT_TYPE_FLOAT16_KHR:
            return "f16";
        case VK_COMPONENT_TYPE_FLOAT32_KHR:
            return "f32";
        case VK_COMPONENT_TYPE_FLOAT64_KHR:
            return "f64";
        case VK_COMPONENT_TYPE_SINT8_KHR:
            return "s8";
        case VK_COMPONENT_TYPE_SINT16_KHR:
            return "s16";
        case VK_COMPONENT_TYPE_SINT32_KHR:
            return "s32";
        case VK_COMPONENT_TYPE_SINT64_KHR:
            return "s64";
        case VK_COMPONENT_TYPE_UINT8_KHR:
            return "u8";
        case VK_COMPONENT_TYPE_UINT16_KHR:
            return "u16";
        case VK_COMPONENT_TYPE_UINT32_KHR:
            return "u32";
        case VK_COMPONENT_TYPE_UINT64_KHR:
            return "u64";
        default:
            return "other";  // bfloat16 and fp8 of newer headers
    }
}

std::string coopmat_shape_text(const CoopmatShape &s) {
    std::string t = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                    " " + component_name(s.a) + "*" + component_name(s.b) + "+" +
                    component_name(s.c) + "->" + component_name(s.result);
    return s.subgroup_scope ? t : t + " (not subgroup scope)";
}

// The shape the kernels take among f16 x f16 -> f32 subgroup ones: the most work per
// instruction, square where two tie (16x16x16 over 16x8x16 and 16x8x8 on NVIDIA).
static bool better(const CoopmatShape &a, const CoopmatShape &b) {
    uint64_t va = uint64_t(a.m) * a.n * a.k, vb = uint64_t(b.m) * b.n * b.k;
    if (va != vb) return va > vb;
    return (a.m == a.n) && b.m != b.n;
}

CoopmatCaps query_coopmat(VkInstance instance, VkPhysicalDevice physical, bool listed,
                          uint32_t version) {
    CoopmatCaps caps;
    if (!listed) {
        caps.unusable = "no VK_KHR_cooperative_matrix";
        return caps;
    }
    // Chaining Vulkan 1.2's feature structures needs the device used at 1.2 or later.
    if (version < VK_API_VERSION_1_2) {
        caps.unusable = "used below Vulkan 1.2";
        return caps;
    }
    auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    if (!list) {
        caps.unusable = "the loader has no vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR";
        return caps;
    }
    uint32_t n = 0;
    if (list(physical, &n, nullptr) != VK_SUCCESS) n = 0;
    std::vector<VkCooperativeMatrixPropertiesKHR> props(
        n, VkCooperativeMatrixPropertiesKHR{VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR});
    if (n && list(physical, &n, props.data()) != VK_SUCCESS) n = 0;
    props.resize(n);
    for (const VkCooperativeMatrixPropertiesKHR &p : props) {
        CoopmatShape s{p.MSize, p.NSize, p.KSize,      p.AType,
                       p.BType, p.CType, p.ResultType, p.scope == VK_SCOPE_SUBGROUP_KHR};
        caps.shapes.push_back(s);
        bool f16 = s.a == VK_COMPONENT_TYPE_FLOAT16_KHR && s.b == VK_COMPONENT_TYPE_FLOAT16_KHR &&
                   s.c == VK_COMPONENT_TYPE_FLOAT32_KHR &&
                   s.result == VK_COMPONENT_TYPE_FLOAT32_KHR && s.subgroup_scope &&
                   !p.saturatingAccumulation;
        if (f16 && (caps.f16.m == 0 || better(s, caps.f16))) caps.f16 = s;
    }

    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                         &cm};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
    vkGetPhysicalDeviceFeatures2(physical, &f2);
    caps.features = cm.cooperativeMatrix && v12.shaderFloat16 && v12.vulkanMemoryModel &&
                    v12.vulkanMemoryModelDeviceScope;
    if (!caps.features)
        caps.unusable = "lacks cooperativeMatrix, shaderFloat16 or vulkanMemoryModel(DeviceScope)";
    else if (caps.f16.m == 0)
        caps.unusable = "has no f16*f16+f32->f32 subgroup shape";
    return caps;
}

}  // namespace vkllm::gpu
