#include "gpu/context.h"

namespace vkllm::gpu {

Context::Context(const ContextParams &params) {
    instance_ = std::make_unique<Instance>(params.validation, params.log, params.vulkan);
    std::vector<DeviceCaps> devices = query_devices(*instance_);
    const DeviceCaps &chosen =
        choose_device(devices, params.device_index,
                      params.device_name.empty() ? nullptr : params.device_name.c_str());
    device_ = std::make_unique<Device>(*instance_, chosen);
    allocator_ = std::make_unique<Allocator>(*device_, params.device_memory_budget);
    pipelines_ = std::make_unique<Pipelines>(*device_, params.pipeline_cache_path);
    transfer_ = std::make_unique<Transfer>(*device_, *allocator_);
    kernels_ = std::make_unique<Kernels>(*device_, *pipelines_, device_class(*device_));
}

Context::~Context() {
    device_->vk().vkDeviceWaitIdle(device_->handle());
    pipelines_->save();
    // Members are destroyed in reverse order: kernels ... device, instance.
}

}  // namespace vkllm::gpu
