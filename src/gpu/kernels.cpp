#include "gpu/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

namespace vkllm::gpu {

// llvmpipe stops any loop of an invocation after 65,535 iterations in total without telling
// (LAVAPIPE.md); stay well below it, whatever the device.
static const uint64_t kMaxLoopIterations = 60000;

static void check_loops(uint64_t iterations, const char *kernel, uint32_t cols) {
    if (iterations > kMaxLoopIterations)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: rows of %u elements are too long for one workgroup",
             kernel, cols);
}

static void require(const BufferRange &r, uint64_t bytes, const char *kernel, const char *what) {
    if (r.size < bytes)
        fail(VKLLM_ERR_INTERNAL, "%s: %s binding has %llu bytes, needs %llu", kernel, what,
             (unsigned long long)r.size, (unsigned long long)bytes);
}

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

uint64_t kv_row_bytes(KvType type, uint32_t head_dim) {
    switch (type) {
        case KvType::F32:
            return uint64_t(head_dim) * 4;
        case KvType::F16:
            return uint64_t(head_dim) * 2;
        default:
            return uint64_t(head_dim) + 16;
    }
}

std::vector<float> rope_table(uint32_t n_pos, uint32_t rot_dim, double base,
                              const RopeScaling &yarn) {
    uint32_t half = rot_dim / 2;
    std::vector<float> t(size_t(n_pos) * half * 2);
    // YaRN: pairs below `low` keep their angle (extrapolation), above `high` take angle /
    // factor (interpolation), a linear ramp between; the dimension where a pair turns n_rot
    // times over the original context is rot_dim ln(orig_ctx / (2 pi n_rot)) / (2 ln base).
    double low = 0, high = 0, mscale = 1;
    if (yarn.factor > 0) {
        const double pi = 3.14159265358979323846;
        auto corr_dim = [&](double n_rot) {
            return rot_dim * std::log(yarn.orig_ctx / (n_rot * 2 * pi)) / (2 * std::log(base));
        };
        low = std::max(0.0, std::floor(corr_dim(yarn.beta_fast)));
        high = std::min(double(rot_dim - 1), std::ceil(corr_dim(yarn.beta_slow)));
        mscale = yarn.attn_factor;
        if (yarn.ext_factor != 0) mscale *= 1 + 0.1 * std::log(yarn.factor);
    }
    for (uint32_t i = 0; i < half; ++i) {
        double theta = std::pow(base, -2.0 * i / double(rot_dim));
        if (i < yarn.freq_factors.size()) theta /= double(yarn.freq_factors[i]);
        double mix = 1;  // share of the extrapolated angle
        if (yarn.factor > 0) {
            double y = (double(i) - low) / std::max(0.001, high - low);
            mix = (1 - std::min(1.0, std::max(0.0, y))) * yarn.ext_factor;
        }
        for (uint32_t p = 0; p < n_pos; ++p) {
            double extrap = double(p) * theta;
            double a = yarn.factor > 0 ? extrap / yarn.factor * (1 - mix) + extrap * mix : extrap;
            t[(size_t(p) * half + i) * 2] = float(std::cos(a) * mscale);
            t[(size_t(p) * half + i) * 2 + 1] = float(std::sin(a) * mscale);
        }
    }
    return t;
}

DeviceClass device_class(const Device &device) {
    bool cpu = device.caps().is_llvmpipe || device.info().type == VKLLM_DEVICE_CPU;
    return cpu ? DeviceClass::Cpu : DeviceClass::Gpu;
}

Kernels::Kernels(Device &device, Pipelines &pipelines, DeviceClass cls)
    : device_(device), pipelines_(pipelines) {
    bool cpu = cls == DeviceClass::Cpu;
    cpu_class_ = cpu;
    matvec_wg_ = cpu ? 8 : 64;
    matvec_rows_ = cpu ? 16 : 2;
    // A CPU device's workgroup of one subgroup (lavapipe: 8 and 8) adds its lanes' partial sums
    // with subgroupAdd (matvec_subgroup.comp, matvec_texel_subgroup.comp); GPUs, whose subgroup
    // size a driver may choose per pipeline, keep the shared-memory reduction.
    matvec_subgroup_ =
        cpu && device.caps().subgroup_arithmetic && device.info().subgroup_size == matvec_wg_;
    norm_wg_ = cpu ? 8 : 128;
    // Attention: lavapipe runs 8 lanes splitting the keys, each K/V row loaded once for up to
    // 448 / head_dim query heads of its KV head (7 x 64 for Qwen2.5's groups of 7: the state of
    // more heads makes llvmpipe's compile time explode); GPUs 16 lanes, one query head per
    // workgroup. Shared memory stays within Vulkan's minimum of 16 KiB: WG x heads x head_dim
    // floats for the final combination.
    attention_wg_ = cpu ? 8 : 16;  // GPUs: the least; attention() widens it to fit shared memory
    max_group_dims_ = cpu ? 448 : 64;
    // argmax: one workgroup per row of logits (151,936 for Qwen) scans them; GPUs give it as
    // many lanes as they allow, up to 1024 (a power of two: the reduction halves).
    argmax_wg_ = 8;
    if (!cpu)
        while (argmax_wg_ * 2 <= std::min<uint32_t>(1024, device.info().max_workgroup_invocations))
            argmax_wg_ *= 2;
}

std::vector<Kernels::Chunk> Kernels::split_rows(const Matrix &m, uint64_t max_range) const {
    if (m.cols % block_weights(m.type))
        fail(VKLLM_ERR_INTERNAL, "a row of %u weights is not whole blocks of %u", m.cols,
             block_weights(m.type));
    uint64_t total = weight_bytes(m.type, uint64_t(m.rows) * m.cols);
    require(m.data, total, "matrix", "weight");
    if (max_range == 0) max_range = device_.info().max_storage_buffer_range;
    std::vector<Chunk> chunks;
    if (total <= max_range) {
        chunks.push_back(Chunk{0, m.rows, BufferRange{m.data.buffer, m.data.offset, total}});
        return chunks;
    }
    // Chunks start on rows whose byte offset keeps the binding alignment (texel or storage)
    // and, for the grouped types, starts a group.
    uint64_t align =
        std::lcm(device_.caps().storage_offset_align, device_.caps().texel_offset_align);
    uint64_t step = 1;
    while (step <= 4096 && (row_offset(m.type, m.cols, step) == UINT64_MAX ||
                            row_offset(m.type, m.cols, step) % align))
        ++step;
    uint64_t per_row = row_offset(m.type, m.cols, step) / step;
    uint64_t per_chunk = per_row ? (max_range / per_row) / step * step : 0;
    if (step > 4096 || per_chunk == 0)
        fail(VKLLM_ERR_UNSUPPORTED, "a row of %u weights exceeds the device's binding limit",
             m.cols);
    for (uint64_t r = 0; r < m.rows; r += per_chunk) {
        uint64_t n = std::min<uint64_t>(per_chunk, m.rows - r);
        uint64_t bytes = weight_bytes(m.type, n * m.cols);
        chunks.push_back(Chunk{
            uint32_t(r), uint32_t(n),
            BufferRange{m.data.buffer, m.data.offset + row_offset(m.type, m.cols, r), bytes}});
    }
    return chunks;
}

