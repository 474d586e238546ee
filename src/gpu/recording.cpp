#include "gpu/recording.h"

namespace vkllm::gpu {

static const uint32_t kSetsPerPool = 256;
// The most any kernel binds (the QKV projection storing K and V: 14, 10 of them storage
// buffers, which LinearKernels::qkv_store_fusable checks against the device's per-stage limit).
static const uint32_t kMaxBindings = 16;

Recording::Recording(Device &device, uint32_t max_timestamps, bool per_dispatch)
    : device_(device), per_dispatch_(per_dispatch) {
    const VolkDeviceTable &vk = device_.vk();
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = device.caps().queue_family;
    check(vk.vkCreateCommandPool(device_.handle(), &pi, nullptr, &pool_), "vkCreateCommandPool");
    try {
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool_;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        check(vk.vkAllocateCommandBuffers(device_.handle(), &ai, &cmd_),
              "vkAllocateCommandBuffers");
        if (max_timestamps > 0 && device.info().timestamps) {
            VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
            qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
            qi.queryCount = max_timestamps + 1;
            check(vk.vkCreateQueryPool(device_.handle(), &qi, nullptr, &queries_),
                  "vkCreateQueryPool");
            max_timestamps_ = max_timestamps;
        }
    } catch (...) {
        vk.vkDestroyCommandPool(device_.handle(), pool_, nullptr);
        throw;
    }
}

Recording::~Recording() {
    const VolkDeviceTable &vk = device_.vk();
    destroy_views();
    for (VkDescriptorPool p : descriptor_pools_)
        vk.vkDestroyDescriptorPool(device_.handle(), p, nullptr);
    if (queries_) vk.vkDestroyQueryPool(device_.handle(), queries_, nullptr);
    vk.vkDestroyCommandPool(device_.handle(), pool_, nullptr);
}

void Recording::begin() {
    const VolkDeviceTable &vk = device_.vk();
    check(vk.vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    destroy_views();
    for (VkDescriptorPool p : descriptor_pools_)
        check(vk.vkResetDescriptorPool(device_.handle(), p, 0), "vkResetDescriptorPool");
    pool_index_ = 0;
    sets_in_pool_ = 0;
    labels_.clear();
    dispatches_ = 0;
    barriers_ = 0;
    read_.clear();
    written_.clear();
    log_.clear();
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vk.vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    if (queries_) {
        vk.vkCmdResetQueryPool(cmd_, queries_, 0, max_timestamps_ + 1);
        vk.vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
    }
    recording_ = true;
    ended_ = false;
}

VkDescriptorSet Recording::allocate_set(VkDescriptorSetLayout layout) {
    const VolkDeviceTable &vk = device_.vk();
    if (pool_index_ == descriptor_pools_.size() || sets_in_pool_ == kSetsPerPool) {
        if (sets_in_pool_ == kSetsPerPool) ++pool_index_;
        sets_in_pool_ = 0;
        if (pool_index_ == descriptor_pools_.size()) {
            VkDescriptorPoolSize sizes[2] = {
                {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kMaxBindings},
                {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kSetsPerPool * kMaxBindings}};
            VkDescriptorPoolCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
            ci.maxSets = kSetsPerPool;
            ci.poolSizeCount = 2;
            ci.pPoolSizes = sizes;
            VkDescriptorPool pool;
            check(vk.vkCreateDescriptorPool(device_.handle(), &ci, nullptr, &pool),
                  "vkCreateDescriptorPool");
            descriptor_pools_.push_back(pool);
        }
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = descriptor_pools_[pool_index_];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set;
    check(vk.vkAllocateDescriptorSets(device_.handle(), &ai, &set), "vkAllocateDescriptorSets");
    ++sets_in_pool_;
    return set;
}

void Recording::destroy_views() {
    for (auto &v : views_)
        device_.vk().vkDestroyBufferView(device_.handle(), v.second, nullptr);
    views_.clear();
}

VkBufferView Recording::view(const BufferRange &b, VkFormat format, size_t binding) {
    auto key = std::make_tuple(b.buffer, b.offset, b.size, format);
    auto it = views_.find(key);
    if (it != views_.end()) return it->second;
    const DeviceCaps &caps = device_.caps();
    const uint64_t texel = 16;  // the kernels' texel formats are all 4 x 32 bits
    if (b.offset % caps.texel_offset_align || b.size % texel || b.size == 0 ||
        b.size / texel > caps.info.max_texel_buffer_elements)
        fail(VKLLM_ERR_INTERNAL,
             "texel binding %zu (offset %llu, %llu bytes) breaks the device's texel-buffer limits "
             "(%llu elements, alignment %llu)",
             binding, (unsigned long long)b.offset, (unsigned long long)b.size,
             (unsigned long long)caps.info.max_texel_buffer_elements,
             (unsigned long long)caps.texel_offset_align);
    VkBufferViewCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    ci.buffer = b.buffer;
    ci.format = format;
    ci.offset = b.offset;
    ci.range = b.size;
    VkBufferView v;
    check(device_.vk().vkCreateBufferView(device_.handle(), &ci, nullptr, &v),
          "vkCreateBufferView");
    views_[key] = v;
    return v;
}

void Recording::dispatch(const Pipeline &p, const std::vector<BufferRange> &bindings,
                         const void *push, uint32_t push_bytes, uint32_t gx, uint32_t gy,
                         uint32_t gz) {
    if (!recording_) fail(VKLLM_ERR_INTERNAL, "dispatch outside begin()/end()");
    if (bindings.size() != p.bindings || bindings.size() > kMaxBindings)
        fail(VKLLM_ERR_INTERNAL, "dispatch with %zu bindings for a pipeline of %u", bindings.size(),
             p.bindings);
    if (push_bytes > kPushConstantBytes) fail(VKLLM_ERR_INTERNAL, "push constants too large");
    const DeviceCaps &caps = device_.caps();
    if (gx > caps.max_groups_x || gy > 65535 || gz > 65535)
        fail(VKLLM_ERR_INTERNAL, "dispatch of %u x %u x %u workgroups exceeds the device limit", gx,
             gy, gz);
    VkDescriptorSet set = allocate_set(p.set_layout);
    VkDescriptorBufferInfo infos[kMaxBindings];
    VkBufferView views[kMaxBindings];
    VkWriteDescriptorSet writes[kMaxBindings];
    for (size_t i = 0; i < bindings.size(); ++i) {
        const BufferRange &b = bindings[i];
        writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = uint32_t(i);
        writes[i].descriptorCount = 1;
        if (p.formats[i] != VK_FORMAT_UNDEFINED) {
            views[i] = view(b, p.formats[i], i);
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
            writes[i].pTexelBufferView = &views[i];
            continue;
        }
        if (b.size > caps.info.max_storage_buffer_range || b.offset % caps.storage_offset_align)
            fail(VKLLM_ERR_INTERNAL,
                 "binding %zu (offset %llu, %llu bytes) breaks the device's storage-buffer "
                 "limits (range %llu, alignment %llu)",
                 i, (unsigned long long)b.offset, (unsigned long long)b.size,
                 (unsigned long long)caps.info.max_storage_buffer_range,
                 (unsigned long long)caps.storage_offset_align);
        infos[i] = VkDescriptorBufferInfo{b.buffer, b.offset, b.size};
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    std::vector<Span> reads, written;
    for (size_t i = 0; i < bindings.size(); ++i) {
        const BufferRange &b = bindings[i];
        Span span{b.buffer, b.offset, b.offset + b.size};
        reads.push_back(span);
        if (i < 32 && (p.written >> i & 1u)) written.push_back(span);
    }
    order(p.shader.c_str(), std::move(reads), std::move(written));
    const VolkDeviceTable &vk = device_.vk();
    vk.vkUpdateDescriptorSets(device_.handle(), uint32_t(bindings.size()), writes, 0, nullptr);
    vk.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
    vk.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0,
                               nullptr);
    if (push_bytes)
        vk.vkCmdPushConstants(cmd_, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    vk.vkCmdDispatch(cmd_, gx, gy, gz);
    ++dispatches_;
    if (per_dispatch_) timestamp(p.shader);
}

namespace {

bool overlaps(const Recording::Span &a, const Recording::Span &b) {
    return a.buffer == b.buffer && a.begin < b.end && b.begin < a.end;
}

bool any_overlap(const std::vector<Recording::Span> &a, const std::vector<Recording::Span> &b) {
    for (const Recording::Span &x : a)
        for (const Recording::Span &y : b)
            if (overlaps(x, y)) return true;
    return false;
}

}  // namespace

void Recording::order(const char *what, std::vector<Span> reads, std::vector<Span> writes) {
    // Read after write, write after write, write after read.
    if (any_overlap(reads, written_) || any_overlap(writes, written_) || any_overlap(writes, read_))
        barrier();
    if (keep_log_) log_.push_back(Event{false, what, reads, writes});
    read_.insert(read_.end(), reads.begin(), reads.end());
    written_.insert(written_.end(), writes.begin(), writes.end());
}

void Recording::barrier(bool host) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                       (host ? VK_ACCESS_HOST_READ_BIT : 0);
    VkPipelineStageFlags stages =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    device_.vk().vkCmdPipelineBarrier(cmd_, stages,
                                      stages | (host ? VK_PIPELINE_STAGE_HOST_BIT : 0), 0, 1, &mb,
                                      0, nullptr, 0, nullptr);
    ++barriers_;
    read_.clear();
    written_.clear();
    if (keep_log_) log_.push_back(Event{true, "barrier", {}, {}});
}

void Recording::copy(const BufferRange &src, const BufferRange &dst) {
    if (src.size != dst.size) fail(VKLLM_ERR_INTERNAL, "copy between ranges of different sizes");
    order("copy", {Span{src.buffer, src.offset, src.offset + src.size}},
          {Span{dst.buffer, dst.offset, dst.offset + dst.size}});
    VkBufferCopy region{src.offset, dst.offset, src.size};
    device_.vk().vkCmdCopyBuffer(cmd_, src.buffer, dst.buffer, 1, &region);
}

void Recording::fill(const BufferRange &dst, uint32_t value) {
    order("fill", {}, {Span{dst.buffer, dst.offset, dst.offset + dst.size}});
    device_.vk().vkCmdFillBuffer(cmd_, dst.buffer, dst.offset, dst.size, value);
}

void Recording::timestamp(const std::string &label) {
    if (!queries_ || labels_.size() >= max_timestamps_) return;
    labels_.push_back(label);
    device_.vk().vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_,
                                     uint32_t(labels_.size()));
}

void Recording::end() {
    // Device writes become visible to the host once the submission's fence has signalled, and
    // to every command submitted after this one (the next recording starts with no barrier).
    barrier(true);
    check(device_.vk().vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    recording_ = false;
    ended_ = true;
}

void Recording::submit() {
    if (!ended_) fail(VKLLM_ERR_INTERNAL, "submit of a recording that was not ended");
    device_.submit_and_wait(cmd_);
}

std::vector<Timing> Recording::timings() const {
    std::vector<Timing> out;
    if (!queries_ || labels_.empty()) return out;
    std::vector<uint64_t> ticks(labels_.size() + 1);
    check(device_.vk().vkGetQueryPoolResults(device_.handle(), queries_, 0, uint32_t(ticks.size()),
                                             ticks.size() * sizeof(uint64_t), ticks.data(),
                                             sizeof(uint64_t),
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    uint32_t bits = device_.caps().timestamp_valid_bits;
    uint64_t mask = bits >= 64 ? ~uint64_t(0) : ((uint64_t(1) << bits) - 1);
    double period = device_.caps().timestamp_period_ns;
    for (size_t i = 0; i < labels_.size(); ++i) {
        uint64_t delta = (ticks[i + 1] - ticks[i]) & mask;
        out.push_back(Timing{labels_[i], double(delta) * period * 1e-6});
    }
    return out;
}

}  // namespace vkllm::gpu
