#include "gpu/kernels/weight_layout.h"

#include <cstring>

#include "common/error.h"

namespace vkllm::gpu {

namespace {
struct TypeInfo {
    WeightType type;
    uint32_t ggml_id;
    uint32_t block_weights;
    uint32_t block_bytes;
};
// Indexed by WeightType.
const TypeInfo kTypes[] = {
    {WeightType::F32, 0, 1, 4},
    {WeightType::F16, 1, 1, 2},
    {WeightType::BF16, 30, 1, 2},
    {WeightType::Q8_0, 8, 32, 34},
    {WeightType::Q4_0, 2, 32, 18},
    {WeightType::Q4_1, 3, 32, 20},
    {WeightType::Q5_0, 6, 32, 22},
    {WeightType::Q5_1, 7, 32, 24},
    {WeightType::Q4_K, 12, 256, 144},
    {WeightType::Q5_K, 13, 256, 176},
    {WeightType::Q6_K, 14, 256, 210},
    {WeightType::MXFP4, 39, 32, 17},
    // Regrouped at load, never in a file: bytes per block on average.
    {WeightType::Q8_0_G8, UINT32_MAX, 32, 34},
    {WeightType::Q4_0_G8, UINT32_MAX, 32, 18},
    {WeightType::Q5_0_G8, UINT32_MAX, 32, 22},
    {WeightType::Q6_K_G8, UINT32_MAX, 256, 210},
    {WeightType::Q4_1_G8, UINT32_MAX, 32, 20},
    {WeightType::Q5_1_G8, UINT32_MAX, 32, 24},
    {WeightType::MXFP4_G16, UINT32_MAX, 32, 17},
};

bool grouped(WeightType t) {
    return t == WeightType::Q8_0_G8 || t == WeightType::Q4_0_G8 || t == WeightType::Q5_0_G8 ||
           t == WeightType::Q6_K_G8 || t == WeightType::Q4_1_G8 || t == WeightType::Q5_1_G8 ||
           t == WeightType::MXFP4_G16;
}

// Blocks per group of a grouped type.
uint64_t group_size(WeightType t) {
    return t == WeightType::MXFP4_G16 ? 16 : 8;
}
}  // namespace

bool weight_type_from_ggml(uint32_t ggml_id, WeightType *type) {
    for (const TypeInfo &t : kTypes) {
        if (t.ggml_id == ggml_id) {
            *type = t.type;
            return true;
        }
    }
    return false;
}

uint32_t block_weights(WeightType type) {
    return kTypes[uint32_t(type)].block_weights;
}
uint32_t block_bytes(WeightType type) {
    return kTypes[uint32_t(type)].block_bytes;
}

// Bytes of `count` weights as stored (whole blocks; whole groups for the grouped types).
static uint64_t stored_bytes(WeightType type, uint64_t count) {
    uint64_t blocks = count / block_weights(type);
    uint64_t g = group_size(type);
    if (grouped(type)) return (blocks + g - 1) / g * g * block_bytes(type);
    return blocks * block_bytes(type);
}

uint64_t row_offset(WeightType type, uint32_t cols, uint64_t row) {
    uint64_t blocks = row * (cols / block_weights(type));
    if (grouped(type) && blocks % group_size(type)) return UINT64_MAX;
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

WeightType grouped_form(WeightType type) {
    if (type == WeightType::Q8_0) return WeightType::Q8_0_G8;
    if (type == WeightType::Q4_0) return WeightType::Q4_0_G8;
    if (type == WeightType::Q5_0) return WeightType::Q5_0_G8;
    if (type == WeightType::Q6_K) return WeightType::Q6_K_G8;
    if (type == WeightType::Q4_1) return WeightType::Q4_1_G8;
    if (type == WeightType::Q5_1) return WeightType::Q5_1_G8;
    if (type == WeightType::MXFP4) return WeightType::MXFP4_G16;
    return type;
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

bool is_grouped(WeightType type) {
    return grouped(type);
}

}  // namespace vkllm::gpu
