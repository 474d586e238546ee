#include "gpu/pipeline.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "common/platform.h"
#include "gpu/spirv_writes.h"

namespace vkllm::gpu {

// The header every driver puts first in its cache data (VkPipelineCacheHeaderVersionOne).
// Checked here so that a file from another device or driver version never reaches a driver
// that might not check it as carefully.
static bool cache_matches(const std::vector<char> &data, const DeviceCaps &caps) {
    if (data.size() < 32) return false;
    uint32_t h[4];
    std::memcpy(h, data.data(), sizeof h);
    return h[0] >= 32 && h[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
           h[2] == caps.info.vendor_id && h[3] == caps.info.device_id &&
           std::memcmp(data.data() + 16, caps.cache_uuid, VK_UUID_SIZE) == 0;
}

// The whole file, or nothing where it cannot be read (a missing cache is the first run's).
static std::vector<char> read_cache_file(const std::string &path) {
    std::vector<char> data;
    std::FILE *f = platform::open_file(path, "rb");
    if (!f) return data;
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
        data.insert(data.end(), buf, buf + n);
    if (std::ferror(f)) data.clear();
    std::fclose(f);
    return data;
}

Pipelines::Pipelines(Device &device, std::string cache_path)
    : device_(device), cache_path_(std::move(cache_path)) {
    std::vector<char> data;
    if (!cache_path_.empty()) {
        data = read_cache_file(cache_path_);
        if (!data.empty() && !cache_matches(data, device.caps())) {
            device.log()(VKLLM_LOG_INFO, "pipeline cache " + cache_path_ +
                                             " is for another device or driver; ignoring it");
            data.clear();
        }
    }
    VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    ci.initialDataSize = data.size();
    ci.pInitialData = data.empty() ? nullptr : data.data();
    VkResult r = device_.vk().vkCreatePipelineCache(device_.handle(), &ci, nullptr, &cache_);
    if (r != VK_SUCCESS && !data.empty()) {  // a driver may still refuse it: start empty
        ci.initialDataSize = 0;
        ci.pInitialData = nullptr;
        data.clear();
        r = device_.vk().vkCreatePipelineCache(device_.handle(), &ci, nullptr, &cache_);
    }
    check(r, "vkCreatePipelineCache");
    cache_bytes_loaded_ = data.size();
}

Pipelines::~Pipelines() {
    const VolkDeviceTable &vk = device_.vk();
    VkDevice d = device_.handle();
    for (auto &p : pipelines_)
        vk.vkDestroyPipeline(d, p.second->pipeline, nullptr);
    for (auto &m : modules_)
        vk.vkDestroyShaderModule(d, m.second, nullptr);
    for (auto &l : layouts_) {
        vk.vkDestroyPipelineLayout(d, l.second.second, nullptr);
        vk.vkDestroyDescriptorSetLayout(d, l.second.first, nullptr);
    }
    vk.vkDestroyPipelineCache(d, cache_, nullptr);
}

void Pipelines::save() const {
    if (cache_path_.empty()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    size_t size = 0;
    const VolkDeviceTable &vk = device_.vk();
    if (vk.vkGetPipelineCacheData(device_.handle(), cache_, &size, nullptr) != VK_SUCCESS) return;
    std::vector<char> data(size);
    if (vk.vkGetPipelineCacheData(device_.handle(), cache_, &size, data.data()) != VK_SUCCESS)
        return;
    // A crash or a concurrent reader (another process on the same cache) never sees half a
    // file, and two writers never mix their bytes.
    std::string why;
    if (!platform::write_file_atomically(cache_path_, std::string_view(data.data(), size), &why))
        device_.log()(VKLLM_LOG_WARNING,
                      "could not write the pipeline cache " + cache_path_ + ": " + why);
}

uint64_t Pipelines::created() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pipelines_.size();
}

double Pipelines::compile_ms() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return compile_ms_;
}

std::pair<VkDescriptorSetLayout, VkPipelineLayout> Pipelines::layouts(
    const BindingFormats &formats) {
    std::vector<bool> texel;
    for (VkFormat f : formats)
        texel.push_back(f != VK_FORMAT_UNDEFINED);
    auto it = layouts_.find(texel);
    if (it != layouts_.end()) return it->second;
    std::vector<VkDescriptorSetLayoutBinding> b(formats.size());
    for (uint32_t i = 0; i < b.size(); ++i) {
        b[i].binding = i;
        b[i].descriptorType =
            texel[i] ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    const VolkDeviceTable &vk = device_.vk();
    VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    ci.bindingCount = uint32_t(b.size());
    ci.pBindings = b.data();
    VkDescriptorSetLayout layout;
    check(vk.vkCreateDescriptorSetLayout(device_.handle(), &ci, nullptr, &layout),
          "vkCreateDescriptorSetLayout");
    VkPushConstantRange pc{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
    VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    li.setLayoutCount = 1;
    li.pSetLayouts = &layout;
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &pc;
    VkPipelineLayout pl;
    VkResult r = vk.vkCreatePipelineLayout(device_.handle(), &li, nullptr, &pl);
    if (r != VK_SUCCESS) vk.vkDestroyDescriptorSetLayout(device_.handle(), layout, nullptr);
    check(r, "vkCreatePipelineLayout");
    return layouts_[texel] = {layout, pl};
}

std::vector<BufferRange> binding_ranges(const std::vector<Binding> &bindings) {
    std::vector<BufferRange> ranges;
    for (const Binding &b : bindings) {
        if (b.range.buffer == VkBuffer{})
            fail(VKLLM_ERR_INTERNAL, "binding %u (%s) was not set", b.id, b.name);
        ranges.push_back(b.range);
    }
    return ranges;
}

const Pipeline &Pipelines::get_constants(const char *shader, uint32_t bindings,
                                         const std::vector<SpecConstant> &spec,
                                         const BindingFormats &formats) {
    if (!formats.empty() && formats.size() != bindings)
        fail(VKLLM_ERR_INTERNAL, "%s: %zu binding formats for %u bindings", shader, formats.size(),
             bindings);
    std::string key = std::string(shader) + "/" + std::to_string(bindings);
    for (const SpecConstant &c : spec)
        key += "," + std::to_string(c.id) + "=" + std::to_string(c.value);
    for (VkFormat f : formats)
        key += ":" + std::to_string(int(f));
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = pipelines_.find(key);
    if (found != pipelines_.end()) return *found->second;

    const VolkDeviceTable &vk = device_.vk();
    auto t0 = std::chrono::steady_clock::now();
    VkShaderModule module = VK_NULL_HANDLE;
    auto m = modules_.find(shader);
    if (m != modules_.end()) {
        module = m->second;
    } else {
        const ShaderCode *code = nullptr;
        for (size_t i = 0; i < kShaderCount; ++i)
            if (std::strcmp(kShaders[i].name, shader) == 0) code = &kShaders[i];
        if (!code) fail(VKLLM_ERR_INTERNAL, "no embedded shader named %s", shader);
        VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        ci.codeSize = code->count * sizeof(uint32_t);
        ci.pCode = code->words;
        check(vk.vkCreateShaderModule(device_.handle(), &ci, nullptr, &module),
              "vkCreateShaderModule");
        modules_[shader] = module;
        written_[shader] = spirv_written_bindings(code->words, code->count);
    }

    auto p = std::make_unique<Pipeline>();
    p->shader = shader;
    p->bindings = bindings;
    p->formats = formats.empty() ? BindingFormats(bindings, VK_FORMAT_UNDEFINED) : formats;
    std::tie(p->set_layout, p->layout) = layouts(p->formats);
    p->written = written_[shader];
    for (uint32_t b = 0; b < bindings && b < 32; ++b)
        if (p->formats[b] != VK_FORMAT_UNDEFINED) p->written &= ~(1u << b);

    std::vector<VkSpecializationMapEntry> entries(spec.size());
    std::vector<uint32_t> values(spec.size());
    for (uint32_t i = 0; i < spec.size(); ++i) {
        entries[i] =
            VkSpecializationMapEntry{spec[i].id, uint32_t(i * sizeof(uint32_t)), sizeof(uint32_t)};
        values[i] = spec[i].value;
    }
    VkSpecializationInfo si{uint32_t(entries.size()), entries.data(),
                            values.size() * sizeof(uint32_t), values.data()};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
    ci.layout = p->layout;
    check(vk.vkCreateComputePipelines(device_.handle(), cache_, 1, &ci, nullptr, &p->pipeline),
          "vkCreateComputePipelines");
    // Pipeline compilation is the slow part of a first run on phones and lavapipe: say where.
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    compile_ms_ += ms;
    device_.log()(VKLLM_LOG_DEBUG, sformat("pipeline %s compiled in %.1f ms", key.c_str(), ms));
    return *(pipelines_[key] = std::move(p));
}

}  // namespace vkllm::gpu
