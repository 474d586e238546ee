#include "gpu/kernels/weight_layout.h"

#include <cstring>

#include "common/error.h"

namespace vkllm::gpu {

// Each fact from common/weight_types.def; a switch over every WeightType, so that the compiler
// (-Wswitch) names a type the table gained and a function here missed.
#define VKLLM_FILE_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES)

bool weight_type_from_ggml(uint32_t ggml_id, WeightType *type) {
    switch (ggml_id) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case GGML_ID:                                                                           \
        *type = WeightType::NAME;                                                           \
        return true;
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL)
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
        default:
            return false;
    }
}

const char *weight_type_name(WeightType type) {
    switch (type) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case WeightType::NAME:                                                                  \
        return #NAME;
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) \
    case WeightType::NAME:                                         \
        return #NAME;
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
    }
    fail(VKLLM_ERR_INTERNAL, "weight type %u is not in the table", unsigned(type));
}

bool weight_type_from_name(std::string_view name, WeightType *type) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    if (name == #NAME) {                                                                    \
        *type = WeightType::NAME;                                                           \
        return true;                                                                        \
    }
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) \
    if (name == #NAME) {                                           \
        *type = WeightType::NAME;                                  \
        return true;                                               \
    }
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
    return false;
}

uint32_t block_weights(WeightType type) {
    switch (type) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case WeightType::NAME:                                                                  \
        return BLOCK_WEIGHTS;
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) \
    case WeightType::NAME:                                         \
        return block_weights(WeightType::FROM);
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
    }
    fail(VKLLM_ERR_INTERNAL, "weight type %u is not in the table", unsigned(type));
}

// Bytes per block; for the grouped types, per block on average (their blocks' own size).
uint32_t block_bytes(WeightType type) {
    switch (type) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case WeightType::NAME:                                                                  \
        return BLOCK_BYTES;
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) \
    case WeightType::NAME:                                         \
        return block_bytes(WeightType::FROM);
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
    }
    fail(VKLLM_ERR_INTERNAL, "weight type %u is not in the table", unsigned(type));
}

WeightType grouped_form(WeightType type) {
    switch (type) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case WeightType::NAME:                                                                  \
        return WeightType::GROUPED;
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) \
    case WeightType::NAME:                                         \
        return WeightType::NAME;
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
    }
    return type;
}

// Blocks per group of a grouped type (0: not a grouped type).
static uint32_t group_size(WeightType type) {
    switch (type) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case WeightType::NAME:                                                                  \
        return 0;
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) \
    case WeightType::NAME:                                         \
        return GROUP_BLOCKS;
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
    }
    return 0;
}

bool is_grouped(WeightType type) {
    return group_size(type) != 0;
}

bool texel_readable(WeightType type) {
    switch (type) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case WeightType::NAME:                                                                  \
        return TEXEL;
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) \
    case WeightType::NAME:                                         \
        return TEXEL;
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
    }
    return false;
}

#undef VKLLM_FILE_TYPE

// Bytes of `count` weights as stored (whole blocks; whole groups for the grouped types).
static uint64_t stored_bytes(WeightType type, uint64_t count) {
    uint64_t blocks = count / block_weights(type);
    uint64_t g = group_size(type);
    if (is_grouped(type)) return (blocks + g - 1) / g * g * block_bytes(type);
    return blocks * block_bytes(type);
}

uint64_t row_offset(WeightType type, uint32_t cols, uint64_t row) {
    uint64_t blocks = row * (cols / block_weights(type));
    if (is_grouped(type) && blocks % group_size(type)) return UINT64_MAX;
    return blocks * block_bytes(type);
}

Matrix stack_rows(const std::vector<Matrix> &parts) {
    if (parts.empty()) return {};
    Matrix all = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) {
        const Matrix &m = parts[i];
        uint64_t at = row_offset(all.type, all.cols, all.rows);
        if (m.type != all.type || m.cols != all.cols || m.data.buffer != all.data.buffer ||
            at == UINT64_MAX || all.data.offset + at != m.data.offset)
            return {};
        all.rows += m.rows;
        all.data.size = at + m.data.size;
    }
    return all;
}

Matrix row_block(const Matrix &m, uint32_t row0, uint32_t rows) {
    uint64_t at = row_offset(m.type, m.cols, row0);
    uint64_t bytes = weight_bytes(m.type, uint64_t(rows) * m.cols);
    if (at == UINT64_MAX || uint64_t(row0) + rows > m.rows || at + bytes > m.data.size) return {};
    return Matrix{BufferRange{m.data.buffer, m.data.offset + at, bytes}, m.type, rows, m.cols};
}

BufferRange stack_ranges(const std::vector<BufferRange> &parts) {
    if (parts.empty()) return {};
    BufferRange all = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) {
        if (parts[i].buffer != all.buffer || all.offset + all.size != parts[i].offset) return {};
        all.size += parts[i].size;
    }
    return all;
}

std::vector<uint8_t> group_blocks(WeightType type, const uint8_t *blocks, uint64_t count) {
    WeightType g = grouped_form(type);
    if (g == type) fail(VKLLM_ERR_INTERNAL, "no grouped layout for weight type %u", unsigned(type));
    // Where the F16 scale (Q4_1, Q5_1: scale and min; MXFP4: the exponent byte) is, and the
    // fields besides it (offset, bytes): Q5_0's and Q5_1's 4 bytes of 5th bits then their
    // quants, Q6_K's first 208 bytes, the others' quants.
    struct Field {
        uint64_t from, bytes;
    };
    const uint64_t in_bytes = block_bytes(type), size = group_size(g),
                   group_bytes = size * in_bytes;
    const bool with_min = type == WeightType::Q4_1 || type == WeightType::Q5_1;
    const uint64_t scale_at = type == WeightType::Q6_K ? 208 : 0;
    const uint64_t scale_bytes = with_min ? 4 : type == WeightType::MXFP4 ? 1 : 2;
    const std::vector<Field> fields =
        type == WeightType::Q5_0   ? std::vector<Field>{{2, 4}, {6, 16}}
        : type == WeightType::Q5_1 ? std::vector<Field>{{4, 4}, {8, 16}}
        : type == WeightType::Q6_K ? std::vector<Field>{{0, 208}}
                                   : std::vector<Field>{{scale_bytes, in_bytes - scale_bytes}};
    std::vector<uint8_t> out(stored_bytes(g, count * block_weights(type)), 0);
    for (uint64_t u = 0; u < count; ++u) {
        uint8_t *group = out.data() + u / size * group_bytes;
        uint64_t slot = u % size;
        const uint8_t *b = blocks + u * in_bytes;
        std::memcpy(group + scale_bytes * slot, b + scale_at, scale_bytes);
        uint64_t at = scale_bytes * size;
        for (const Field &f : fields) {
            std::memcpy(group + at + slot * f.bytes, b + f.from, f.bytes);
            at += size * f.bytes;
        }
        // MXFP4's code 8 (-0) becomes 0 (+0), the same value: texel_weights.glsl's decode of a
        // negative code as (m ^ 0xff) + 1 would carry out of a byte holding -0.
        if (type == WeightType::MXFP4)
            for (uint8_t *q = group + size + slot * 16, *end = q + 16; q < end; ++q) {
                if ((*q & 0x0f) == 0x08) *q &= 0xf0;
                if ((*q & 0xf0) == 0x80) *q &= 0x0f;
            }
    }
    return out;
}

uint64_t weight_bytes(WeightType type, uint64_t count) {
    return (stored_bytes(type, count) + 3) / 4 * 4;
}
}  // namespace vkllm::gpu
