#include "gpu/memory.h"

#include <algorithm>

#include "gpu/fault.h"

namespace vkllm::gpu {

static const VkBufferUsageFlags kUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// Shared blocks hold sessions' activations and KV rings (a model's weights are placed in
// arenas of their own, models/weights.cpp): few enough allocations (drivers limit their
// count, and each costs), small enough not to strand much memory.
static const VkDeviceSize kDeviceBlock = VkDeviceSize(64) << 20;
static const VkDeviceSize kHostBlock = VkDeviceSize(32) << 20;

Buffer::~Buffer() {
    if (owner_) owner_->release(*this);
}

Buffer::Buffer(Buffer &&o) noexcept {
    *this = std::move(o);
}

Buffer &Buffer::operator=(Buffer &&o) noexcept {
    if (this != &o) {
        if (owner_) owner_->release(*this);
        owner_ = o.owner_;
        block_ = o.block_;
        buffer_ = o.buffer_;
        offset_ = o.offset_;
        size_ = o.size_;
        reserved_ = o.reserved_;
        mapped_ = o.mapped_;
        o.owner_ = nullptr;
        o.mapped_ = nullptr;
    }
    return *this;
}

BufferRange Buffer::range(VkDeviceSize offset, VkDeviceSize size) const {
    if (offset > size_ || (size && size > size_ - offset))
        fail(VKLLM_ERR_INTERNAL, "buffer range [%llu, +%llu) outside a buffer of %llu bytes",
             (unsigned long long)offset, (unsigned long long)size, (unsigned long long)size_);
    return BufferRange{buffer_, offset_ + offset, size ? size : size_ - offset};
}

Allocator::Allocator(Device &device, uint64_t budget) : device_(device), budget_(budget) {
    vkGetPhysicalDeviceMemoryProperties(device.caps().physical, &props_);
    unified_ = device.info().unified_memory != 0;
    align_ = std::max<VkDeviceSize>(
        {align_, device.caps().storage_offset_align, device.caps().texel_offset_align});
}

Allocator::~Allocator() {
    for (auto &b : blocks_)
        if (b) destroy_block(*b);
}

uint32_t Allocator::memory_type(uint32_t bits, MemoryKind kind) const {
    VkMemoryPropertyFlags need, prefer, avoid = 0;
    if (kind == MemoryKind::Host) {
        need = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        prefer = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    } else if (unified_) {
        need = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
               VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        prefer = 0;
    } else {
        need = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        prefer = 0;
        avoid = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;  // the small BAR window
    }
    int best = -1, best_score = -1;
    for (uint32_t i = 0; i < props_.memoryTypeCount; ++i) {
        VkMemoryPropertyFlags f = props_.memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & need) != need) continue;
        int score = ((f & prefer) == prefer ? 2 : 0) + ((f & avoid) ? 0 : 1);
        if (score > best_score) best = int(i), best_score = score;
    }
    if (best < 0)
        fail(VKLLM_ERR_UNSUPPORTED, "device %s has no suitable %s memory type", device_.info().name,
             kind == MemoryKind::Host ? "host-visible" : "device-local");
    return uint32_t(best);
}