void Kernels::dispatch_1d(Recording &rec, const Pipeline &p,
                          const std::vector<BufferRange> &bindings, const void *push,
                          uint32_t push_bytes, uint64_t groups, uint32_t groups_z) {
    if (groups == 0) return;
    uint64_t max_x = device_.caps().max_groups_x;
    uint64_t gx = std::min(groups, max_x);
    uint64_t gy = (groups + gx - 1) / gx;
    if (gy > 65535)
        fail(VKLLM_ERR_UNSUPPORTED, "a dispatch of %llu workgroups is too large",
             (unsigned long long)groups);
    // Shaders see gx * gy >= groups workgroups and bound-check the excess.
    rec.dispatch(p, bindings, push, push_bytes, uint32_t(gx), uint32_t(gy), groups_z);
}

bool Kernels::texel_matvec(const Matrix &w, const BufferRange &x) const {
    // Q4_K's 144-byte and Q5_K's 176-byte super-blocks are whole texels as stored.
    bool type_ok = w.type == WeightType::F32 || w.type == WeightType::F16 ||
                   w.type == WeightType::BF16 || w.type == WeightType::Q4_K ||
                   w.type == WeightType::Q5_K || grouped(w.type);
    uint64_t align = device_.caps().texel_offset_align;
    return texel_loads_ && type_ok && w.cols % 32 == 0 && x.offset % align == 0 &&
           w.data.offset % align == 0;
}

// The epilogue's specialization constant.
static uint32_t epilogue_bits(const Epilogue &end, const Matrix &w, const char *kernel) {
    if (end.bias.size) require(end.bias, uint64_t(w.rows) * 4, kernel, "bias");
    return (end.bias.size ? 1u : 0u) | (end.accumulate ? 2u : 0u);
}

// The bias binding of a chunk. Without a bias it is bound, never read, to the chunk's own
// weights: a range nothing writes, so synchronization validation sees no hazard in it (the
// output would be one, written by the previous chunk with no barrier between them).
static const BufferRange &bias_binding(const Epilogue &end, const BufferRange &weights) {
    return end.bias.size ? end.bias : weights;
}

void Kernels::matvec(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                     uint32_t n, const Epilogue &end, const InputNorm &norm) {
    matvec(rec, w, nullptr, x, y, n, end, norm);
}

bool Kernels::fusable_swiglu(const Matrix &gate, const Matrix &up, const BufferRange &x) const {
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols &&
           texel_matvec(gate, x) && texel_matvec(up, x);
}

// The row walk of matvec_texel.glsl: x of at most 12 units per lane in registers (rows of up to
// 3072 on lavapipe's 8 lanes), 64 rows per workgroup. 12 rather than 8 took GPT-OSS's 2880-wide
// rows (its 615 MB output head) from the round robin to the walk: 25% less matvec time per
// token; 20 (the 4864-wide down projections of Qwen2.5-0.5B) measured within noise.
static const uint32_t kWalkUnits = 12, kWalkRows = 64;

// lavapipe's prefill: the batched matrix-vector kernel over groups of 8 rows (the tiled matmul
// measured 3-4x slower per token there). Each group's x and y must start where a binding can.
static const uint32_t kRowGroup = 8;

bool Kernels::row_groups_fit(const Matrix &w, uint32_t n) const {
    uint64_t x_step = uint64_t(kRowGroup) * w.cols * 4, y_step = uint64_t(kRowGroup) * w.rows * 4;
    uint64_t align = device_.caps().storage_offset_align;
    return n <= kRowGroup || (cpu_class_ && x_step % align == 0 && y_step % align == 0);
}

bool Kernels::texel_groups(const Matrix &w, const BufferRange &x, uint32_t n) const {
    // Every group of rows must take the texel kernel: its x, too, must start on a texel.
    uint64_t x_step = uint64_t(kRowGroup) * w.cols * 4;
    bool groups = n <= kRowGroup || (cpu_class_ && row_groups_fit(w, n) &&
                                     x_step % device_.caps().texel_offset_align == 0);
    return groups && texel_matvec(w, x);
}

bool Kernels::norm_fusable(const Matrix &w, const BufferRange &x, const BufferRange &weight,
                           uint32_t n) const {
    return texel_groups(w, x, n) && weight.offset % device_.caps().texel_offset_align == 0;
}

bool Kernels::qkv_fusable(const Matrix &w, const BufferRange &x, uint32_t kv_rows,
                          uint32_t n) const {
    if (2 * uint64_t(kv_rows) >= w.rows || !texel_groups(w, x, n)) return false;
    // Groups of 8 rows slice each output on its own.
    uint64_t align = device_.caps().storage_offset_align;
    uint64_t q_step = uint64_t(kRowGroup) * (w.rows - 2 * kv_rows) * 4;
    uint64_t kv_step = uint64_t(kRowGroup) * kv_rows * 4;
    return n <= kRowGroup || (q_step % align == 0 && kv_step % align == 0);
}

void Kernels::linear_qkv(Recording &rec, const Matrix &w, const BufferRange &x,
                         const BufferRange &q, const BufferRange &k, const BufferRange &v,
                         uint32_t kv_rows, uint32_t n, const BufferRange &bias,
                         const InputNorm &norm) {
    if (2 * uint64_t(kv_rows) >= w.rows)
        fail(VKLLM_ERR_INTERNAL, "linear_qkv: %u rows cannot hold K and V of %u rows each", w.rows,
             kv_rows);
    uint32_t q_rows = w.rows - 2 * kv_rows;
    Epilogue end{bias, false};
    if (qkv_fusable(w, x, kv_rows, n)) {
        if (norm.weight.size && !norm_fusable(w, x, norm.weight, n))
            fail(VKLLM_ERR_INTERNAL, "linear_qkv: a norm fused where the kernel cannot apply it");
        StackedOutputs out{k, v, q_rows, kv_rows};
        if (n <= kRowGroup) return matvec(rec, w, nullptr, x, q, n, end, norm, &out);
        return matvec_row_groups(rec, w, nullptr, x, q, n, end, norm, &out);
    }
    const uint32_t rows[3] = {q_rows, kv_rows, kv_rows};
    const BufferRange *ys[3] = {&q, &k, &v};
    for (uint32_t i = 0, row0 = 0; i < 3; row0 += rows[i++]) {
        Matrix part = row_block(w, row0, rows[i]);
        if (!part.data.size)
            fail(VKLLM_ERR_INTERNAL,
                 "linear_qkv: rows from %u of the stacked matrix are not a matrix of their own",
                 row0);
        BufferRange b{};
        if (bias.size)
            b = BufferRange{bias.buffer, bias.offset + uint64_t(row0) * 4, rows[i] * 4ull};
        linear(rec, part, x, *ys[i], n, Epilogue{b, false}, norm);
    }
}

