#include "gpu/kernels/linear.h"

#include <algorithm>
#include <cstdint>

#include "gpu/kernels/weight_layout.h"
#include "linear/matmul.h"
#include "linear/matmul_coopmat.h"
#include "linear/matvec.h"
#include "linear/matvec_texel.h"
#include "shader_names.h"

namespace vkllm::gpu {

bool LinearKernels::texel_matvec(const Matrix &w, const BufferRange &x) const {
    uint64_t align = env_.device.caps().texel_offset_align;
    return env_.texel_loads && texel_readable(w.type) && w.cols % 32 == 0 &&
           x.offset % align == 0 && w.data.offset % align == 0;
}

// The epilogue's specialization constant.
static uint32_t epilogue_bits(const Epilogue &end, const Matrix &w, const char *kernel) {
    if (end.bias.size) require(end.bias, uint64_t(w.rows) * 4, kernel, "bias");
    return (end.bias.size ? shaders::EPILOGUE_BIAS : 0u) |
           (end.accumulate ? shaders::EPILOGUE_ACCUMULATE : 0u) |
           (end.scale != 1.0f ? shaders::EPILOGUE_SCALE : 0u);
}

// The bias binding of a chunk. Without a bias it is bound, never read, to the chunk's own
// weights: a range nothing writes, so synchronization validation sees no hazard in it (the
// output would be one, written by the previous chunk with no barrier between them).
static const BufferRange &bias_binding(const Epilogue &end, const BufferRange &weights) {
    return end.bias.size ? end.bias : weights;
}

void LinearKernels::matvec(Recording &rec, const Matrix &w, const BufferRange &x,
                           const BufferRange &y, uint32_t n, const Epilogue &end,
                           const InputNorm &norm) {
    matvec(rec, w, nullptr, x, y, n, end, norm);
}

bool LinearKernels::fusable_swiglu(const Matrix &gate, const Matrix &up,
                                   const BufferRange &x) const {
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols &&
           texel_matvec(gate, x) && texel_matvec(up, x);
}

// lavapipe's prefill without cooperative matrices: the batched matrix-vector kernel over groups
// of 8 rows (the tiled matmul measured 3-4x slower per token there). Each group's x and y must
// start where a binding can.
static const uint32_t kRowGroup = 8;

bool LinearKernels::row_groups_fit(const Matrix &w, uint32_t n) const {
    uint64_t x_step = uint64_t(kRowGroup) * w.cols * 4, y_step = uint64_t(kRowGroup) * w.rows * 4;
    uint64_t align = env_.device.caps().storage_offset_align;
    return n <= kRowGroup ||
           (env_.cpu_class && !env_.coopmat && x_step % align == 0 && y_step % align == 0);
}

bool LinearKernels::texel_groups(const Matrix &w, const BufferRange &x, uint32_t n) const {
    // Every group of rows must take the texel kernel: its x, too, must start on a texel.
    uint64_t x_step = uint64_t(kRowGroup) * w.cols * 4;
    bool groups = n <= kRowGroup ||
                  (row_groups_fit(w, n) && x_step % env_.device.caps().texel_offset_align == 0);
    return groups && texel_matvec(w, x);
}

bool LinearKernels::norm_fusable(const Matrix &w, const BufferRange &x, const BufferRange &weight,
                                 uint32_t n) const {
    return texel_groups(w, x, n) && weight.offset % env_.device.caps().texel_offset_align == 0;
}

bool LinearKernels::qkv_fusable(const Matrix &w, const BufferRange &x, uint32_t kv_rows,
                                uint32_t n) const {
    if (2 * uint64_t(kv_rows) >= w.rows || !texel_groups(w, x, n)) return false;
    // Groups of 8 rows slice each output on its own.
    uint64_t align = env_.device.caps().storage_offset_align;
    uint64_t q_step = uint64_t(kRowGroup) * (w.rows - 2 * kv_rows) * 4;
    uint64_t kv_step = uint64_t(kRowGroup) * kv_rows * 4;
    return n <= kRowGroup || (q_step % align == 0 && kv_step % align == 0);
}

void LinearKernels::linear_qkv(Recording &rec, const Matrix &w, const BufferRange &x,
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

uint64_t LinearKernels::qkv_arrivals_bytes(uint32_t n_heads, uint32_t n_kv_heads) {
    return uint64_t(kRowGroup) * (uint64_t(n_heads) + 2ull * n_kv_heads) * 4;
}

uint64_t LinearKernels::matvec_max_range(bool texel) const {
    uint64_t max_range = env_.device.info().max_storage_buffer_range;
    if (texel) max_range = std::min(max_range, env_.device.info().max_texel_buffer_elements * 16);
    return max_range;
}

bool LinearKernels::qkv_store_fusable(const Matrix &w, const BufferRange &x, uint32_t n,
                                      const AttentionShape &s) const {
    uint64_t kv_rows = uint64_t(s.n_kv_heads) * s.head_dim;
    uint64_t heads = uint64_t(s.n_heads) + 2ull * s.n_kv_heads;
    // Heads of whole 8-value units (kv_store's), whole Q8_0 blocks, in one dispatch, on a
    // device that binds its storage buffers.
    uint32_t storage_buffers = 0;
    for (const Binding &b : binding_list(shaders::MatvecTexelKvBindings{}))
        storage_buffers += b.format == VK_FORMAT_UNDEFINED;
    return env_.device.caps().max_storage_buffers >= storage_buffers && n >= 1 && n <= kRowGroup &&
           s.head_dim % 8 == 0 && (s.kv_type != KvType::Q8_0 || s.head_dim % 32 == 0) &&
           heads * s.head_dim == w.rows && qkv_fusable(w, x, uint32_t(kv_rows), n) &&
           env_.split_rows(w, matvec_max_range(true)).size() == 1;
}

void LinearKernels::linear_qkv_store(Recording &rec, const Matrix &w, const BufferRange &x,
                                     const BufferRange &q, const BufferRange &k,
                                     const BufferRange &v, uint32_t n, const BufferRange &bias,
                                     const InputNorm &norm, const KvStoreTarget &store) {
    const AttentionShape &s = store.shape;
    if (s.n_tokens != n || !qkv_store_fusable(w, x, n, s))
        fail(VKLLM_ERR_INTERNAL,
             "linear_qkv_store: %u rows of a %u x %u matrix cannot store heads "
             "of %u in the projection's dispatch",
             n, w.rows, w.cols, s.head_dim);
    uint32_t n_seq =
        attention_.check_attention(store.k_cache, store.v_cache, store.step, s, "linear_qkv_store");
    const KvRope &rope = store.rope;
    if (rope.rot_dim) {
        if (rope.rot_dim % 2 || rope.rot_dim > s.head_dim || rope.n_pos == 0)
            fail(VKLLM_ERR_INTERNAL, "linear_qkv_store: rot_dim %u with head_dim %u", rope.rot_dim,
                 s.head_dim);
        require(rope.table, uint64_t(rope.n_pos) * rope.rot_dim * 4, "linear_qkv_store", "table");
    }
    require(store.arrivals, qkv_arrivals_bytes(s.n_heads, s.n_kv_heads), "linear_qkv_store",
            "arrivals");
    if (norm.weight.size && !norm_fusable(w, x, norm.weight, n))
        fail(VKLLM_ERR_INTERNAL, "linear_qkv_store: a norm fused where the kernel cannot apply it");
    uint32_t kv_rows = s.n_kv_heads * s.head_dim;
    StackedOutputs out{k, v, w.rows - 2 * kv_rows, kv_rows, &store, n_seq};
    matvec(rec, w, nullptr, x, q, n, Epilogue{bias, false}, norm, &out);
}

void LinearKernels::matvec_row_groups(Recording &rec, const Matrix &w, const Matrix *up,
                                      const BufferRange &x, const BufferRange &y, uint32_t n,
                                      const Epilogue &end, const InputNorm &norm,
                                      const StackedOutputs *qkv, Binary glu) {
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
               qkv ? &out : nullptr, glu);
    }
}