size_t Allocator::create_block(VkDeviceSize size, MemoryKind kind, bool dedicated) {
    const VolkDeviceTable &vk = device_.vk();
    auto block = std::make_unique<Block>();
    block->size = size;
    block->kind = kind;
    block->dedicated = dedicated;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = size;
    bi.usage = kUsage;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vk.vkCreateBuffer(device_.handle(), &bi, nullptr, &block->buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vk.vkGetBufferMemoryRequirements(device_.handle(), block->buffer, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    VkResult r = VK_SUCCESS;
    try {
        require_budget_locked(req.size, kind == MemoryKind::Host ? "a staging block" : "a block");
        ai.memoryTypeIndex = memory_type(req.memoryTypeBits, kind);
        r = injected_fault(FaultSite::AllocateMemory);
        if (r == VK_SUCCESS)
            r = vk.vkAllocateMemory(device_.handle(), &ai, nullptr, &block->memory);
        if (r == VK_SUCCESS)
            r = vk.vkBindBufferMemory(device_.handle(), block->buffer, block->memory, 0);
        bool host_visible = props_.memoryTypes[ai.memoryTypeIndex].propertyFlags &
                            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
        if (r == VK_SUCCESS && host_visible)
            r = vk.vkMapMemory(device_.handle(), block->memory, 0, VK_WHOLE_SIZE, 0,
                               &block->mapped);
    } catch (...) {
        destroy_block(*block);
        throw;
    }
    if (r != VK_SUCCESS) {
        destroy_block(*block);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            fail(r == VK_ERROR_OUT_OF_HOST_MEMORY ? VKLLM_ERR_OUT_OF_HOST_MEMORY
                                                  : VKLLM_ERR_OUT_OF_DEVICE_MEMORY,
                 "out of %s memory allocating %llu MiB on %s (%llu MiB already allocated)",
                 kind == MemoryKind::Host ? "host-visible" : "device",
                 (unsigned long long)(size >> 20), device_.info().name,
                 (unsigned long long)(bytes_ >> 20));
        check(r, "vkAllocateMemory");
    }
    block->free[0] = size;
    block->bytes = ai.allocationSize;
    bytes_ += block->bytes;
    for (size_t i = 0; i < blocks_.size(); ++i) {
        if (!blocks_[i]) {
            blocks_[i] = std::move(block);
            return i;
        }
    }
    blocks_.push_back(std::move(block));
    return blocks_.size() - 1;
}

void Allocator::destroy_block(Block &b) {
    const VolkDeviceTable &vk = device_.vk();
    if (b.buffer) vk.vkDestroyBuffer(device_.handle(), b.buffer, nullptr);
    if (b.memory) vk.vkFreeMemory(device_.handle(), b.memory, nullptr);
}

void Allocator::require_budget_locked(uint64_t bytes, const char *what) const {
    if (budget_ && (bytes > budget_ || bytes_ > budget_ - bytes))
        fail(VKLLM_ERR_OUT_OF_DEVICE_MEMORY,
             "%s of %.1f MiB does not fit the runtime's device memory budget of %.1f MiB (%.1f "
             "MiB already allocated)",
             what, double(bytes) / (1 << 20), double(budget_) / (1 << 20),
             double(bytes_) / (1 << 20));
}

void Allocator::require_budget(uint64_t bytes, const char *what) const {
    std::lock_guard<std::mutex> lock(mutex_);
    require_budget_locked(bytes, what);
}

Buffer Allocator::allocate(VkDeviceSize size, MemoryKind kind, bool own_block) {
    device_.check_not_lost();
    if (size == 0) size = 1;
    VkDeviceSize reserved = (size + align_ - 1) / align_ * align_;
    std::lock_guard<std::mutex> lock(mutex_);
    VkDeviceSize block_size = kind == MemoryKind::Host ? kHostBlock : kDeviceBlock;
    VkDeviceSize max_alloc = device_.info().max_allocation_size;
    if (max_alloc && block_size > max_alloc) block_size = max_alloc;
    if (max_alloc && reserved > max_alloc)
        fail(VKLLM_ERR_OUT_OF_DEVICE_MEMORY,
             "a buffer of %llu bytes exceeds the device's largest allocation (%llu bytes)",
             (unsigned long long)size, (unsigned long long)max_alloc);

    size_t index = SIZE_MAX;
    VkDeviceSize offset = 0;
    for (size_t i = 0; i < blocks_.size() && index == SIZE_MAX && !own_block; ++i) {
        Block *b = blocks_[i].get();
        if (!b || b->kind != kind || b->dedicated) continue;
        for (auto &f : b->free) {
            if (f.second >= reserved) {
                index = i;
                offset = f.first;
                break;
            }
        }
    }
    if (index == SIZE_MAX) {
        // Under a budget a shared block takes a sixteenth of it at most, and no more than
        // what is left: the first small buffer must not claim the whole budget.
        if (budget_) {
            VkDeviceSize room = budget_ > bytes_ ? (budget_ - bytes_) / align_ * align_ : 0;
            VkDeviceSize share = (budget_ / 16 + align_ - 1) / align_ * align_;
            block_size = std::max(reserved, std::min({block_size, share, room}));
        }
        bool dedicated = own_block || reserved > block_size / 2;
        index = create_block(dedicated ? reserved : block_size, kind, dedicated);
        offset = 0;
    }
    Block &b = *blocks_[index];
    VkDeviceSize free_size = b.free[offset];
    b.free.erase(offset);
    if (free_size > reserved) b.free[offset + reserved] = free_size - reserved;

    Buffer buf;
    buf.owner_ = this;
    buf.block_ = index;
    buf.buffer_ = b.buffer;
    buf.offset_ = offset;
    buf.size_ = size;
    buf.reserved_ = reserved;
    buf.mapped_ = b.mapped ? static_cast<char *>(b.mapped) + offset : nullptr;
    return buf;
}

void Allocator::release(Buffer &buf) {
    std::lock_guard<std::mutex> lock(mutex_);
    Block &b = *blocks_[buf.block_];
    auto it = b.free.emplace(buf.offset_, buf.reserved_).first;
    auto next = std::next(it);
    if (next != b.free.end() && it->first + it->second == next->first) {
        it->second += next->second;
        b.free.erase(next);
    }
    if (it != b.free.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == it->first) {
            prev->second += it->second;
            b.free.erase(it);
        }
    }
    // An empty block goes back to the driver so a long-lived runtime does not hoard memory.
    if (b.free.size() == 1 && b.free.begin()->second == b.size) {
        bytes_ -= b.bytes;
        destroy_block(b);
        blocks_[buf.block_].reset();
    }
    buf.owner_ = nullptr;
    buf.mapped_ = nullptr;
}

uint64_t Allocator::bytes_allocated() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
}

}  // namespace vkllm::gpu
