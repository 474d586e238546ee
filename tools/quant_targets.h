// The weight types the tool writes (`vkllm quantize`, `vkllm make-model`), named as
// llama.cpp's llama-quantize names them, and the rule that picks each matrix's type: one
// table so that both commands accept the same names and write the same general.file_type.
#pragma once

#include <cstdint>
#include <string>

#include "format/ggml_types.h"

namespace vkllm_tool {

// The ggml ids (ggml::Q4_K), from the one table of weight types (common/weight_types.def).
namespace ggml = vkllm::format::ggml;

struct Target {
    const char *name;
    uint32_t type;   // the type of most matrices
    uint32_t ftype;  // llama.cpp's LLAMA_FTYPE_MOSTLY_*, stored as general.file_type
    bool mixture;    // the _M rules: more bits where llama.cpp found them to matter
};

// Case-insensitive; nullptr for a name not in the table.
const Target *find_target(const std::string &name);
// The target whose file type is `ftype`, or nullptr.
const Target *find_target_by_ftype(uint32_t ftype);
// "F32 F16 BF16 Q8_0 ...", for usage texts.
std::string target_names();

// The layer of a "blk.N.*" tensor, or -1.
int layer_of(const std::string &name);

struct TypeChoice {
    uint32_t type;
    std::string note;  // why the type differs from the target's, if it does
};

// The type of the weight matrix `name` with rows of `cols` elements, in a model of
// `n_layers` layers that has (or not, when the embedding is tied) an output.weight.
TypeChoice choose_type(const Target &target, const std::string &name, uint64_t cols, int n_layers,
                       bool has_output);

}  // namespace vkllm_tool
