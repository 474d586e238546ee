// The logical device: its function table, one compute queue, and submission.
#pragma once

#include <atomic>
#include <mutex>

#include "gpu/device_info.h"
#include "gpu/instance.h"

namespace vkllm::gpu {

class Device {
  public:
    Device(const Instance &instance, const DeviceCaps &caps);
    ~Device();
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;

    const VolkDeviceTable &vk() const { return table_; }
    VkDevice handle() const { return device_; }
    const DeviceCaps &caps() const { return caps_; }
    const vkllm_device_info &info() const { return caps_.info; }
    const Logger &log() const { return instance_.log(); }

    // Submits one recorded command buffer and waits for it to finish. Thread-safe. Once any
    // call has seen VK_ERROR_DEVICE_LOST, every later one throws VKLLM_ERR_DEVICE_LOST.
    void submit_and_wait(VkCommandBuffer cmd);
    void wait_idle();
    uint64_t submits() const { return submits_.load(); }
    bool lost() const { return lost_.load(); }
    // Whether VK_KHR_cooperative_matrix is enabled: the device can run the coopmat kernels
    // (caps().coopmat) and the build has them (cmake/coopmat.cmake).
    bool coopmat_enabled() const;
    // Throws VKLLM_ERR_DEVICE_LOST once the device has been lost.
    void check_not_lost() const;

  private:
    void checked(VkResult r, const char *what);  // check() that remembers a device loss

    const Instance &instance_;
    DeviceCaps caps_;
    VkDevice device_ = VK_NULL_HANDLE;
    VolkDeviceTable table_{};
    VkQueue queue_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::mutex queue_mutex_;
    std::atomic<uint64_t> submits_{0};
    std::atomic<bool> lost_{false};
};

}  // namespace vkllm::gpu