void Kernels::matvec_row_groups(Recording &rec, const Matrix &w, const Matrix *up,
                                const BufferRange &x, const BufferRange &y, uint32_t n,
                                const Epilogue &end, const InputNorm &norm,
                                const StackedOutputs *qkv) {
    uint32_t y_rows = qkv ? qkv->q_rows : w.rows;
    require(x, uint64_t(n) * w.cols * 4, "linear", "x");
    require(y, uint64_t(n) * y_rows * 4, "linear", "y");
    // Rows [r, r + m) of an [n][cols] array.
    auto slice = [](const BufferRange &a, uint32_t r, uint32_t m, uint32_t cols) {
        return BufferRange{a.buffer, a.offset + uint64_t(r) * cols * 4, uint64_t(m) * cols * 4};
    };
    // The groups write disjoint rows: one barrier after the last is enough, so each group's
    // matvec barrier is harmless but the dispatches stay back to back.
    for (uint32_t r = 0; r < n; r += kRowGroup) {
        uint32_t m = std::min(kRowGroup, n - r);
        StackedOutputs out{};
        if (qkv)
            out = StackedOutputs{slice(qkv->k, r, m, qkv->kv_rows),
                                 slice(qkv->v, r, m, qkv->kv_rows), qkv->q_rows, qkv->kv_rows};
        matvec(rec, w, up, slice(x, r, m, w.cols), slice(y, r, m, y_rows), m, end, norm,
               qkv ? &out : nullptr);
    }
}

void Kernels::linear_swiglu(Recording &rec, const Matrix &gate, const Matrix &up,
                            const BufferRange &x, const BufferRange &y, const BufferRange &up_out,
                            uint32_t n, const InputNorm &norm) {
    // Fused only in the texel kernel: every group's x must also start on a texel boundary.
    uint64_t x_step = uint64_t(kRowGroup) * gate.cols * 4;
    if (row_groups_fit(gate, n) && x_step % device_.caps().texel_offset_align == 0 &&
        fusable_swiglu(gate, up, x))
        return matvec_row_groups(rec, gate, &up, x, y, n, Epilogue{}, norm);
    linear(rec, gate, x, y, n, Epilogue{}, norm);
    linear(rec, up, x, up_out, n, Epilogue{}, norm);
    binary(rec, Binary::SwiGLU, y, up_out, y, n * gate.rows, n * gate.rows);
}

void Kernels::matvec(Recording &rec, const Matrix &w, const Matrix *up, const BufferRange &x,
                     const BufferRange &y, uint32_t n, const Epilogue &end, const InputNorm &norm,
                     const StackedOutputs *qkv) {
    require(x, uint64_t(n) * w.cols * 4, "matvec", "x");
    require(y, uint64_t(n) * (qkv ? qkv->q_rows : w.rows) * 4, "matvec", "y");
    if (qkv) {
        require(qkv->k, uint64_t(n) * qkv->kv_rows * 4, "matvec", "k");
        require(qkv->v, uint64_t(n) * qkv->kv_rows * 4, "matvec", "v");
        if (end.accumulate || up || !texel_matvec(w, x))
            fail(VKLLM_ERR_INTERNAL, "matvec: stacked outputs where the texel kernel cannot");
    }
    uint32_t epilogue = epilogue_bits(end, w, "matvec");
    bool normed = norm.weight.size != 0;
    if (normed) require(norm.weight, uint64_t(w.cols) * 4, "matvec", "norm weight");
    if (normed && norm.weight.offset % device_.caps().texel_offset_align)
        fail(VKLLM_ERR_INTERNAL, "matvec: a norm weight that does not start on a texel");
    check_loops(w.cols / matvec_wg_ + 1, "matvec", w.cols);
    if (n > 0) {
        // A workgroup serves up to 4 vectors of the batch, loading each weight once for them.
        uint32_t groups_z = (n + 3) / 4;
        uint32_t nb = (n + groups_z - 1) / groups_z;
        if (groups_z > 65535) fail(VKLLM_ERR_UNSUPPORTED, "matvec: a batch of %u is too large", n);
        bool texel = texel_matvec(w, x);
        uint32_t units = w.cols / 32;
        // One vector of short rows on lavapipe: the texel kernel walks the rows in order.
        bool walk = texel && matvec_subgroup_ && nb == 1 && units <= matvec_wg_ * kWalkUnits;
        uint32_t rows = walk ? kWalkRows : matvec_rows_;
        std::vector<uint32_t> spec{matvec_wg_, rows, uint32_t(w.type), nb, epilogue};
        if (up && !(texel && fusable_swiglu(w, *up, x) && !epilogue))
            fail(VKLLM_ERR_INTERNAL, "matvec: SwiGLU fused where the texel kernel cannot");
        if (texel) {
            // Rows of whole lane rounds plus half a round end with a split round.
            spec.push_back(matvec_wg_ % 2 == 0 && rows % 2 == 0 &&
                           units % matvec_wg_ == matvec_wg_ / 2);
            spec.push_back(up != nullptr);
            spec.push_back(walk ? (units + matvec_wg_ - 1) / matvec_wg_ : 0);
            spec.push_back(normed);
            spec.push_back(qkv != nullptr);
        } else if (normed) {
            fail(VKLLM_ERR_INTERNAL, "matvec: a norm fused where the texel kernel cannot read");
        }
        // Weights, x, y, bias, the SwiGLU up weights, the norm weight, stacked K and V outputs.
        static const BindingFormats kTexelBindings{
            VK_FORMAT_R32G32B32A32_UINT, VK_FORMAT_R32G32B32A32_SFLOAT,
            VK_FORMAT_UNDEFINED,         VK_FORMAT_UNDEFINED,
            VK_FORMAT_R32G32B32A32_UINT, VK_FORMAT_R32G32B32A32_SFLOAT,
            VK_FORMAT_UNDEFINED,         VK_FORMAT_UNDEFINED};
        const Pipeline &p =
            texel ? pipelines_.get(matvec_subgroup_ ? "matvec_texel_subgroup" : "matvec_texel",
                                   uint32_t(kTexelBindings.size()), spec, kTexelBindings)
                  : pipelines_.get(matvec_subgroup_ ? "matvec_subgroup" : "matvec", 4, spec);
        uint64_t max_range = device_.info().max_storage_buffer_range;
        if (texel) max_range = std::min(max_range, device_.info().max_texel_buffer_elements * 16);
        BufferRange xs{x.buffer, x.offset, uint64_t(n) * w.cols * 4};
        std::vector<Chunk> chunks = split_rows(w, max_range);
        // The up projection has the gate's shape and type, so the same row chunks.
        std::vector<Chunk> up_chunks = up ? split_rows(*up, max_range) : chunks;
        for (size_t i = 0; i < chunks.size(); ++i) {
            const Chunk &c = chunks[i];
            struct {
                uint32_t rows, cols, y_offset, n, y_stride;
                float eps;
                uint32_t k_row0, v_row0;  // stacked outputs: where K's and V's rows start
            } push{c.rows, w.cols, c.row0, n, w.rows, norm.eps};
            if (qkv) push.k_row0 = qkv->q_rows, push.v_row0 = qkv->q_rows + qkv->kv_rows;
            std::vector<BufferRange> bindings{c.data, texel ? xs : x, y, bias_binding(end, c.data)};
            if (texel) {
                bindings.push_back(up_chunks[i].data);
                // Without a norm its binding is x again, never read.
                bindings.push_back(normed ? BufferRange{norm.weight.buffer, norm.weight.offset,
                                                        uint64_t(w.cols) * 4}
                                          : xs);
                // Without stacked outputs these are y again, never written.
                bindings.push_back(qkv ? qkv->k : y);
                bindings.push_back(qkv ? qkv->v : y);
            }
            dispatch_1d(rec, p, bindings, &push, sizeof push, (c.rows + rows - 1) / rows, groups_z);
        }
    }
    rec.barrier();
}

