#include "format/ggml_types.h"

namespace vkllm::format {

// Every ggml type of the one table of weight types (common/weight_types.def); the layouts the
// GPU regroups blocks into are in no file and not here.
static const GgmlType kTypes[] = {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    {GGML_ID, #NAME, BLOCK_WEIGHTS, BLOCK_BYTES},
#define VKLLM_FILE_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES) \
    {GGML_ID, #NAME, BLOCK_WEIGHTS, BLOCK_BYTES},
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL)
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_FILE_TYPE
#undef VKLLM_GROUPED_TYPE
};

const GgmlType *ggml_type(uint32_t id) {
    for (const GgmlType &t : kTypes)
        if (t.id == id) return &t;
    return nullptr;
}

}  // namespace vkllm::format
