// The Vulkan instance: loader initialisation through volk, optional validation layer whose
// messages are counted and forwarded to the logger.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "common/log.h"
#include "gpu/vulkan_options.h"

namespace vkllm::gpu {

class Instance {
  public:
    // Throws VKLLM_ERR_NO_DEVICE when there is no loader or no driver, VKLLM_ERR_UNSUPPORTED
    // when validation is requested but the layer is missing. The instance asks for Vulkan 1.2,
    // or the lower version `options` caps it at.
    Instance(bool validation, Logger log, const VulkanOptions &options = {});
    ~Instance();
    Instance(const Instance &) = delete;
    Instance &operator=(const Instance &) = delete;

    VkInstance handle() const { return instance_; }
    const Logger &log() const { return log_; }
    // Throws VKLLM_ERR_NO_DEVICE when the driver reports none.
    std::vector<VkPhysicalDevice> physical_devices() const;

    // What vkCreateInstance was given: the debug utils under validation, portability
    // enumeration (extension and flag) where the loader offers it.
    const std::vector<std::string> &enabled_extensions() const { return enabled_extensions_; }
    VkInstanceCreateFlags create_flags() const { return create_flags_; }
    // The VkApplicationInfo::apiVersion it was created with: no device is used beyond it.
    uint32_t api_version() const { return api_version_; }
    const VulkanOptions &options() const { return options_; }

    uint64_t validation_errors() const { return errors_.load(); }
    uint64_t validation_warnings() const { return warnings_.load(); }

  private:
    static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(
        VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
        const VkDebugUtilsMessengerCallbackDataEXT *data, void *user);

    VkInstance instance_ = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
    PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger_ = nullptr;  // this instance's
    std::vector<std::string> enabled_extensions_;
    VkInstanceCreateFlags create_flags_ = 0;
    uint32_t api_version_ = VK_API_VERSION_1_2;
    VulkanOptions options_;
    Logger log_;
    std::atomic<uint64_t> errors_{0};
    std::atomic<uint64_t> warnings_{0};
};

}  // namespace vkllm::gpu