void Kernels::linear(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                     uint32_t n, const Epilogue &end, const InputNorm &norm) {
    if (norm.weight.size && !norm_fusable(w, x, norm.weight, n))
        fail(VKLLM_ERR_INTERNAL, "linear: a norm fused where the kernel cannot apply it");
    if (n <= kRowGroup) return matvec(rec, w, x, y, n, end, norm);
    if (!cpu_class_ || !row_groups_fit(w, n)) return matmul(rec, w, x, y, n, end);
    matvec_row_groups(rec, w, nullptr, x, y, n, end, norm);
}

void Kernels::matmul(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                     uint32_t n, const Epilogue &end) {
    require(x, uint64_t(n) * w.cols * 4, "matmul", "x");
    require(y, uint64_t(n) * w.rows * 4, "matmul", "y");
    check_loops(w.cols / 16 + 1, "matmul", w.cols);  // 16-wide K slices
    uint32_t epilogue = epilogue_bits(end, w, "matmul");
    const Pipeline &p = pipelines_.get("matmul", 4, {uint32_t(w.type), epilogue});
    uint32_t tiles_m = (n + 31) / 32;
    if (tiles_m > 65535) fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u rows is too many", n);
    for (const Chunk &c : split_rows(w)) {
        struct {
            uint32_t m, n, k, ldy, y_col0;
        } push{n, c.rows, w.cols, w.rows, c.row0};
        uint32_t tiles_n = (c.rows + 31) / 32;
        if (tiles_n > device_.caps().max_groups_x)
            fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u output rows is too many", c.rows);
        rec.dispatch(p, {c.data, x, y, bias_binding(end, c.data)}, &push, sizeof push, tiles_n,
                     tiles_m);
    }
    rec.barrier();
}

void Kernels::rms_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                       const BufferRange &y, uint32_t rows, uint32_t cols, float eps) {
    require(x, uint64_t(rows) * cols * 4, "rms_norm", "x");
    require(weight, uint64_t(cols) * 4, "rms_norm", "weight");
    require(y, uint64_t(rows) * cols * 4, "rms_norm", "y");
    check_loops(2 * (cols / norm_wg_ + 1), "rms_norm", cols);
    const Pipeline &p = pipelines_.get("rms_norm", 3, {norm_wg_});
    struct {
        uint32_t cols;
        float eps;
    } push{cols, eps};
    dispatch_1d(rec, p, {x, weight, y}, &push, sizeof push, rows);
    rec.barrier();
}

void Kernels::layer_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                         const BufferRange &bias, const BufferRange &y, uint32_t rows,
                         uint32_t cols, float eps) {
    require(x, uint64_t(rows) * cols * 4, "layer_norm", "x");
    require(weight, uint64_t(cols) * 4, "layer_norm", "weight");
    require(bias, uint64_t(cols) * 4, "layer_norm", "bias");
    require(y, uint64_t(rows) * cols * 4, "layer_norm", "y");
    check_loops(3 * (cols / norm_wg_ + 1), "layer_norm", cols);
    const Pipeline &p = pipelines_.get("layer_norm", 4, {norm_wg_});
    struct {
        uint32_t cols;
        float eps;
    } push{cols, eps};
    dispatch_1d(rec, p, {x, weight, bias, y}, &push, sizeof push, rows);
    rec.barrier();
}

void Kernels::softmax(Recording &rec, const BufferRange &x, const BufferRange &y, uint32_t rows,
                      uint32_t cols, float scale) {
    require(x, uint64_t(rows) * cols * 4, "softmax", "x");
    require(y, uint64_t(rows) * cols * 4, "softmax", "y");
    check_loops(3 * (cols / norm_wg_ + 1), "softmax", cols);
    const Pipeline &p = pipelines_.get("softmax", 2, {norm_wg_});
    struct {
        uint32_t cols;
        float scale;
    } push{cols, scale};
    dispatch_1d(rec, p, {x, y}, &push, sizeof push, rows);
    rec.barrier();
}

void Kernels::rope(Recording &rec, RopeLayout layout, const BufferRange &x,
                   const BufferRange &table, const BufferRange &positions, uint32_t n_tokens,
                   uint32_t n_heads, uint32_t head_dim, uint32_t rot_dim, uint32_t n_pos) {
    if (rot_dim % 2 || rot_dim > head_dim || n_pos == 0)
        fail(VKLLM_ERR_INTERNAL, "rope: rot_dim %u with head_dim %u", rot_dim, head_dim);
    require(x, uint64_t(n_tokens) * n_heads * head_dim * 4, "rope", "x");
    require(table, uint64_t(n_pos) * rot_dim * 4, "rope", "table");
    require(positions, uint64_t(n_tokens) * 4, "rope", "positions");
    const Pipeline &p = pipelines_.get("rope", 3, {uint32_t(layout)});
    struct {
        uint32_t n_tokens, n_heads, head_dim, rot_dim, n_pos;
    } push{n_tokens, n_heads, head_dim, rot_dim, n_pos};
    uint64_t n = uint64_t(n_tokens) * n_heads * (rot_dim / 2);
    dispatch_1d(rec, p, {x, table, positions}, &push, sizeof push, (n + 63) / 64);
    rec.barrier();
}

void Kernels::binary(Recording &rec, Binary op, const BufferRange &a, const BufferRange &b,
                     const BufferRange &y, uint32_t n, uint32_t nb) {
    if (nb == 0 || nb > n) fail(VKLLM_ERR_INTERNAL, "binary: broadcast period %u for %u", nb, n);
    require(a, uint64_t(n) * 4, "binary", "a");
    require(b, uint64_t(nb) * 4, "binary", "b");
    require(y, uint64_t(n) * 4, "binary", "y");
    const Pipeline &p = pipelines_.get("eltwise", 3, {uint32_t(op)});
    struct {
        uint32_t n, nb;
    } push{n, nb};
    dispatch_1d(rec, p, {a, b, y}, &push, sizeof push, (uint64_t(n) + 63) / 64);
    rec.barrier();
}

void Kernels::unary(Recording &rec, Unary op, const BufferRange &x, const BufferRange &y,
                    uint32_t n) {
    require(x, uint64_t(n) * 4, "unary", "x");
    require(y, uint64_t(n) * 4, "unary", "y");
    const Pipeline &p = pipelines_.get("eltwise", 3, {uint32_t(op)});
    struct {
        uint32_t n, nb;
    } push{n, n};
    dispatch_1d(rec, p, {x, x, y}, &push, sizeof push, (uint64_t(n) + 63) / 64);
    rec.barrier();
}

