// Facts of the weight types (from the one table, common/weight_types.def) and the layout of
// matrices in memory: block sizes, the grouped layouts the loader regroups blocks into, row
// offsets, and matrices made of others' rows. Free of Vulkan, like gpu/tensor.h.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gpu/tensor.h"

namespace vkllm::gpu {

// The grouped layout the loader stores `type` in (itself when it has none).
WeightType grouped_form(WeightType type);
// Whether `type` is one of the grouped layouts (Q8_0_G8 ... MXFP4_G16).
bool is_grouped(WeightType type);
// Whether the texel matrix-vector kernels read `type` (as stored: F32, F16, BF16, Q4_K, Q5_K
// and the grouped layouts).
bool texel_readable(WeightType type);
// `count` blocks of Q8_0, Q4_0, Q5_0, Q6_K, Q4_1, Q5_1 or MXFP4 (GGUF's layout) in the grouped
// layout of grouped_form(): weight_bytes(grouped, count * block_weights(type)) bytes.
std::vector<uint8_t> group_blocks(WeightType type, const uint8_t *blocks, uint64_t count);

// The WeightType of GGUF tensor type `ggml_id`; false when the kernels cannot read it.
bool weight_type_from_ggml(uint32_t ggml_id, WeightType *type);
// The table's name of `type` ("Q8_0_G8", "F16", "Q4_K"): what files that outlive a build store,
// since the values may be renumbered. weight_type_from_name is its inverse; false for a name
// not in the table.
const char *weight_type_name(WeightType type);
bool weight_type_from_name(std::string_view name, WeightType *type);
// Weights per block (1 for F32/F16/BF16) and bytes per block.
uint32_t block_weights(WeightType type);
uint32_t block_bytes(WeightType type);

// Bytes a binding of `count` weights (whole blocks) must cover: the data rounded up to whole
// words (whole groups for the grouped types).
uint64_t weight_bytes(WeightType type, uint64_t count);
// Byte offset of the first weight of row `row` of a matrix with rows of `cols` weights, or
// UINT64_MAX when a grouped type's row starts inside a group (no binding can start there).
uint64_t row_offset(WeightType type, uint32_t cols, uint64_t row);

// The matrix whose rows are those of `parts` in order (Q, K and V), where they have one type
// and width and their data lie back to back as one binding reads such a matrix; an empty
// matrix (no data) otherwise. No data moves: the parts stay valid on their own.
Matrix stack_rows(const std::vector<Matrix> &parts);
// Rows [row0, row0 + rows) of m as a matrix of their own, where row_offset() allows it (a part
// of stack_rows() always does); an empty matrix otherwise.
Matrix row_block(const Matrix &m, uint32_t row0, uint32_t rows);
// The range covering `parts` where each starts where the one before ends; empty otherwise.
BufferRange stack_ranges(const std::vector<BufferRange> &parts);

}  // namespace vkllm::gpu
