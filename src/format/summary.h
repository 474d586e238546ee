// The headline facts of a model file, read from its GGUF metadata and tensor table.
#pragma once

#include "format/gguf.h"
#include "vkllm.h"

namespace vkllm::format {

vkllm_model_summary summarize(const GgufFile &file);

}  // namespace vkllm::format