void Kernels::get_rows(Recording &rec, const Matrix &table, const BufferRange &ids,
                       const BufferRange &out, uint32_t n_ids) {
    require(ids, uint64_t(n_ids) * 4, "get_rows", "ids");
    require(out, uint64_t(n_ids) * table.cols * 4, "get_rows", "out");
    const Pipeline &p = pipelines_.get("get_rows", 3, {uint32_t(table.type)});
    // An invocation decodes 8 weights of a block-quantized table (rows are whole blocks).
    uint64_t n = uint64_t(n_ids) * table.cols / (block_weights(table.type) > 1 ? 8 : 1);
    for (const Chunk &c : split_rows(table)) {
        struct {
            uint32_t n_ids, cols, row0, rows, total_rows;
        } push{n_ids, table.cols, c.row0, c.rows, table.rows};
        dispatch_1d(rec, p, {c.data, ids, out}, &push, sizeof push, (n + 63) / 64);
    }
    rec.barrier();
}

uint64_t moe_route_words(uint32_t n_tokens, uint32_t k, uint32_t n_expert) {
    return 3 * uint64_t(n_tokens) * k + n_expert + 1;
}

void Kernels::moe_route(Recording &rec, const BufferRange &logits, const BufferRange &route,
                        uint32_t n_tokens, uint32_t n_expert, uint32_t k, Gating gating,
                        bool norm) {
    if (k == 0 || k > 8 || n_expert == 0 || n_expert > 256 || k > n_expert)
        fail(VKLLM_ERR_UNSUPPORTED, "moe: %u of %u experts per token (at most 8 of 256)", k,
             n_expert);
    require(logits, uint64_t(n_tokens) * n_expert * 4, "moe_route", "logits");
    require(route, moe_route_words(n_tokens, k, n_expert) * 4, "moe_route", "route");
    // One workgroup: its lanes scan every entry once per expert they count.
    check_loops(uint64_t(n_tokens) * k * (n_expert / 64 + 1) + uint64_t(k) * k * n_expert,
                "moe_route", n_expert);
    const Pipeline &p = pipelines_.get("moe_route", 2, {uint32_t(gating), 8});
    struct {
        uint32_t n_tokens, n_expert, k, norm;
    } push{n_tokens, n_expert, k, norm};
    if (n_tokens > 0) rec.dispatch(p, {logits, route}, &push, sizeof push, 1, 1);
    rec.barrier();
}

void Kernels::moe_matvec(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                         const BufferRange &y, const BufferRange &route, const BufferRange &bias,
                         uint32_t n_tokens, uint32_t k, bool x_per_entry) {
    moe_matvec(rec, w, nullptr, x, y, route, bias, {}, n_tokens, k, x_per_entry, Binary::Add);
}

bool Kernels::moe_swiglu_fusable(const ExpertMatrix &gate, const ExpertMatrix &up,
                                 const BufferRange &x, const BufferRange &gate_bias,
                                 const BufferRange &up_bias) const {
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols &&
           gate.n_expert == up.n_expert && (gate_bias.size > 0) == (up_bias.size > 0) &&
           texel_matvec(Matrix{gate.data, gate.type, gate.rows, gate.cols}, x) &&
           texel_matvec(Matrix{up.data, up.type, up.rows, up.cols}, x);
}

void Kernels::moe_swiglu(Recording &rec, const ExpertMatrix &gate, const ExpertMatrix &up,
                         const BufferRange &x, const BufferRange &y, const BufferRange &up_out,
                         const BufferRange &route, const BufferRange &gate_bias,
                         const BufferRange &up_bias, uint32_t n_tokens, uint32_t k, Binary act) {
    if (act != Binary::SwiGLU && act != Binary::SwiGLUOai)
        fail(VKLLM_ERR_INTERNAL, "moe_swiglu: operation %u is not a SwiGLU", uint32_t(act));
    if (moe_swiglu_fusable(gate, up, x, gate_bias, up_bias))
        return moe_matvec(rec, gate, &up, x, y, route, gate_bias, up_bias, n_tokens, k, false, act);
    moe_matvec(rec, gate, x, y, route, gate_bias, n_tokens, k, false);
    moe_matvec(rec, up, x, up_out, route, up_bias, n_tokens, k, false);
    uint32_t n = n_tokens * k * gate.rows;
    binary(rec, act, y, up_out, y, n, n);
}

