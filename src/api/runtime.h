// What a vkllm_runtime handle is, for the files of src/api.
#pragma once

#include <memory>
#include <string>

#include "gpu/context.h"

struct vkllm_runtime {
    // Shared: models keep the runtime's device alive until they are gone.
    std::shared_ptr<vkllm::gpu::Context> context;
    std::string pipeline_cache_path;  // the tune file lies beside it
    vkllm::Logger log;
};
