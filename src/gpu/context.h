// Everything the library needs from one Vulkan device, built in dependency order: instance,
// device, memory, pipelines, transfers, kernels. This is what a vkllm_runtime holds.
#pragma once

#include <memory>
#include <string>

#include "gpu/kernels.h"
#include "gpu/transfer.h"

namespace vkllm::gpu {

struct ContextParams {
    int32_t device_index = -1;
    std::string device_name;
    bool validation = false;
    std::string pipeline_cache_path;
    uint64_t device_memory_budget = 0;  // 0: no limit but the device's
    VulkanOptions vulkan;               // a version cap and masked features (tests)
    Logger log;
};

class Context {
  public:
    explicit Context(const ContextParams &params);
    ~Context();  // waits for the device, saves the pipeline cache

    Instance &instance() { return *instance_; }
    Device &device() { return *device_; }
    Allocator &allocator() { return *allocator_; }
    Pipelines &pipelines() { return *pipelines_; }
    Transfer &transfer() { return *transfer_; }
    Kernels &kernels() { return *kernels_; }

  private:
    std::unique_ptr<Instance> instance_;
    std::unique_ptr<Device> device_;
    std::unique_ptr<Allocator> allocator_;
    std::unique_ptr<Pipelines> pipelines_;
    std::unique_ptr<Transfer> transfer_;
    std::unique_ptr<Kernels> kernels_;
};

}  // namespace vkllm::gpu
