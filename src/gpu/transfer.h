// Host <-> device copies: a memcpy where the memory is mapped (unified-memory devices, host
// buffers), otherwise through a reusable staging buffer.
#pragma once

#include <mutex>

#include "gpu/recording.h"

namespace vkllm::gpu {

class Transfer {
  public:
    Transfer(Device &device, Allocator &allocator);

    // Copies `bytes` from `src` to `dst` at `offset`. Thread-safe.
    void upload(const Buffer &dst, const void *src, size_t bytes, VkDeviceSize offset = 0);
    void download(const Buffer &src, void *dst, size_t bytes, VkDeviceSize offset = 0);

  private:
    void check_range(const Buffer &b, size_t bytes, VkDeviceSize offset) const;

    Allocator &allocator_;
    std::mutex mutex_;
    Recording recording_;
    Buffer staging_;
};

}  // namespace vkllm::gpu
