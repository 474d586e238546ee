#include "gpu/device.h"

#include <string>
#include <vector>

#include "gpu/fault.h"
#include "shader_names.h"

namespace vkllm::gpu {

Device::Device(const Instance &instance, const DeviceCaps &caps)
    : instance_(instance), caps_(caps) {
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = caps.queue_family;
    q.queueCount = 1;
    q.pQueuePriorities = &priority;
    VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    ci.queueCreateInfoCount = 1;
    ci.pQueueCreateInfos = &q;
    // The name only: the subset's structures live in the beta header, which nothing else needs.
    std::vector<const char *> extensions;
    if (caps.portability_subset) {
        instance.log()(VKLLM_LOG_DEBUG,
                       std::string("enabling VK_KHR_portability_subset on ") + caps.info.name);
        extensions.push_back("VK_KHR_portability_subset");
    }
    // The cooperative-matrix kernels, where the device and the build both have them; nothing
    // else needs a feature enabled.
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                         &cm};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
    if (coopmat_enabled()) {
        extensions.push_back(VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME);
        cm.cooperativeMatrix = VK_TRUE;
        v12.shaderFloat16 = VK_TRUE;
        v12.vulkanMemoryModel = VK_TRUE;
        // With the memory model enabled, the Device scope of other kernels' barriers
        // (moe_route's memoryBarrierBuffer) needs this too.
        v12.vulkanMemoryModelDeviceScope = VK_TRUE;
        ci.pNext = &f2;
        instance.log()(VKLLM_LOG_DEBUG, std::string("enabling VK_KHR_cooperative_matrix on ") +
                                            caps.info.name + ": " +
                                            coopmat_shape_text(caps.coopmat.f16));
    }
    ci.enabledExtensionCount = uint32_t(extensions.size());
    ci.ppEnabledExtensionNames = extensions.data();
    check(vkCreateDevice(caps.physical, &ci, nullptr, &device_), "vkCreateDevice");
    volkLoadDeviceTable(&table_, device_);
    table_.vkGetDeviceQueue(device_, caps.queue_family, 0, &queue_);
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r = table_.vkCreateFence(device_, &fi, nullptr, &fence_);
    if (r != VK_SUCCESS) {
        table_.vkDestroyDevice(device_, nullptr);
        check(r, "vkCreateFence");
    }
}

Device::~Device() {
    // A lost device reports the loss again here; there is nothing left to wait for.
    table_.vkDeviceWaitIdle(device_);
    table_.vkDestroyFence(device_, fence_, nullptr);
    table_.vkDestroyDevice(device_, nullptr);
}

bool Device::coopmat_enabled() const {
    return shaders::kCoopmatShaders && caps_.coopmat.usable();
}

void Device::check_not_lost() const {
    if (lost_.load())
        fail(VKLLM_ERR_DEVICE_LOST,
             "the device %s was lost earlier; destroy the sessions, models and runtime and "
             "create them again",
             caps_.info.name);
}

void Device::checked(VkResult r, const char *what) {
    if (r == VK_ERROR_DEVICE_LOST) lost_.store(true);
    check(r, what);
}

void Device::submit_and_wait(VkCommandBuffer cmd) {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    check_not_lost();
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    checked(table_.vkResetFences(device_, 1, &fence_), "vkResetFences");
    VkResult r = injected_fault(FaultSite::QueueSubmit);
    if (r == VK_SUCCESS) r = table_.vkQueueSubmit(queue_, 1, &si, fence_);
    checked(r, "vkQueueSubmit");
    submits_.fetch_add(1);
    r = table_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS) r = injected_fault(FaultSite::WaitForFences);
    checked(r, "vkWaitForFences");
}

void Device::wait_idle() {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    check_not_lost();
    checked(table_.vkQueueWaitIdle(queue_), "vkQueueWaitIdle");
}

}  // namespace vkllm::gpu