void LinearKernels::linear_swiglu(Recording &rec, const Matrix &gate, const Matrix &up,
                                  const BufferRange &x, const BufferRange &y,
                                  const BufferRange &up_out, uint32_t n, const InputNorm &norm,
                                  Binary glu) {
    if (glu != Binary::SwiGLU && glu != Binary::GeGLU)
        fail(VKLLM_ERR_INTERNAL, "linear_swiglu: %u is not a gated unit", uint32_t(glu));
    // Fused only in the texel kernel: every group's x must also start on a texel boundary.
    uint64_t x_step = uint64_t(kRowGroup) * gate.cols * 4;
    if (row_groups_fit(gate, n) && x_step % env_.device.caps().texel_offset_align == 0 &&
        fusable_swiglu(gate, up, x))
        return matvec_row_groups(rec, gate, &up, x, y, n, Epilogue{}, norm, nullptr, glu);
    linear(rec, gate, x, y, n, Epilogue{}, norm);
    linear(rec, up, x, up_out, n, Epilogue{}, norm);
    eltwise_.binary(rec, glu, y, up_out, y, n * gate.rows, n * gate.rows);
}

void LinearKernels::matvec_variant(Recording &rec, const Matrix &w, const BufferRange &x,
                                   const BufferRange &y, const MatvecVariant &v, bool texel) {
    if (!env_.supports(v))
        fail(VKLLM_ERR_INTERNAL, "matvec: a variant of %u lanes and %u rows the device cannot run",
             v.wg, v.rows);
    matvec(rec, w, nullptr, x, y, 1, Epilogue{}, InputNorm{}, nullptr, Binary::SwiGLU, &v, texel);
}