void Kernels::moe_matvec(Recording &rec, const ExpertMatrix &w, const ExpertMatrix *up,
                         const BufferRange &x, const BufferRange &y, const BufferRange &route,
                         const BufferRange &bias, const BufferRange &up_bias, uint32_t n_tokens,
                         uint32_t k, bool x_per_entry, Binary act) {
    if (w.cols % 32)
        fail(VKLLM_ERR_UNSUPPORTED, "moe: expert rows of %u weights are not whole units of 32",
             w.cols);
    uint64_t entries = uint64_t(n_tokens) * k;
    require(x, (x_per_entry ? entries : n_tokens) * w.cols * 4, "moe_matvec", "x");
    require(y, entries * w.rows * 4, "moe_matvec", "y");
    require(route, moe_route_words(n_tokens, k, w.n_expert) * 4, "moe_matvec", "route");
    if (bias.size) require(bias, uint64_t(w.n_expert) * w.rows * 4, "moe_matvec", "bias");
    if (up && up_bias.size)
        require(up_bias, uint64_t(w.n_expert) * w.rows * 4, "moe_matvec", "bias");
    if (up)
        require(up->data, weight_bytes(w.type, uint64_t(w.n_expert) * w.rows * w.cols),
                "moe_matvec", "weight");
    // Per lane: the group's entries NB at a time, each over cols / 32 / WG units.
    // A decode step of one token gives each chosen expert one entry: a workgroup then takes one
    // entry at a time instead of 4 (which would multiply each weight by 4 copies of it).
    uint32_t nb = n_tokens == 1 ? 1 : 4;
    // moe_group.glsl's search over the experts, then the group's entries by units.
    check_loops(w.n_expert + (entries / nb + 1) * (w.cols / 32 / matvec_wg_ + 1), "moe_matvec",
                w.cols);
    require(w.data, weight_bytes(w.type, uint64_t(w.n_expert) * w.rows * w.cols), "moe_matvec",
            "weight");
    // The texel kernel where the weights' layout and both bindings allow it (as matvec's).
    bool texel = texel_matvec(Matrix{w.data, w.type, w.rows, w.cols}, x);
    if (up && !(texel && moe_swiglu_fusable(w, *up, x, bias, up_bias)))
        fail(VKLLM_ERR_INTERNAL, "moe_matvec: SwiGLU fused where the texel kernel cannot");
    // Bind the experts in chunks within the binding limit, each starting on an expert whose
    // first block starts a group (grouped types) at an offset that keeps the binding alignment,
    // so that each workgroup's expert lies whole in its chunk.
    uint64_t max_range = texel ? device_.info().max_texel_buffer_elements * 16
                               : device_.info().max_storage_buffer_range;
    uint64_t align =
        texel ? device_.caps().texel_offset_align : device_.caps().storage_offset_align;
    auto chunk_bytes = [&](uint64_t n) { return weight_bytes(w.type, n * w.rows * w.cols); };
    auto start = [&](uint64_t e) { return row_offset(w.type, w.cols, e * w.rows); };
    uint64_t per_chunk = w.n_expert;
    if (chunk_bytes(w.n_expert) > max_range) {
        uint64_t step = 1;
        while (step < w.n_expert && (start(step) == UINT64_MAX || start(step) % align))
            ++step;
        per_chunk = 0;
        while (per_chunk + step < w.n_expert && chunk_bytes(per_chunk + step) <= max_range)
            per_chunk += step;
    }
    if (per_chunk == 0)
        fail(VKLLM_ERR_UNSUPPORTED,
             "moe: experts of %u x %u weights cannot be bound on this device", w.rows, w.cols);
    const char *name = texel ? (matvec_subgroup_ ? "moe_matvec_texel_subgroup" : "moe_matvec_texel")
                             : "moe_matvec";
    // Weights, x, y, route, bias, the SwiGLU up weights and their bias.
    static const BindingFormats kTexelBindings{
        VK_FORMAT_R32G32B32A32_UINT, VK_FORMAT_R32G32B32A32_SFLOAT, VK_FORMAT_UNDEFINED,
        VK_FORMAT_UNDEFINED,         VK_FORMAT_UNDEFINED,           VK_FORMAT_R32G32B32A32_UINT,
        VK_FORMAT_UNDEFINED};
    // A one-token step on lavapipe walks the rows as matvec does (kWalkUnits).
    bool walk = texel && matvec_subgroup_ && nb == 1 && w.cols / 32 <= matvec_wg_ * kWalkUnits;
    uint32_t rows_per_group = walk ? kWalkRows : matvec_rows_;
    std::vector<uint32_t> spec{matvec_wg_, rows_per_group, uint32_t(w.type), nb,
                               uint32_t(x_per_entry)};
    if (texel) spec.push_back(!up ? 0 : act == Binary::SwiGLU ? 1 : 2);
    if (texel) spec.push_back(walk ? (w.cols / 32 + matvec_wg_ - 1) / matvec_wg_ : 0);
    const Pipeline &p =
        texel ? pipelines_.get(name, uint32_t(kTexelBindings.size()), spec, kTexelBindings)
              : pipelines_.get(name, 5, spec);
    BufferRange xs{x.buffer, x.offset, (x_per_entry ? entries : n_tokens) * w.cols * 4};
    for (uint64_t e0 = 0; e0 < w.n_expert && n_tokens > 0; e0 += per_chunk) {
        uint64_t n_here = std::min<uint64_t>(per_chunk, w.n_expert - e0);
        BufferRange chunk{w.data.buffer, w.data.offset + start(e0), chunk_bytes(n_here)};
        // The up projections have the gate's shape and type, so the same chunks.
        BufferRange up_chunk =
            up ? BufferRange{up->data.buffer, up->data.offset + start(e0), chunk_bytes(n_here)}
               : chunk;
        struct {
            uint32_t rows, cols, k, n_entries, n_expert, e0, n_here, has_bias;
        } push{w.rows,           w.cols,       k, uint32_t(entries), w.n_expert, uint32_t(e0),
               uint32_t(n_here), bias.size > 0};
        // A workgroup per chosen expert at most (moe_group.glsl).
        std::vector<BufferRange> bindings{chunk, texel ? xs : x, y, route, bias.size ? bias : x};
        if (texel) {
            bindings.push_back(up_chunk);
            bindings.push_back(up_bias.size ? up_bias : x);  // without a bias: x, never read
        }
        dispatch_1d(rec, p, bindings, &push, sizeof push,
                    (w.rows + rows_per_group - 1) / rows_per_group,
                    uint32_t(std::min<uint64_t>(n_here, entries)));
    }
    rec.barrier();
}

void Kernels::moe_combine(Recording &rec, const BufferRange &y, const BufferRange &route,
                          const BufferRange &shared, const BufferRange &shared_gate,
                          const BufferRange &out, uint32_t n_tokens, uint32_t n, uint32_t k) {
    require(y, uint64_t(n_tokens) * k * n * 4, "moe_combine", "y");
    require(out, uint64_t(n_tokens) * n * 4, "moe_combine", "out");
    if (shared.size) {
        require(shared, uint64_t(n_tokens) * n * 4, "moe_combine", "shared");
        require(shared_gate, uint64_t(n_tokens) * 4, "moe_combine", "shared_gate");
    }
    const Pipeline &p = pipelines_.get("moe_combine", 5, {});
    struct {
        uint32_t n_tokens, n, k, has_shared;
    } push{n_tokens, n, k, shared.size > 0};
    dispatch_1d(rec, p, {y, route, shared.size ? shared : y, shared.size ? shared_gate : y, out},
                &push, sizeof push, (uint64_t(n_tokens) * n + 63) / 64);
    rec.barrier();
}

static bool supported_head_dim(uint32_t d) {
    return d == 32 || d == 64 || d == 80 || d == 96 || d == 128;
}

uint32_t Kernels::check_attention(const BufferRange &k_cache, const BufferRange &v_cache,
                                  const StepView &step, const AttentionShape &s,
                                  const char *kernel) const {
    if (s.n_heads == 0 || s.n_kv_heads == 0 || s.n_heads % s.n_kv_heads)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: %u query heads cannot share %u KV heads", kernel,
             s.n_heads, s.n_kv_heads);
    // Other head sizes than the fast kernel's take attention_small_head.comp (up to 256).
    if (s.head_dim == 0 || s.head_dim > 256 || (s.n_kv_heads * s.head_dim) % 8)
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: head_dim %u with %u KV heads is not supported (1 to 256, whole rows of 8)",
             kernel, s.head_dim, s.n_kv_heads);
    if (s.capacity <= s.n_sink || s.capacity > uint32_t(INT32_MAX))
        fail(VKLLM_ERR_UNSUPPORTED, "%s: a cache of %u slots with %u sink positions", kernel,
             s.capacity, s.n_sink);
    if (s.kv_type == KvType::Q8_0 && s.head_dim % 32)
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: a Q8_0 KV cache needs head_dim a multiple of 32, the model has %u", kernel,
             s.head_dim);
    uint64_t seq_bytes = uint64_t(s.capacity) * s.n_kv_heads * kv_row_bytes(s.kv_type, s.head_dim);
    uint64_t max_range = device_.info().max_storage_buffer_range;
    for (const BufferRange *c : {&k_cache, &v_cache}) {
        if (c->size > max_range)
            fail(VKLLM_ERR_UNSUPPORTED,
                 "%s: a KV cache binding of %llu bytes exceeds the device's limit of %llu", kernel,
                 (unsigned long long)c->size, (unsigned long long)max_range);
        require(*c, seq_bytes, kernel, c == &k_cache ? "k_cache" : "v_cache");
    }
    require(step.positions, uint64_t(s.n_tokens) * 4, kernel, "positions");
    require(step.seq_ids, uint64_t(s.n_tokens) * 4, kernel, "seq_ids");
    return uint32_t(std::min(k_cache.size, v_cache.size) / seq_bytes);
}

