// VK_KHR_cooperative_matrix: what a device offers and the shape the kernels use. The
// extension is newer than some Vulkan headers vkllm builds against (Debian 12's 1.3.239); its
// few definitions are declared here where the header lacks them, as the specification gives
// them, so that a library built there still uses the extension on a driver that has it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpu/vulkan.h"

#ifndef VK_KHR_cooperative_matrix
#define VK_KHR_cooperative_matrix 1
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
typedef enum VkComponentTypeKHR {
    VK_COMPONENT_TYPE_FLOAT16_KHR = 0,
    VK_COMPONENT_TYPE_FLOAT32_KHR = 1,
    VK_COMPONENT_TYPE_FLOAT64_KHR = 2,
    VK_COMPONENT_TYPE_SINT8_KHR = 3,
    VK_COMPONENT_TYPE_SINT16_KHR = 4,
    VK_COMPONENT_TYPE_SINT32_KHR = 5,
    VK_COMPONENT_TYPE_SINT64_KHR = 6,
    VK_COMPONENT_TYPE_UINT8_KHR = 7,
    VK_COMPONENT_TYPE_UINT16_KHR = 8,
    VK_COMPONENT_TYPE_UINT32_KHR = 9,
    VK_COMPONENT_TYPE_UINT64_KHR = 10,
    VK_COMPONENT_TYPE_MAX_ENUM_KHR = 0x7FFFFFFF
} VkComponentTypeKHR;
typedef enum VkScopeKHR {
    VK_SCOPE_DEVICE_KHR = 1,
    VK_SCOPE_WORKGROUP_KHR = 2,
    VK_SCOPE_SUBGROUP_KHR = 3,
    VK_SCOPE_QUEUE_FAMILY_KHR = 5,
    VK_SCOPE_MAX_ENUM_KHR = 0x7FFFFFFF
} VkScopeKHR;
typedef struct VkCooperativeMatrixPropertiesKHR {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize;
    uint32_t NSize;
    uint32_t KSize;
    VkComponentTypeKHR AType;
    VkComponentTypeKHR BType;
    VkComponentTypeKHR CType;
    VkComponentTypeKHR ResultType;
    VkBool32 saturatingAccumulation;
    VkScopeKHR scope;
} VkCooperativeMatrixPropertiesKHR;
typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
    VkStructureType sType;
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;
typedef VkResult(VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(
    VkPhysicalDevice physicalDevice, uint32_t *pPropertyCount,
    VkCooperativeMatrixPropertiesKHR *pProperties);
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR \
    ((VkStructureType)1000506000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
#endif

namespace vkllm::gpu {

// One matrix shape a device multiplies cooperatively: A (m x k) times B (k x n) plus C
// (m x n), at the scope of a subgroup (the only scope the kernels use).
struct CoopmatShape {
    uint32_t m = 0, n = 0, k = 0;
    VkComponentTypeKHR a{}, b{}, c{}, result{};
    bool subgroup_scope = false;
};

// What the device offers and whether vkllm's coopmat kernels can run on it.
struct CoopmatCaps {
    std::vector<CoopmatShape> shapes;  // every shape the driver lists
    // The f16 x f16 -> f32 subgroup shape the kernels are specialized for (m = 0: none).
    CoopmatShape f16{};
    // The features the kernels need beyond the extension: cooperativeMatrix, shaderFloat16
    // (f16 operands in shared memory) and vulkanMemoryModel (GL_KHR_cooperative_matrix's
    // scopes compile to SPIR-V's Vulkan memory model), with vulkanMemoryModelDeviceScope (once
    // the model is enabled, every other kernel's Device-scope barrier needs it).
    bool features = false;
    // Why the kernels cannot run there (empty: they can).
    std::string unusable;

    bool usable() const { return unusable.empty(); }
};

// Reads `physical`'s cooperative matrices. `listed`: the extension is in its (unmasked) list;
// `version`: the Vulkan version it is used at. Needs the instance's function loader.
CoopmatCaps query_coopmat(VkInstance instance, VkPhysicalDevice physical, bool listed,
                          uint32_t version);

// "16x16x16 f16*f16+f32->f32" (the scope appended where it is not a subgroup).
std::string coopmat_shape_text(const CoopmatShape &s);

}  // namespace vkllm::gpu
