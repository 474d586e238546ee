#include "gpu/transfer.h"

#include <algorithm>
#include <cstring>

namespace vkllm::gpu {

static const VkDeviceSize kStagingBytes = VkDeviceSize(16) << 20;

Transfer::Transfer(Device &device, Allocator &allocator)
    : allocator_(allocator), recording_(device) {}

void Transfer::check_range(const Buffer &b, size_t bytes, VkDeviceSize offset) const {
    if (offset > b.size() || bytes > b.size() - offset)
        fail(VKLLM_ERR_INTERNAL, "transfer of %zu bytes at %llu outside a buffer of %llu bytes",
             bytes, (unsigned long long)offset, (unsigned long long)b.size());
}

void Transfer::upload(const Buffer &dst, const void *src, size_t bytes, VkDeviceSize offset) {
    check_range(dst, bytes, offset);
    if (dst.mapped()) {
        std::memcpy(static_cast<char *>(dst.mapped()) + offset, src, bytes);
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!staging_) staging_ = allocator_.allocate(kStagingBytes, MemoryKind::Host);
    for (size_t done = 0; done < bytes;) {
        size_t n = std::min<size_t>(bytes - done, kStagingBytes);
        std::memcpy(staging_.mapped(), static_cast<const char *>(src) + done, n);
        recording_.begin();
        recording_.copy(staging_.range(0, n), dst.range(offset + done, n));
        recording_.end();
        recording_.submit();
        done += n;
    }
}

void Transfer::download(const Buffer &src, void *dst, size_t bytes, VkDeviceSize offset) {
    check_range(src, bytes, offset);
    if (src.mapped()) {
        std::memcpy(dst, static_cast<const char *>(src.mapped()) + offset, bytes);
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!staging_) staging_ = allocator_.allocate(kStagingBytes, MemoryKind::Host);
    for (size_t done = 0; done < bytes;) {
        size_t n = std::min<size_t>(bytes - done, kStagingBytes);
        recording_.begin();
        recording_.copy(src.range(offset + done, n), staging_.range(0, n));
        recording_.end();
        recording_.submit();
        std::memcpy(static_cast<char *>(dst) + done, staging_.mapped(), n);
        done += n;
    }
}

}  // namespace vkllm::gpu