void Kernels::kv_store(Recording &rec, const BufferRange &k, const BufferRange &v,
                       const BufferRange &k_cache, const BufferRange &v_cache, const StepView &step,
                       const AttentionShape &shape, const KvRope &rope) {
    uint32_t n_seq = check_attention(k_cache, v_cache, step, shape, "kv_store");
    uint32_t kv_dim = shape.n_kv_heads * shape.head_dim;
    require(k, uint64_t(shape.n_tokens) * kv_dim * 4, "kv_store", "k");
    require(v, uint64_t(shape.n_tokens) * kv_dim * 4, "kv_store", "v");
    bool roped = rope.rot_dim > 0;
    if (roped) {
        if (rope.rot_dim % 2 || rope.rot_dim > shape.head_dim || rope.n_pos == 0)
            fail(VKLLM_ERR_INTERNAL, "kv_store: rot_dim %u with head_dim %u", rope.rot_dim,
                 shape.head_dim);
        require(rope.table, uint64_t(rope.n_pos) * rope.rot_dim * 4, "kv_store", "table");
    }
    uint32_t q_heads = roped && rope.q.size ? rope.q_heads : 0;
    if (q_heads)
        require(rope.q, uint64_t(shape.n_tokens) * q_heads * shape.head_dim * 4, "kv_store", "q");
    uint32_t rope_spec = !roped ? 0 : rope.layout == RopeLayout::Neox ? 2 : 1;
    const Pipeline &p = pipelines_.get("kv_store", 8, {uint32_t(shape.kv_type), rope_spec});
    struct {
        uint32_t n_tokens, kv_dim, head_dim, capacity, n_sink, n_seq, rot_dim, n_pos, q_heads;
    } push{shape.n_tokens, kv_dim, shape.head_dim,           shape.capacity,
           shape.n_sink,   n_seq,  roped ? rope.rot_dim : 0, roped ? rope.n_pos : 0,
           q_heads};
    // One invocation per 8 values of a token, or per head row when quantizing (its blocks need
    // their absolute maximum, and their scales share words); then one per rotated pair of q.
    uint64_t per_token = shape.kv_type == KvType::Q8_0 ? shape.n_kv_heads : kv_dim / 8;
    uint64_t n = uint64_t(shape.n_tokens) * per_token;
    if (q_heads) n += uint64_t(shape.n_tokens) * q_heads * (rope.rot_dim / 2);
    // Unused bindings are bound to k, never read or written.
    dispatch_1d(rec, p,
                {k, v, k_cache, v_cache, step.positions, step.seq_ids, roped ? rope.table : k,
                 q_heads ? rope.q : k},
                &push, sizeof push, (n + 63) / 64);
    rec.barrier();
}

// attention_tiled.comp's tiles: 16 tokens by 16 keys, 64 lanes.
static const uint32_t kTileTokens = 16, kTileKeys = 16;

bool Kernels::attention_tiled(const AttentionShape &shape) const {
    if (!supported_head_dim(shape.head_dim) || shape.n_tokens == 0) return false;
    if (!attention_tiled_forced_ && (cpu_class_ || !shape.prefill || shape.n_tokens <= 8))
        return false;
    // Shared memory: the tile's queries, keys and values as F32, its scores and bookkeeping.
    uint64_t shared = uint64_t(kTileTokens + 2 * kTileKeys) * shape.head_dim * 4 +
                      kTileTokens * kTileKeys * 4 + kTileKeys * 4 + kTileTokens * 16;
    // A pass per sequence among a workgroup's tokens (at most 16), a tile per 16 keys of it.
    uint64_t loops =
        uint64_t(kTileTokens) * (shape.capacity / kTileKeys + 2) + kTileTokens * kTileTokens + 1024;
    return shared <= device_.info().max_compute_shared_memory && loops <= kMaxLoopIterations &&
           shape.n_heads <= device_.caps().max_groups_x &&
           (shape.n_tokens + kTileTokens - 1) / kTileTokens <= 65535;
}

uint32_t Kernels::attention_splits(const AttentionShape &shape) const {
    if (!supported_head_dim(shape.head_dim) || shape.n_tokens == 0) return 1;
    if (attention_splits_) return attention_splits_;
    // GPUs, decode-sized steps: enough workgroups to fill the device (~256), slices of at
    // least 128 keys, at most 32 slices (the merge reads them all per output).
    const uint32_t kTargetGroups = 256, kMinKeys = 128, kMaxSplits = 32;
    if (cpu_class_ || shape.n_tokens > 8) return 1;
    uint32_t group = shape.n_heads / shape.n_kv_heads;
    uint64_t groups = uint64_t(shape.n_tokens) * shape.n_kv_heads * std::min(group, 8u);
    uint64_t want = (kTargetGroups + groups - 1) / groups;
    uint64_t splits = std::min<uint64_t>({want, shape.capacity / kMinKeys, kMaxSplits});
    return uint32_t(std::max<uint64_t>(splits, 1));
}

uint64_t Kernels::attention_scratch_bytes(const AttentionShape &shape) const {
    uint32_t splits = attention_splits(shape);
    if (splits < 2) return 0;
    return uint64_t(shape.n_tokens) * shape.n_heads * splits * (shape.head_dim / 4 + 1) * 16;
}