void LinearKernels::matvec(Recording &rec, const Matrix &w, const Matrix *up, const BufferRange &x,
                           const BufferRange &y, uint32_t n, const Epilogue &end,
                           const InputNorm &norm, const StackedOutputs *qkv, Binary glu,
                           const MatvecVariant *forced, bool texel_allowed) {
    require(x, uint64_t(n) * w.cols * 4, "matvec", "x");
    require(y, uint64_t(n) * (qkv ? qkv->q_rows : w.rows) * 4, "matvec", "y");
    if (qkv) {
        require(qkv->k, uint64_t(n) * qkv->kv_rows * 4, "matvec", "k");
        require(qkv->v, uint64_t(n) * qkv->kv_rows * 4, "matvec", "v");
        if (end.accumulate || end.scale != 1.0f || up || !texel_matvec(w, x))
            fail(VKLLM_ERR_INTERNAL, "matvec: stacked outputs where the texel kernel cannot");
    }
    const KvStoreTarget *store = qkv ? qkv->store : nullptr;
    uint32_t epilogue = epilogue_bits(end, w, "matvec");
    bool normed = norm.weight.size != 0;
    if (normed) require(norm.weight, uint64_t(w.cols) * 4, "matvec", "norm weight");
    if (normed && norm.weight.offset % env_.device.caps().texel_offset_align)
        fail(VKLLM_ERR_INTERNAL, "matvec: a norm weight that does not start on a texel");
    if (n > 0) {
        // A workgroup serves up to 4 vectors of the batch, loading each weight once for them.
        uint32_t groups_z = (n + 3) / 4;
        uint32_t nb = (n + groups_z - 1) / groups_z;
        if (groups_z > 65535) fail(VKLLM_ERR_UNSUPPORTED, "matvec: a batch of %u is too large", n);
        bool texel = texel_allowed && texel_matvec(w, x);
        uint32_t units = w.cols / 32;
        MatvecKey key{MatvecFamily::Dense, w.type, w.rows, w.cols};
        MatvecVariant v = forced    ? *forced
                          : nb == 1 ? env_.matvec_variant(key, texel)
                                    : env_.default_matvec_variant(key, false);
        check_loops(w.cols / v.wg + 1, "matvec", w.cols);
        bool single = v.subgroup && env_.single_subgroup(v);
        // One vector of short rows on lavapipe: the texel kernel walks the rows in order.
        bool walk = texel && single && nb == 1 && units <= v.wg * kWalkUnits && v.rows == kWalkRows;
        uint32_t rows = v.rows;
        if (up && !(texel && fusable_swiglu(w, *up, x) && !epilogue))
            fail(VKLLM_ERR_INTERNAL, "matvec: a gated unit fused where the texel kernel cannot");
        if (!texel && normed)
            fail(VKLLM_ERR_INTERNAL, "matvec: a norm fused where the texel kernel cannot read");
        const Pipeline *pipeline;
        if (texel) {
            shaders::MatvecTexelSpec spec;
            spec.WG = v.wg;
            spec.ROWS = rows;
            spec.WTYPE = uint32_t(w.type);
            spec.NB = nb;
            spec.EPILOGUE = epilogue;
            // Rows of whole lane rounds plus half a round end with a split round.
            spec.SPLIT_TAIL = v.wg % 2 == 0 && rows % 2 == 0 && units % v.wg == v.wg / 2;
            spec.GLU = !up                    ? shaders::GLU_NONE
                       : glu == Binary::GeGLU ? shaders::GLU_GEGLU
                                              : shaders::GLU_SWIGLU;
            spec.X_UNITS = walk ? (units + v.wg - 1) / v.wg : 0;
            spec.NORM = normed;
            spec.QKV = qkv != nullptr;
            spec.SUBGROUPS = single ? 1 : v.wg;
            if (store) {
                spec.KV_TYPE = uint32_t(store->shape.kv_type);  // KV_<TYPE>: attention.cpp
                spec.ROPE = !store->rope.rot_dim                     ? shaders::ROPE_NONE
                            : store->rope.layout == RopeLayout::Neox ? shaders::ROPE_NEOX
                                                                     : shaders::ROPE_PAIRS;
                pipeline = &env_.pipelines.get<shaders::MatvecTexelKvBindings>(
                    v.subgroup ? shaders::matvec_texel_kv_subgroup : shaders::matvec_texel_kv,
                    spec);
            } else {
                pipeline = &env_.pipelines.get<shaders::MatvecTexelBindings>(
                    v.subgroup ? shaders::matvec_texel_subgroup : shaders::matvec_texel, spec);
            }
        } else {
            shaders::MatvecSpec spec;
            spec.WG = v.wg;
            spec.ROWS = rows;
            spec.WTYPE = uint32_t(w.type);
            spec.NB = nb;
            spec.EPILOGUE = epilogue;
            spec.SUBGROUPS = single ? 1 : v.wg;
            pipeline = &env_.pipelines.get<shaders::MatvecBindings>(
                v.subgroup ? shaders::matvec_subgroup : shaders::matvec, spec);
        }
        uint64_t max_range = matvec_max_range(texel);
        BufferRange xs{x.buffer, x.offset, uint64_t(n) * w.cols * 4};
        std::vector<KernelEnv::Chunk> chunks = env_.split_rows(w, max_range);
        if (store && (!texel || chunks.size() != 1))
            fail(VKLLM_ERR_INTERNAL, "matvec: the KV store fused where one texel dispatch cannot");
        // The up projection has the gate's shape and type, so the same row chunks.
        std::vector<KernelEnv::Chunk> up_chunks = up ? env_.split_rows(*up, max_range) : chunks;
        for (size_t i = 0; i < chunks.size(); ++i) {
            const KernelEnv::Chunk &c = chunks[i];
            shaders::MatvecPush push{};
            push.rows = c.rows;
            push.cols = w.cols;
            push.y_offset = c.row0;
            push.n = n;
            push.y_stride = w.rows;
            push.scale = end.scale;
            shaders::MatvecTexelPush texel_push{};
            texel_push.rows = c.rows;
            texel_push.cols = w.cols;
            texel_push.y_offset = c.row0;
            texel_push.n = n;
            texel_push.y_stride = w.rows;
            texel_push.eps = norm.eps;
            texel_push.scale = end.scale;
            // Stacked outputs: where K's and V's rows start.
            if (qkv)
                texel_push.k_row0 = qkv->q_rows, texel_push.v_row0 = qkv->q_rows + qkv->kv_rows;
            if (store) {
                const AttentionShape &s = store->shape;
                texel_push.head_dim = s.head_dim;
                texel_push.capacity = s.capacity;
                texel_push.n_sink = s.n_sink;
                texel_push.n_seq = qkv->n_seq;
                texel_push.rot_dim = store->rope.rot_dim;
                texel_push.n_pos = store->rope.n_pos;
            }
            uint64_t groups = (c.rows + rows - 1) / rows;
            if (texel) {
                auto bind = [&](auto &b) {
                    b.w = c.data;
                    b.x = xs;
                    b.y = y;
                    b.bias = bias_binding(end, c.data);
                    b.w2 = up_chunks[i].data;
                    // Without a norm its binding is x again, never read.
                    b.g = normed ? BufferRange{norm.weight.buffer, norm.weight.offset,
                                               uint64_t(w.cols) * 4}
                                 : xs;
                    // Without stacked outputs these are y again, never written.
                    b.yk = qkv ? qkv->k : y;
                    b.yv = qkv ? qkv->v : y;
                };
                if (store) {
                    shaders::MatvecTexelKvBindings b;
                    bind(b);
                    b.k_cache = store->k_cache;
                    b.v_cache = store->v_cache;
                    b.positions = store->step.positions;
                    b.seq_ids = store->step.seq_ids;
                    // Without RoPE: positions again, never read.
                    b.table = store->rope.rot_dim ? store->rope.table : store->step.positions;
                    b.arrivals = store->arrivals;
                    env_.dispatch_1d(rec, *pipeline, b, &texel_push, sizeof texel_push, groups,
                                     groups_z);
                } else {
                    shaders::MatvecTexelBindings b;
                    bind(b);
                    env_.dispatch_1d(rec, *pipeline, b, &texel_push, sizeof texel_push, groups,
                                     groups_z);
                }
            } else {
                shaders::MatvecBindings b;
                b.w = c.data;
                b.x = x;
                b.y = y;
                b.bias = bias_binding(end, c.data);
                env_.dispatch_1d(rec, *pipeline, b, &push, sizeof push, groups, groups_z);
            }
        }
    }
}

