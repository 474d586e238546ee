// Compute pipelines from the SPIR-V embedded in the library, specialised with specialization
// constants and kept in a VkPipelineCache that can persist to a file. The types of the shader
// interfaces (SpecConstant, Binding, kPushConstantBytes, ...) are the interfaces' own
// (shaders/include/interface.h): the shaders depend on nothing here.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/device.h"
#include "gpu/tensor.h"
#include "interface.h"

namespace vkllm::gpu {

// One shader of shaders/, compiled and embedded at build time (generated registry).
struct ShaderCode {
    const char *name;
    const uint32_t *words;
    size_t count;
};
extern const ShaderCode kShaders[];
extern const size_t kShaderCount;

// The formats of a pipeline's bindings: VK_FORMAT_UNDEFINED for a storage buffer, else the
// format of the uniform texel buffer bound there. Empty: every binding a storage buffer.
using BindingFormats = std::vector<VkFormat>;

// The members of a BindingList in binding order.
template <class Bindings, std::enable_if_t<std::is_base_of_v<BindingList, Bindings>, int> = 0>
std::vector<Binding> binding_list(const Bindings &b) {
    static_assert(sizeof(Bindings) == Bindings::count * sizeof(Binding), "Binding members only");
    std::vector<Binding> all(Bindings::count);
    std::memcpy(static_cast<void *>(all.data()), &b, sizeof(Bindings));
    return all;
}
// The ranges of a BindingList in binding order. Fails (VKLLM_ERR_INTERNAL) where one was left
// unset.
std::vector<BufferRange> binding_ranges(const std::vector<Binding> &bindings);
template <class Bindings, std::enable_if_t<std::is_base_of_v<BindingList, Bindings>, int> = 0>
std::vector<BufferRange> binding_ranges(const Bindings &b) {
    return binding_ranges(binding_list(b));
}

struct Pipeline {
    std::string shader;  // the shaders/ file it comes from (profiles are grouped by it)
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    uint32_t bindings = 0;
    BindingFormats formats;  // one per binding
    // Bit b: the shader may write binding b (spirv_writes.h); a Recording reads it to put
    // barriers only where a dispatch depends on an earlier one (texel bindings never written).
    uint32_t written = 0;
};

class Pipelines {
  public:
    // An unreadable, foreign or corrupt cache file is ignored (the driver rebuilds).
    Pipelines(Device &device, std::string cache_path);
    ~Pipelines();
    Pipelines(const Pipelines &) = delete;
    Pipelines &operator=(const Pipelines &) = delete;

    // The pipeline for `shader` (shaders::<name>, generated shader_names.h) with the bindings
    // and specialization constants of its interface (shaders/<family>/<name>.h; NoSpec for none):
    // the binding count and texel formats come from `Bindings`, each constant is passed with its
    // own constant_id; created on first use. The reference stays valid for the life of this
    // object. Thread-safe.
    template <
        class Bindings, class Spec,
        std::enable_if_t<
            std::is_base_of_v<BindingList, Bindings> && std::is_base_of_v<SpecList, Spec>, int> = 0>
    const Pipeline &get(const char *shader, const Spec &spec) {
        std::vector<SpecConstant> constants(
            std::is_empty_v<Spec> ? 0 : sizeof(Spec) / sizeof(SpecConstant));
        if (!constants.empty()) std::memcpy(constants.data(), &spec, sizeof(Spec));
        BindingFormats formats;
        bool texel = false;
        for (const Binding &b : binding_list(Bindings{})) {
            formats.push_back(b.format);
            texel = texel || b.format != VK_FORMAT_UNDEFINED;
        }
        if (!texel) formats.clear();  // every binding a storage buffer
        return get_constants(shader, Bindings::count, constants, formats);
    }

    // Writes the cache file (no-op without a path). Failure is logged, not thrown.
    void save() const;

    uint64_t created() const;
    // Milliseconds spent creating shader modules and pipelines, all told.
    double compile_ms() const;
    uint64_t cache_bytes_loaded() const { return cache_bytes_loaded_; }

  private:
    const Pipeline &get_constants(const char *shader, uint32_t bindings,
                                  const std::vector<SpecConstant> &spec,
                                  const BindingFormats &formats);
    // The set and pipeline layouts for bindings of these formats (keyed by which are texels).
    std::pair<VkDescriptorSetLayout, VkPipelineLayout> layouts(const BindingFormats &formats);

    Device &device_;
    std::string cache_path_;
    VkPipelineCache cache_ = VK_NULL_HANDLE;
    uint64_t cache_bytes_loaded_ = 0;
    mutable std::mutex mutex_;
    double compile_ms_ = 0;
    std::map<std::vector<bool>, std::pair<VkDescriptorSetLayout, VkPipelineLayout>> layouts_;
    std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
    std::map<std::string, VkShaderModule> modules_;
    std::map<std::string, uint32_t> written_;  // per shader: spirv_written_bindings
};

}  // namespace vkllm::gpu
