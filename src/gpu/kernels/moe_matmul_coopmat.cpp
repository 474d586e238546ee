// MoeKernels' expert products on cooperative matrices (shaders/moe/moe_matmul_coopmat.comp):
// when prefill takes them, the tile shape chosen for the routing's groups, and the dispatch
// over the experts' bindings.
#include <algorithm>
#include <cstdint>

#include "gpu/kernels/coopmat_tiles.h"
#include "gpu/kernels/moe.h"
#include "gpu/kernels/weight_layout.h"
#include "moe/moe_matmul_coopmat.h"
#include "shader_names.h"

namespace vkllm::gpu {

// As linear(): steps of up to 8 tokens stay on the matrix-vector kernels, which read each
// chosen expert's weights once for all of its few entries.
bool MoeKernels::coopmat_step(uint32_t n_tokens) const {
    return linear_.coopmat() && n_tokens > 8;
}

bool MoeKernels::moe_matmul_coopmat(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                                    const BufferRange &y, const BufferRange &route,
                                    const BufferRange &bias, uint32_t n_tokens, uint32_t k,
                                    bool x_per_entry) {
    if (w.cols % 32)
        fail(VKLLM_ERR_UNSUPPORTED, "moe: expert rows of %u weights are not whole units of 32",
             w.cols);
    const CoopmatShape &s = env_.coopmat_shape;
    const vkllm_device_info &info = env_.device.info();
    uint64_t entries = uint64_t(n_tokens) * k;
    require(x, (x_per_entry ? entries : n_tokens) * w.cols * 4, "moe_matvec", "x");
    require(y, entries * w.rows * 4, "moe_matvec", "y");
    require(route, moe_route_words(n_tokens, k, w.n_expert) * 4, "moe_matvec", "route");
    require(w.data, weight_bytes(w.type, uint64_t(w.n_expert) * w.rows * w.cols), "moe_matvec",
            "weight");
    if (bias.size) require(bias, uint64_t(w.n_expert) * w.rows * 4, "moe_matvec", "bias");

    // Each chosen expert's group is cut into tiles of BM entries, so a tile larger than the
    // groups mostly computes padding: 64 x 64 where the groups average 64 entries or more (a
    // long prompt over few experts), else 32 x 32. The tile also holds each row's input offset
    // and entry (two words).
    uint64_t chosen = std::min<uint64_t>(w.n_expert, entries);
    CoopmatTiles big = coopmat_tiles(64, s, info), small = coopmat_tiles(32, s, info);
    auto bytes = [&](const CoopmatTiles &t) { return coopmat_shared_bytes(t, s) + 8 * t.bm; };
    uint64_t limit = info.max_compute_shared_memory;
    bool big_fits = bytes(big) <= limit, small_fits = bytes(small) <= limit;
    if (!big_fits && !small_fits) return false;
    bool want_big = env_.coopmat_tile ? env_.coopmat_tile == 64 : entries >= 64 * chosen;
    const CoopmatTiles &t = big_fits && (want_big || !small_fits) ? big : small;
    // The search for a workgroup's tile over the experts, then the tile (moe_group.glsl).
    check_loops(w.n_expert + t.bm / COOPMAT_WG + 1 + coopmat_tile_loops(t, s, w.cols), "moe_matvec",
                w.cols);

    shaders::MoeMatmulCoopmatSpec spec;
    spec.WTYPE = uint32_t(w.type);
    spec.X_PER_ENTRY = x_per_entry;
    set_coopmat_spec(spec, t, s);
    const Pipeline &p =
        env_.pipelines.get<shaders::MoeMatmulCoopmatBindings>(shaders::moe_matmul_coopmat, spec);
    uint32_t tiles_n = (w.rows + t.bn - 1) / t.bn;
    if (tiles_n > env_.device.caps().max_groups_x)
        fail(VKLLM_ERR_UNSUPPORTED, "moe: %u output rows is too many", w.rows);

    uint64_t per_chunk = experts_per_binding(w, false);
    for (uint64_t e0 = 0; e0 < w.n_expert && n_tokens > 0; e0 += per_chunk) {
        uint64_t n_here = std::min<uint64_t>(per_chunk, w.n_expert - e0);
        // The most tiles any routing makes of the binding's experts: every entry, and each
        // chosen expert's last tile partly filled.
        uint64_t groups = std::min<uint64_t>(n_here, entries);
        uint64_t tiles_m = (entries + groups * (t.bm - 1)) / t.bm;
        if (tiles_m > 65535)
            fail(VKLLM_ERR_UNSUPPORTED, "moe: %llu expert entries is too many",
                 (unsigned long long)entries);
        shaders::MoeMatmulCoopmatBindings b;
        b.w = BufferRange{w.data.buffer, w.data.offset + row_offset(w.type, w.cols, e0 * w.rows),
                          weight_bytes(w.type, n_here * w.rows * w.cols)};
        b.x = BufferRange{x.buffer, x.offset, (x_per_entry ? entries : n_tokens) * w.cols * 4};
        b.y = y;
        b.route = route;
        // Without a bias, its binding is x, never read.
        b.bias = bias.size ? bias : x;
        shaders::MoeMatmulCoopmatPush push{};
        push.rows = w.rows;
        push.cols = w.cols;
        push.k = k;
        push.n_entries = uint32_t(entries);
        push.n_expert = w.n_expert;
        push.e0 = uint32_t(e0);
        push.n_here = uint32_t(n_here);
        push.has_bias = bias.size > 0;
        rec.dispatch(p, b, &push, sizeof push, tiles_n, uint32_t(tiles_m));
    }
    return true;
}

}  // namespace vkllm::gpu
