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
//
// Barriers are placed on data, not on order: before a dispatch, copy or fill that reads a range
// an earlier command wrote since the last barrier, writes a range such a command read or wrote,
// the recording puts one barrier (all compute and transfer writes before all later reads and
// writes); independent commands run back to back under none. What a dispatch writes is what its
// shader may write (Pipeline::written); every binding counts as read. end() puts a barrier after
// everything, so the next recording submitted (and the host) sees every write.
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
    uint32_t barriers() const { return barriers_; }

    // What was recorded, in order, for tests that check where the barriers went: a command's
    // ranges read and written, or a barrier. Kept only when `keep_log` was set.
    struct Span {
        VkBuffer buffer;
        VkDeviceSize begin, end;
    };
    struct Event {
        bool barrier = false;
        std::string what;  // the shader, "copy" or "fill"
        std::vector<Span> reads, writes;
    };
    void keep_log(bool on) { keep_log_ = on; }
    const std::vector<Event> &log() const { return log_; }
    bool timestamps_enabled() const { return queries_ != VK_NULL_HANDLE; }

  private:
    // A barrier first if the command (its `reads` and `writes`) depends on one since the last.
    void order(const char *what, std::vector<Span> reads, std::vector<Span> writes);
    // Every earlier compute or transfer write before every later read or write (and before the
    // host's reads too, with `host`).
    void barrier(bool host = false);
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
    uint32_t barriers_ = 0;
    std::vector<Span> read_, written_;  // since the last barrier
    bool keep_log_ = false;
    std::vector<Event> log_;
    bool per_dispatch_ = false;
    bool recording_ = false;
    bool ended_ = false;
};

}  // namespace vkllm::gpu
