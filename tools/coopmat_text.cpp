#include "coopmat_text.h"

#include <cstdlib>

namespace vkllm_tool {

static std::string component_text(vkllm_component_type t) {
    static const char *const names[] = {"f16", "f32", "f64", "s8",  "s16", "s32",
                                        "s64", "u8",  "u16", "u32", "u64"};
    if (uint32_t(t) < sizeof names / sizeof names[0]) return names[t];
    return "type " + std::to_string(uint32_t(t));  // newer than this header: Vulkan's value
}

std::string coopmat_shape_text(const vkllm_coopmat_shape &s) {
    std::string t = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                    " " + component_text(s.a_type) + "*" + component_text(s.b_type) + "+" +
                    component_text(s.c_type) + "->" + component_text(s.result_type);
    return s.subgroup_scope ? t : t + " workgroup scope";
}

// The environment variable `name` names `value` among its comma-separated items.
static bool env_names(const char *name, const char *value) {
    const char *v = std::getenv(name);
    std::string list = std::string(",") + (v ? v : "") + ",";
    return list.find(std::string(",") + value + ",") != std::string::npos;
}

std::string coopmat_summary(const vkllm_device_info &d) {
    std::string text;
    switch (d.cooperative_matrix) {
        case VKLLM_COOPMAT_USED:
            text = "used, " + coopmat_shape_text(d.coopmat_shape);
            break;
        case VKLLM_COOPMAT_ABSENT:
            return env_names("VKLLM_VULKAN_MASK_FEATURES", "VK_KHR_cooperative_matrix")
                       ? "none (hidden by VKLLM_VULKAN_MASK_FEATURES)"
                       : "none";
        case VKLLM_COOPMAT_UNSUITABLE:
            text =
                "not used: the kernels need an f16*f16+f32->f32 subgroup shape and the "
                "cooperativeMatrix, shaderFloat16, vulkanMemoryModel and "
                "vulkanMemoryModelDeviceScope features at Vulkan 1.2";
            break;
        case VKLLM_COOPMAT_NOT_BUILT:
            text = "not used: this build has no cooperative-matrix shaders";
            break;
        case VKLLM_COOPMAT_NOT_CHOSEN:
            text = env_names("VKLLM_COOPMAT", "off")
                       ? "not used: VKLLM_COOPMAT=off"
                       : "not used on a CPU device unless VKLLM_COOPMAT=on";
            break;
        default:
            text = "state " + std::to_string(int(d.cooperative_matrix));  // a newer library's
    }
    std::string offered;
    for (uint32_t i = 0; i < d.coopmat_shape_count && i < VKLLM_MAX_COOPMAT_SHAPES; ++i)
        offered += (i ? ", " : "") + coopmat_shape_text(d.coopmat_shapes[i]);
    return offered.empty() ? text : text + " (offered: " + offered + ")";
}

}  // namespace vkllm_tool
