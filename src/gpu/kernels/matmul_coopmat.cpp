// LinearKernels::matmul on cooperative matrices (shaders/linear/matmul_coopmat.comp): the tile
// shapes chosen for the device, and the dispatch over the weight's row chunks.
#include <algorithm>
#include <cstdint>
#include <thread>

#include "gpu/kernels/linear.h"
#include "linear/matmul_coopmat.h"
#include "shader_names.h"

namespace vkllm::gpu {

namespace {

// A workgroup's shapes: its BM x BN tile of Y in K slices of BK, cut into warp tiles of WM x WN
// for `slots` subgroups at a time.
struct CoopmatTiles {
    uint32_t bm, bn, bk, wm, wn, slots;
};

// Shared memory of matmul_coopmat.comp's tiles: X and W slices as f16 in rows padded by 8, and
// an f32 accumulator scratch per subgroup slot.
uint64_t shared_bytes(const CoopmatTiles &t, const CoopmatShape &s) {
    return uint64_t(t.bm + t.bn) * (t.bk + 8) * 2 + uint64_t(t.slots) * s.m * s.n * 4;
}

// The tile of side `side` (64 or 32, rounded up to whole fragments) for `subgroups` subgroups:
// the warp tiles halve the longer side (in fragments) until there is one per subgroup or no
// side can be halved.
CoopmatTiles tiles_of(uint32_t side, const CoopmatShape &s, uint32_t subgroups) {
    CoopmatTiles t{};
    t.bm = (side + s.m - 1) / s.m * s.m;
    t.bn = (side + s.n - 1) / s.n * s.n;
    t.bk = 32;  // whole 32-weight units of the block types
    while (t.bk % s.k)
        t.bk += 32;
    t.wm = t.bm, t.wn = t.bn;
    uint32_t count = 1;
    while (count < subgroups) {
        bool halve_m = (t.wm / s.m) % 2 == 0, halve_n = (t.wn / s.n) % 2 == 0;
        if (halve_m && (!halve_n || t.wm / s.m >= t.wn / s.n))
            t.wm /= 2;
        else if (halve_n)
            t.wn /= 2;
        else
            break;
        count *= 2;
    }
    t.slots = count;
    return t;
}

}  // namespace

bool LinearKernels::matmul_coopmat(Recording &rec, const Matrix &w, const BufferRange &x,
                                   const BufferRange &y, uint32_t n, const Epilogue &end) {
    const CoopmatShape &s = env_.coopmat_shape;
    const vkllm_device_info &info = env_.device.info();
    uint32_t subgroups =
        std::max<uint32_t>(1, MATMUL_COOPMAT_WG / std::max(1u, info.subgroup_size));
    // 64 x 64 tiles, unless they are too few to keep the device busy: then 32 x 32 (four times
    // as many workgroups, each staging twice the data per output). Vulkan core does not say how
    // many compute units a GPU has; 128 tiles is about one per SM of the largest (132 on an
    // H100), so a 896-wide Qwen2.5-0.5B projection over 512 rows (112 tiles of 64) takes 32.
    // lavapipe runs one workgroup per CPU thread.
    uint32_t min_tiles = env_.cpu_class ? std::max(1u, std::thread::hardware_concurrency()) : 128;
    CoopmatTiles big = tiles_of(64, s, subgroups), small = tiles_of(32, s, subgroups);
    auto count = [&](const CoopmatTiles &t) {
        return uint64_t((n + t.bm - 1) / t.bm) * ((w.rows + t.bn - 1) / t.bn);
    };
    uint64_t limit = info.max_compute_shared_memory;
    bool big_fits = shared_bytes(big, s) <= limit, small_fits = shared_bytes(small, s) <= limit;
    if (!big_fits && !small_fits) return false;
    bool want_big = env_.coopmat_tile ? env_.coopmat_tile == 64 : count(big) >= min_tiles;
    const CoopmatTiles &t = big_fits && (want_big || !small_fits) ? big : small;

    // Per K slice an invocation runs the staging loops, and a subgroup the fragment loops (as
    // loops where the compiler keeps them); the output loop once per fragment at the end.
    uint64_t fm = t.wm / s.m, fn = t.wn / s.n;
    uint64_t per_slice = (t.bm + t.bn) * uint64_t(t.bk) / 4 / MATMUL_COOPMAT_WG + 2 +
                         (t.bk / s.k) * (fm + fn + fm * fn + 1);
    uint64_t warp_tiles = uint64_t(t.bm / t.wm) * (t.bn / t.wn);
    check_loops((uint64_t(w.cols) / t.bk + 1) * per_slice * ((warp_tiles + t.slots - 1) / t.slots) +
                    fm * fn * s.m * s.n,
                "matmul", w.cols);

    shaders::MatmulCoopmatSpec spec;
    spec.WTYPE = uint32_t(w.type);
    spec.EPILOGUE =
        (end.bias.size ? 1u : 0u) | (end.accumulate ? 2u : 0u) | (end.scale != 1.0f ? 4u : 0u);
    spec.TM = s.m;
    spec.TN = s.n;
    spec.TK = s.k;
    spec.BM = t.bm;
    spec.BN = t.bn;
    spec.BK = t.bk;
    spec.WM = t.wm;
    spec.WN = t.wn;
    spec.NSG = t.slots;
    if (end.bias.size) require(end.bias, uint64_t(w.rows) * 4, "matmul", "bias");
    const Pipeline &p =
        env_.pipelines.get<shaders::MatmulCoopmatBindings>(shaders::matmul_coopmat, spec);
    uint32_t tiles_m = (n + t.bm - 1) / t.bm;
    if (tiles_m > 65535) fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u rows is too many", n);
    shaders::MatmulCoopmatBindings b;
    b.x = x;
    b.y = y;
    for (const KernelEnv::Chunk &c : env_.split_rows(w)) {
        shaders::MatmulCoopmatPush push{n, c.rows, w.cols, w.rows, c.row0, end.scale};
        uint32_t tiles_n = (c.rows + t.bn - 1) / t.bn;
        if (tiles_n > env_.device.caps().max_groups_x)
            fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u output rows is too many", c.rows);
        b.w = c.data;
        // Without a bias the binding is the chunk's own weights, never read (as matmul's).
        b.bias = end.bias.size ? end.bias : c.data;
        rec.dispatch(p, b, &push, sizeof push, tiles_n, tiles_m);
    }
    rec.barrier();
    return true;
}

}  // namespace vkllm::gpu