void LinearKernels::linear(Recording &rec, const Matrix &w, const BufferRange &x,
                           const BufferRange &y, uint32_t n, const Epilogue &end,
                           const InputNorm &norm) {
    if (norm.weight.size && !norm_fusable(w, x, norm.weight, n))
        fail(VKLLM_ERR_INTERNAL, "linear: a norm fused where the kernel cannot apply it");
    if (n <= kRowGroup) return matvec(rec, w, x, y, n, end, norm);
    if (!row_groups_fit(w, n)) return matmul(rec, w, x, y, n, end);
    matvec_row_groups(rec, w, nullptr, x, y, n, end, norm);
}

void LinearKernels::set_coopmat(bool on) {
    env_.coopmat = on && env_.device.coopmat_enabled() && env_.coopmat_shape.m != 0;
}

void LinearKernels::matmul(Recording &rec, const Matrix &w, const BufferRange &x,
                           const BufferRange &y, uint32_t n, const Epilogue &end) {
    require(x, uint64_t(n) * w.cols * 4, "matmul", "x");
    require(y, uint64_t(n) * w.rows * 4, "matmul", "y");
    if (env_.coopmat && matmul_coopmat(rec, w, x, y, n, end)) return;
    check_loops(w.cols / 16 + 1, "matmul", w.cols);  // 16-wide K slices
    uint32_t epilogue = epilogue_bits(end, w, "matmul");
    shaders::MatmulSpec spec;
    spec.WTYPE = uint32_t(w.type);
    spec.EPILOGUE = epilogue;
    const Pipeline &p = env_.pipelines.get<shaders::MatmulBindings>(shaders::matmul, spec);
    shaders::MatmulBindings b;
    b.x = x;
    b.y = y;
    uint32_t tiles_m = (n + 31) / 32;
    if (tiles_m > 65535) fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u rows is too many", n);
    for (const KernelEnv::Chunk &c : env_.split_rows(w)) {
        shaders::MatmulPush push{};
        push.m = n;
        push.n = c.rows;
        push.k = w.cols;
        push.ldy = w.rows;
        push.y_col0 = c.row0;
        push.scale = end.scale;
        uint32_t tiles_n = (c.rows + 31) / 32;
        if (tiles_n > env_.device.caps().max_groups_x)
            fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u output rows is too many", c.rows);
        b.w = c.data;
        b.bias = bias_binding(end, c.data);
        rec.dispatch(p, b, &push, sizeof push, tiles_n, tiles_m);
    }
}

}  // namespace vkllm::gpu
