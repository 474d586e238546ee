// Device memory: a few large VkDeviceMemory blocks, each covered by one VkBuffer, handed out
// as aligned sub-ranges. Kernels bind (buffer, offset, size) ranges of them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "gpu/device.h"
#include "gpu/tensor.h"

namespace vkllm::gpu {

enum class MemoryKind {
    Device,  // where tensors live; host-visible too on unified-memory devices
    Host,    // host-visible and coherent: staging, readback, per-step values
};

class Allocator;

// A sub-allocation. Move-only; returns its range to the allocator when destroyed.
class Buffer {
  public:
    Buffer() = default;
    ~Buffer();
    Buffer(Buffer &&other) noexcept;
    Buffer &operator=(Buffer &&other) noexcept;
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;

    VkDeviceSize size() const { return size_; }
    // Host pointer to the start of this buffer when its memory is host-visible, else null.
    void *mapped() const { return mapped_; }
    // [offset, offset + size) of this buffer; size 0 means up to its end.
    BufferRange range(VkDeviceSize offset = 0, VkDeviceSize size = 0) const;
    explicit operator bool() const { return owner_ != nullptr; }

  private:
    friend class Allocator;
    Allocator *owner_ = nullptr;
    size_t block_ = 0;
    VkBuffer buffer_ = VK_NULL_HANDLE;
    VkDeviceSize offset_ = 0;
    VkDeviceSize size_ = 0;
    VkDeviceSize reserved_ = 0;
    void *mapped_ = nullptr;
};

class Allocator {
  public:
    // budget: the most bytes of VkDeviceMemory it may hold at once (0: as much as the device
    // gives); beyond it allocations fail with VKLLM_ERR_OUT_OF_DEVICE_MEMORY.
    Allocator(Device &device, uint64_t budget = 0);
    ~Allocator();
    Allocator(const Allocator &) = delete;
    Allocator &operator=(const Allocator &) = delete;

    // Throws VKLLM_ERR_OUT_OF_DEVICE_MEMORY (or _HOST_) when the device refuses. Thread-safe.
    // Small buffers share blocks; `own_block` gives the buffer a block of exactly its size
    // (long-lived data such as a model's, which should not pin a shared block).
    Buffer allocate(VkDeviceSize size, MemoryKind kind, bool own_block = false);
    uint64_t bytes_allocated() const;
    // Throws VKLLM_ERR_OUT_OF_DEVICE_MEMORY, naming `what`, when `bytes` more would not fit
    // the budget: lets a model or session refuse before it allocates anything.
    void require_budget(uint64_t bytes, const char *what) const;
    // True when MemoryKind::Device buffers are mapped (no staging copy needed).
    bool device_is_mapped() const { return unified_; }

  private:
    friend class Buffer;
    struct Block {
        VkDeviceMemory memory = VK_NULL_HANDLE;
        VkBuffer buffer = VK_NULL_HANDLE;
        VkDeviceSize size = 0;   // usable bytes
        VkDeviceSize bytes = 0;  // allocated from the driver
        void *mapped = nullptr;
        MemoryKind kind = MemoryKind::Device;
        bool dedicated = false;
        std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size, coalesced
    };

    void release(Buffer &buffer);
    void require_budget_locked(uint64_t bytes, const char *what) const;
    size_t create_block(VkDeviceSize size, MemoryKind kind, bool dedicated);
    void destroy_block(Block &block);
    uint32_t memory_type(uint32_t type_bits, MemoryKind kind) const;

    Device &device_;
    VkPhysicalDeviceMemoryProperties props_{};
    bool unified_ = false;
    VkDeviceSize align_ = 256;
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Block>> blocks_;  // null entries are freed blocks
    uint64_t budget_ = 0;
    uint64_t bytes_ = 0;
};

}  // namespace vkllm::gpu
