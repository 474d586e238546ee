// What a vkllm_runtime handle is, for the files of src/api.
#pragma once

#include <memory>

#include "gpu/context.h"

struct vkllm_runtime {
    std::unique_ptr<vkllm::gpu::Context> context;
};
