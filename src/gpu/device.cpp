#include "gpu/device.h"

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
    table_.vkDeviceWaitIdle(device_);
    table_.vkDestroyFence(device_, fence_, nullptr);
    table_.vkDestroyDevice(device_, nullptr);
}

void Device::submit_and_wait(VkCommandBuffer cmd) {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(table_.vkResetFences(device_, 1, &fence_), "vkResetFences");
    check(table_.vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
    submits_.fetch_add(1);
    check(table_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

void Device::wait_idle() {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    check(table_.vkQueueWaitIdle(queue_), "vkQueueWaitIdle");
}

}  // namespace vkllm::gpu
