// Row conversions between F32 and the ggml tensor types, on the host: dequantization decodes
// exactly as ggml's dequantize_row_* does (bit for bit), so a CPU reference or a converted
// weight matches what llama.cpp reads from the same bytes; quantization follows ggml's
// reference algorithms closely enough that any ggml reader decodes the blocks the same way.
#pragma once

#include <cstdint>

namespace vkllm::format {

// Whether this build converts rows of ggml type `type_id` to F32 / from F32.
bool can_dequantize(uint32_t type_id);
bool can_quantize(uint32_t type_id);

// n is a multiple of the type's block_elements (format/ggml_types.h); src holds
// n / block_elements * block_bytes bytes. Unaligned pointers allowed.
// Throws VKLLM_ERR_UNSUPPORTED for a type the direction does not handle and
// VKLLM_ERR_INVALID_ARGUMENT for an n that is not a whole number of blocks.
void dequantize_row(uint32_t type_id, const void *src, float *dst, uint64_t n);
void quantize_row(uint32_t type_id, const float *src, void *dst, uint64_t n);

}  // namespace vkllm::format
