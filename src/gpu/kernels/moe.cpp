#include "gpu/kernels/moe.h"

#include <algorithm>
#include <cstdint>

#include "gpu/kernels/weight_layout.h"
#include "moe/moe_combine.h"
#include "moe/moe_matvec.h"
#include "moe/moe_matvec_texel.h"
#include "moe/moe_route.h"
#include "shader_names.h"

namespace vkllm::gpu {

// A Gating is passed as moe_route's GATING as it is.
static_assert(uint32_t(Gating::SoftmaxTopK) == shaders::GATING_SOFTMAX_TOPK &&
                  uint32_t(Gating::TopKSoftmax) == shaders::GATING_TOPK_SOFTMAX,
              "gpu::Gating and shaders/moe/moe_route.h differ");

void MoeKernels::moe_route(Recording &rec, const BufferRange &logits, const BufferRange &route,
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
    shaders::MoeRouteSpec spec;
    spec.GATING = uint32_t(gating);
    spec.MAXK = 8;
    const Pipeline &p = env_.pipelines.get<shaders::MoeRouteBindings>(shaders::moe_route, spec);
    shaders::MoeRouteBindings b;
    b.logits = logits;
    b.route = route;
    shaders::MoeRoutePush push{};
    push.n_tokens = n_tokens;
    push.n_expert = n_expert;
    push.k = k;
    push.norm = norm;
    if (n_tokens > 0) rec.dispatch(p, b, &push, sizeof push, 1, 1);
}

void MoeKernels::moe_matvec(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                            const BufferRange &y, const BufferRange &route, const BufferRange &bias,
                            uint32_t n_tokens, uint32_t k, bool x_per_entry) {
    if (coopmat_step(n_tokens) &&
        moe_matmul_coopmat(rec, w, x, y, route, bias, n_tokens, k, x_per_entry))
        return;
    moe_matvec(rec, w, nullptr, x, y, route, bias, {}, n_tokens, k, x_per_entry, Binary::Add);
}

bool MoeKernels::moe_swiglu_fusable(const ExpertMatrix &gate, const ExpertMatrix &up,
                                    const BufferRange &x, const BufferRange &gate_bias,
                                    const BufferRange &up_bias) const {
    return gate.type == up.type && gate.rows == up.rows && gate.cols == up.cols &&
           gate.n_expert == up.n_expert && (gate_bias.size > 0) == (up_bias.size > 0) &&
           linear_.texel_matvec(Matrix{gate.data, gate.type, gate.rows, gate.cols}, x) &&
           linear_.texel_matvec(Matrix{up.data, up.type, up.rows, up.cols}, x);
}

void MoeKernels::moe_swiglu(Recording &rec, const ExpertMatrix &gate, const ExpertMatrix &up,
                            const BufferRange &x, const BufferRange &y, const BufferRange &up_out,
                            const BufferRange &route, const BufferRange &gate_bias,
                            const BufferRange &up_bias, uint32_t n_tokens, uint32_t k, Binary act) {
    if (act != Binary::SwiGLU && act != Binary::SwiGLUOai)
        fail(VKLLM_ERR_INTERNAL, "moe_swiglu: operation %u is not a SwiGLU", uint32_t(act));
    if (!coopmat_step(n_tokens) && moe_swiglu_fusable(gate, up, x, gate_bias, up_bias))
        return moe_matvec(rec, gate, &up, x, y, route, gate_bias, up_bias, n_tokens, k, false, act);
    moe_matvec(rec, gate, x, y, route, gate_bias, n_tokens, k, false);
    moe_matvec(rec, up, x, up_out, route, up_bias, n_tokens, k, false);
    uint32_t n = n_tokens * k * gate.rows;
    eltwise_.binary(rec, act, y, up_out, y, n, n);
}

void MoeKernels::moe_matvec_variant(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                                    const BufferRange &y, const BufferRange &route, uint32_t k,
                                    const MatvecVariant &v, bool texel) {
    if (!env_.supports(v))
        fail(VKLLM_ERR_INTERNAL,
             "moe_matvec: a variant of %u lanes and %u rows the device cannot run", v.wg, v.rows);
    moe_matvec(rec, w, nullptr, x, y, route, BufferRange{}, BufferRange{}, 1, k, false,
               Binary::SwiGLU, &v, texel);
}

void MoeKernels::moe_matvec(Recording &rec, const ExpertMatrix &w, const ExpertMatrix *up,
                            const BufferRange &x, const BufferRange &y, const BufferRange &route,
                            const BufferRange &bias, const BufferRange &up_bias, uint32_t n_tokens,
                            uint32_t k, bool x_per_entry, Binary act, const MatvecVariant *forced,
                            bool texel_allowed) {
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
    // The texel kernel where the weights' layout and both bindings allow it (as matvec's).
    bool texel = texel_allowed && linear_.texel_matvec(Matrix{w.data, w.type, w.rows, w.cols}, x);
    MatvecKey key{MatvecFamily::Moe, w.type, w.rows, w.cols};
    MatvecVariant v = forced    ? *forced
                      : nb == 1 ? env_.matvec_variant(key, texel)
                                : env_.default_matvec_variant(key, false);
    // The storage-buffer kernel has no subgroup form: it adds through shared memory.
    if (!texel) v.subgroup = false;
    bool single = v.subgroup && env_.single_subgroup(v);
    // moe_group.glsl's search over the experts, then the group's entries by units.
    check_loops(w.n_expert + (entries / nb + 1) * (w.cols / 32 / v.wg + 1), "moe_matvec", w.cols);
    require(w.data, weight_bytes(w.type, uint64_t(w.n_expert) * w.rows * w.cols), "moe_matvec",
            "weight");
    if (up && !(texel && moe_swiglu_fusable(w, *up, x, bias, up_bias)))
        fail(VKLLM_ERR_INTERNAL, "moe_matvec: SwiGLU fused where the texel kernel cannot");
    uint64_t per_chunk = experts_per_binding(w, texel);
    auto chunk_bytes = [&](uint64_t n) { return weight_bytes(w.type, n * w.rows * w.cols); };
    auto start = [&](uint64_t e) { return row_offset(w.type, w.cols, e * w.rows); };
    const char *name =
        texel ? (v.subgroup ? shaders::moe_matvec_texel_subgroup : shaders::moe_matvec_texel)
              : shaders::moe_matvec;
    // A one-token step on lavapipe walks the rows as matvec does (kWalkUnits).
    bool walk =
        texel && single && nb == 1 && w.cols / 32 <= v.wg * kWalkUnits && v.rows == kWalkRows;
    uint32_t rows_per_group = v.rows;
    const Pipeline *pipeline;
    if (texel) {
        shaders::MoeMatvecTexelSpec spec;
        spec.WG = v.wg;
        spec.ROWS = rows_per_group;
        spec.WTYPE = uint32_t(w.type);
        spec.NB = nb;
        spec.X_PER_ENTRY = x_per_entry;
        spec.SWIGLU = !up                     ? shaders::SWIGLU_NONE
                      : act == Binary::SwiGLU ? shaders::SWIGLU_PLAIN
                                              : shaders::SWIGLU_OAI;
        spec.X_UNITS = walk ? (w.cols / 32 + v.wg - 1) / v.wg : 0;
        spec.SUBGROUPS = single ? 1 : v.wg;
        pipeline = &env_.pipelines.get<shaders::MoeMatvecTexelBindings>(name, spec);
    } else {
        shaders::MoeMatvecSpec spec;
        spec.WG = v.wg;
        spec.ROWS = rows_per_group;
        spec.WTYPE = uint32_t(w.type);
        spec.NB = nb;
        spec.X_PER_ENTRY = x_per_entry;
        pipeline = &env_.pipelines.get<shaders::MoeMatvecBindings>(name, spec);
    }
    BufferRange xs{x.buffer, x.offset, (x_per_entry ? entries : n_tokens) * w.cols * 4};
    for (uint64_t e0 = 0; e0 < w.n_expert && n_tokens > 0; e0 += per_chunk) {
        uint64_t n_here = std::min<uint64_t>(per_chunk, w.n_expert - e0);
        BufferRange chunk{w.data.buffer, w.data.offset + start(e0), chunk_bytes(n_here)};
        // The up projections have the gate's shape and type, so the same chunks.
        BufferRange up_chunk =
            up ? BufferRange{up->data.buffer, up->data.offset + start(e0), chunk_bytes(n_here)}
               : chunk;
        shaders::MoeMatvecPush push{};
        push.rows = w.rows;
        push.cols = w.cols;
        push.k = k;
        push.n_entries = uint32_t(entries);
        push.n_expert = w.n_expert;
        push.e0 = uint32_t(e0);
        push.n_here = uint32_t(n_here);
        push.has_bias = bias.size > 0;
        shaders::MoeMatvecTexelPush texel_push{};
        texel_push.rows = w.rows;
        texel_push.cols = w.cols;
        texel_push.k = k;
        texel_push.n_entries = uint32_t(entries);
        texel_push.n_expert = w.n_expert;
        texel_push.e0 = uint32_t(e0);
        texel_push.n_here = uint32_t(n_here);
        texel_push.has_bias = bias.size > 0;
        uint64_t groups = (w.rows + rows_per_group - 1) / rows_per_group;
        // A workgroup per chosen expert at most (moe_group.glsl).
        uint32_t groups_z = uint32_t(std::min<uint64_t>(n_here, entries));
        // Without a bias, its binding is x, never read.
        const BufferRange &bias_range = bias.size ? bias : x;
        if (texel) {
            shaders::MoeMatvecTexelBindings b;
            b.w = chunk;
            b.x = xs;
            b.y = y;
            b.route = route;
            b.bias = bias_range;
            b.w2 = up_chunk;
            b.bias2 = up_bias.size ? up_bias : x;
            env_.dispatch_1d(rec, *pipeline, b, &texel_push, sizeof texel_push, groups, groups_z);
        } else {
            shaders::MoeMatvecBindings b;
            b.w = chunk;
            b.x = x;
            b.y = y;
            b.route = route;
            b.bias = bias_range;
            env_.dispatch_1d(rec, *pipeline, b, &push, sizeof push, groups, groups_z);
        }
    }
}

uint64_t MoeKernels::experts_per_binding(const ExpertMatrix &w, bool texel) const {
    uint64_t max_range = texel ? env_.device.info().max_texel_buffer_elements * 16
                               : env_.device.info().max_storage_buffer_range;
    uint64_t align =
        texel ? env_.device.caps().texel_offset_align : env_.device.caps().storage_offset_align;
    auto chunk_bytes = [&](uint64_t n) { return weight_bytes(w.type, n * w.rows * w.cols); };
    auto start = [&](uint64_t e) { return row_offset(w.type, w.cols, e * w.rows); };
    if (chunk_bytes(w.n_expert) <= max_range) return w.n_expert;
    uint64_t step = 1;
    while (step < w.n_expert && (start(step) == UINT64_MAX || start(step) % align))
        ++step;
    uint64_t per_chunk = 0;
    while (per_chunk + step < w.n_expert && chunk_bytes(per_chunk + step) <= max_range)
        per_chunk += step;
    if (per_chunk == 0)
        fail(VKLLM_ERR_UNSUPPORTED,
             "moe: experts of %u x %u weights cannot be bound on this device", w.rows, w.cols);
    return per_chunk;
}

void MoeKernels::moe_combine(Recording &rec, const BufferRange &y, const BufferRange &route,
                             const BufferRange &shared, const BufferRange &shared_gate,
                             const BufferRange &out, uint32_t n_tokens, uint32_t n, uint32_t k) {
    require(y, uint64_t(n_tokens) * k * n * 4, "moe_combine", "y");
    require(out, uint64_t(n_tokens) * n * 4, "moe_combine", "out");
    if (shared.size) {
        require(shared, uint64_t(n_tokens) * n * 4, "moe_combine", "shared");
        require(shared_gate, uint64_t(n_tokens) * 4, "moe_combine", "shared_gate");
    }
    const Pipeline &p =
        env_.pipelines.get<shaders::MoeCombineBindings>(shaders::moe_combine, NoSpec{});
    shaders::MoeCombineBindings b;
    b.y = y;
    b.route = route;
    // Without a shared expert: y again, never read.
    b.shared = shared.size ? shared : y;
    b.shared_gate = shared.size ? shared_gate : y;
    b.out = out;
    shaders::MoeCombinePush push{};
    push.n_tokens = n_tokens;
    push.n = n;
    push.k = k;
    push.has_shared = shared.size > 0;
    env_.dispatch_1d(rec, p, b, &push, sizeof push, (uint64_t(n_tokens) * n + 63) / 64);
}

}  // namespace vkllm::gpu