void Kernels::attention(Recording &rec, const BufferRange &q, const BufferRange &k_cache,
                        const BufferRange &v_cache, const BufferRange &out, const StepView &step,
                        const AttentionShape &shape, const BufferRange &sinks,
                        const BufferRange &scratch) {
    uint32_t n_seq = check_attention(k_cache, v_cache, step, shape, "attention");
    uint64_t q_bytes = uint64_t(shape.n_tokens) * shape.n_heads * shape.head_dim * 4;
    require(q, q_bytes, "attention", "q");
    require(out, q_bytes, "attention", "out");
    require(step.kv_begin, uint64_t(shape.n_tokens) * 4, "attention", "kv_begin");
    if (sinks.size) require(sinks, uint64_t(shape.n_heads) * 4, "attention", "sinks");
    if (!supported_head_dim(shape.head_dim)) {
        attention_small_head(rec, q, k_cache, v_cache, out, step, shape, sinks);
        return;
    }
    struct {
        uint32_t n_tokens, n_heads, n_kv_heads, capacity, n_sink, n_seq;
        float scale;
        uint32_t window, has_sinks;
    } push{shape.n_tokens, shape.n_heads, shape.n_kv_heads, shape.capacity, shape.n_sink,
           n_seq,          shape.scale,   shape.window,     sinks.size > 0};
    std::vector<BufferRange> bindings{q,
                                      k_cache,
                                      v_cache,
                                      out,
                                      step.positions,
                                      step.seq_ids,
                                      step.kv_begin,
                                      sinks.size ? sinks : q};
    if (attention_tiled(shape)) {
        const Pipeline &p =
            pipelines_.get("attention_tiled", 8, {shape.head_dim, uint32_t(shape.kv_type)});
        rec.dispatch(p, bindings, &push, sizeof push, shape.n_heads,
                     (shape.n_tokens + kTileTokens - 1) / kTileTokens);
        rec.barrier();
        return;
    }
    // Each lane visits at most capacity / WG + 1 keys, one loop iteration each (the loops over
    // heads and head_dim have constant trip counts and are unrolled); the final combination
    // adds a few hundred.
    if (shape.n_tokens > 65535)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: %u tokens in one step is too many", shape.n_tokens);
    // Query heads of one KV head served by one workgroup: as many as the variant allows (at
    // most 8), in blocks of equal size as far as possible (the last block may serve fewer).
    uint32_t group = shape.n_heads / shape.n_kv_heads;
    uint32_t cap = std::max(1u, std::min(8u, max_group_dims_ / shape.head_dim));
    uint32_t blocks = (group + cap - 1) / cap;
    uint32_t g = (group + blocks - 1) / blocks;
    uint32_t wg = attention_wg_;
    if (!cpu_class_) {
        // GPUs: a decode step has only one workgroup per query head, so give each as many lanes
        // as the shared memory of the final combination allows (g x head_dim accumulators and
        // a max and a sum per lane), in whole warps, 16 to 128.
        uint64_t per_lane = uint64_t(g) * (shape.head_dim * 4 + 8);
        uint64_t lanes = device_.info().max_compute_shared_memory / per_lane / 32 * 32;
        wg = uint32_t(std::clamp<uint64_t>(lanes, attention_wg_, 128));
    }
    if (uint64_t(shape.capacity) / wg + 1024 > kMaxLoopIterations)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: a cache of %u slots is too long for the device",
             shape.capacity);
    uint64_t gx = uint64_t(shape.n_kv_heads) * blocks;
    if (gx > device_.caps().max_groups_x)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: %u heads are too many", shape.n_heads);
    uint32_t splits = attention_splits(shape);
    if (splits > 1) require(scratch, attention_scratch_bytes(shape), "attention", "scratch");
    const Pipeline &p =
        pipelines_.get("attention", 9, {wg, shape.head_dim, uint32_t(shape.kv_type), g, splits});
    bindings.push_back(splits > 1 ? scratch : out);
    if (shape.n_tokens > 0)
        rec.dispatch(p, bindings, &push, sizeof push, uint32_t(gx), shape.n_tokens, splits);
    rec.barrier();
    if (splits < 2 || shape.n_tokens == 0) return;
    const Pipeline &merge = pipelines_.get("attention_combine", 3, {shape.head_dim, splits});
    struct {
        uint32_t n, n_heads, has_sinks;
    } mp{shape.n_tokens * shape.n_heads, shape.n_heads, sinks.size > 0};
    dispatch_1d(rec, merge, {scratch, sinks.size ? sinks : q, out}, &mp, sizeof mp,
                uint64_t(shape.n_tokens) * shape.n_heads);
    rec.barrier();
}

// Tiny and odd head sizes (stories260K's 8, a random Llama's 4): a lane per dimension and one
// loop iteration per key, so the cache length is bounded by the loop limit.
void Kernels::attention_small_head(Recording &rec, const BufferRange &q, const BufferRange &k_cache,
                                   const BufferRange &v_cache, const BufferRange &out,
                                   const StepView &step, const AttentionShape &shape,
                                   const BufferRange &sinks) {
    if (uint64_t(shape.capacity) + 64 > kMaxLoopIterations)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: head_dim %u supports caches up to %llu slots",
             shape.head_dim, (unsigned long long)(kMaxLoopIterations - 64));
    if (shape.n_tokens > 65535 || shape.n_heads > device_.caps().max_groups_x)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: %u tokens of %u heads is too many", shape.n_tokens,
             shape.n_heads);
    uint32_t wg = 8;
    while (wg < shape.head_dim)
        wg *= 2;
    const Pipeline &p = pipelines_.get("attention_small_head", 8, {wg, uint32_t(shape.kv_type)});
    struct {
        uint32_t n_tokens, n_heads, n_kv_heads, head_dim, capacity, n_sink;
        float scale;
        uint32_t window, has_sinks;
    } push{shape.n_tokens, shape.n_heads, shape.n_kv_heads, shape.head_dim, shape.capacity,
           shape.n_sink,   shape.scale,   shape.window,     sinks.size > 0};
    if (shape.n_tokens > 0)
        rec.dispatch(p,
                     {q, k_cache, v_cache, out, step.positions, step.seq_ids, step.kv_begin,
                      sinks.size ? sinks : q},
                     &push, sizeof push, shape.n_heads, shape.n_tokens);
    rec.barrier();
}

void Kernels::argmax(Recording &rec, const BufferRange &x, const BufferRange &ids, uint32_t rows,
                     uint32_t cols, uint32_t n) {
    if (n == 0 || n > cols)
        fail(VKLLM_ERR_INTERNAL, "argmax: %u candidates in rows of %u elements", n, cols);
    require(x, uint64_t(rows) * cols * 4, "argmax", "x");
    require(ids, uint64_t(rows) * 4, "argmax", "ids");
    check_loops(n / (4 * argmax_wg_) + 1, "argmax", n);  // 4 elements per iteration
    const Pipeline &p = pipelines_.get("argmax", 2, {argmax_wg_});
    // Rows of many logits (prefill) may not fit one binding: bound in row chunks.
    for (const Chunk &c : split_rows(Matrix{x, WeightType::F32, rows, cols})) {
        struct {
            uint32_t rows, cols, row0, n;
        } push{c.rows, cols, c.row0, n};
        dispatch_1d(rec, p, {c.data, ids}, &push, sizeof push, c.rows);
    }
    rec.barrier();
}

void Kernels::chain_advance(Recording &rec, const BufferRange &ids, const BufferRange &tokens,
                            const StepView &step_view, const BufferRange &out, uint32_t n,
                            uint32_t step, uint32_t window, uint32_t n_sink) {
    require(ids, uint64_t(n) * 4, "chain_advance", "ids");
    require(tokens, uint64_t(n) * 4, "chain_advance", "tokens");
    require(step_view.positions, uint64_t(n) * 4, "chain_advance", "positions");
    require(step_view.kv_begin, uint64_t(n) * 4, "chain_advance", "kv_begin");
    require(out, (uint64_t(step) + 1) * n * 4, "chain_advance", "out");
    const Pipeline &p = pipelines_.get("chain_advance", 5, {});
    struct {
        uint32_t n, step, window, n_sink;
    } push{n, step, window, n_sink};
    dispatch_1d(rec, p, {ids, tokens, step_view.positions, step_view.kv_begin, out}, &push,
                sizeof push, (n + 63) / 64);
    rec.barrier();
}

}  // namespace vkllm::gpu
