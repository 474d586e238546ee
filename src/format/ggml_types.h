// The tensor types of ggml/GGUF: their block shape, so a reader can size any tensor, and
// their names.
#pragma once

#include <cstdint>

namespace vkllm::format {

struct GgmlType {
    uint32_t id;
    const char *name;
    uint32_t block_elements;  // elements per block (1 for plain types)
    uint32_t block_bytes;     // bytes per block
};

// Null for ids ggml never defined or has removed.
const GgmlType *ggml_type(uint32_t id);

}  // namespace vkllm::format
