// A command buffer being recorded: dispatches with their bindings and push constants,
// barriers, copies and timestamps. Recorded once, it can be submitted any number of times.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu/memory.h"
#include "gpu/pipeline.h"

namespace vkllm::gpu {

struct Timing {
    std::string label;
    double ms;  // since the previous timestamp (or since the start for the first)
};

// One Recording per thread at a time; different Recordings may be used concurrently.
class Recording {
  public:
    // `max_timestamps` > 0 enables timestamp() (when the device supports timestamps). With
    // `per_dispatch`, every dispatch is followed by a timestamp labelled with its shader (a
    // profile; a dispatch past max_timestamps goes unlabelled into the next label's time).
    explicit Recording(Device &device, uint32_t max_timestamps = 0, bool per_dispatch = false);
    ~Recording();
    Recording(const Recording &) = delete;
    Recording &operator=(const Recording &) = delete;

    // Starts a new recording, dropping what was recorded before.
    void begin();
    // Each range must respect maxStorageBufferRange and the offset alignment (for a texel
    // binding of the pipeline: maxTexelBufferElements, the texel offset alignment and whole
    // texels); kernels split larger tensors before they get here. Texel bindings get buffer
    // views that live as long as the recording.
    void dispatch(const Pipeline &pipeline, const std::vector<BufferRange> &bindings,
                  const void *push, uint32_t push_bytes, uint32_t groups_x, uint32_t groups_y = 1,
                  uint32_t groups_z = 1);
    // The same with the bindings of the shader's interface, by name (shaders/include/interface.h).
    template <class Bindings, std::enable_if_t<std::is_base_of_v<BindingList, Bindings>, int> = 0>
    void dispatch(const Pipeline &pipeline, const Bindings &bindings, const void *push,
                  uint32_t push_bytes, uint32_t groups_x, uint32_t groups_y = 1,
                  uint32_t groups_z = 1) {
        dispatch(pipeline, binding_ranges(bindings), push, push_bytes, groups_x, groups_y,
                 groups_z);
    }
    // Makes every earlier shader or transfer write visible to every later command.
    void barrier();
    void copy(const BufferRange &src, const BufferRange &dst);
    void fill(const BufferRange &dst, uint32_t value);
    // Records the time at which all earlier commands finished, under `label`.
    void timestamp(const std::string &label);
    void end();

    // Submits and waits (may be called many times after end()).
    void submit();
    // Durations between consecutive timestamps of the last submission.
    std::vector<Timing> timings() const;

    uint32_t dispatches() const { return dispatches_; }
    bool timestamps_enabled() const { return queries_ != VK_NULL_HANDLE; }

  private:
    VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
    VkBufferView view(const BufferRange &range, VkFormat format, size_t binding);
    void destroy_views();

    Device &device_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> descriptor_pools_;
    std::map<std::tuple<VkBuffer, VkDeviceSize, VkDeviceSize, VkFormat>, VkBufferView> views_;
    size_t pool_index_ = 0;
    uint32_t sets_in_pool_ = 0;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    uint32_t max_timestamps_ = 0;
    std::vector<std::string> labels_;
    uint32_t dispatches_ = 0;
    bool per_dispatch_ = false;
    bool recording_ = false;
    bool ended_ = false;
};

}  // namespace vkllm::gpu
