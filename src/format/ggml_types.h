// The tensor types of ggml/GGUF: their block shape, so a reader can size any tensor, and
// their names (all from the one table of weight types, common/weight_types.def).
#pragma once

#include <cstdint>

namespace vkllm::format {

struct GgmlType {
    uint32_t id;
    const char *name;
    uint32_t block_elements;  // elements per block (1 for plain types)
    uint32_t block_bytes;     // bytes per block
};

// The ggml id of each type, by name: ggml::Q4_K.
namespace ggml {
enum Id : uint32_t {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    NAME = GGML_ID,
#define VKLLM_FILE_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES) NAME = GGML_ID,
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL)
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_FILE_TYPE
#undef VKLLM_GROUPED_TYPE
};
}  // namespace ggml

// Null for ids ggml never defined or has removed.
const GgmlType *ggml_type(uint32_t id);

}  // namespace vkllm::format
