// LinearKernels::matmul on cooperative matrices (shaders/linear/matmul_coopmat.comp): the tile
// shapes chosen for the device, and the dispatch over the weight's row chunks.
#include <algorithm>
#include <cstdint>
#include <thread>

#include "gpu/kernels/coopmat_tiles.h"
#include "gpu/kernels/linear.h"
#include "linear/matmul_coopmat.h"
#include "shader_names.h"

namespace vkllm::gpu {

bool LinearKernels::matmul_coopmat(Recording &rec, const Matrix &w, const BufferRange &x,
                                   const BufferRange &y, uint32_t n, const Epilogue &end) {
    const CoopmatShape &s = env_.coopmat_shape;
    const vkllm_device_info &info = env_.device.info();
    // 64 x 64 tiles, unless they are too few to keep the device busy: then 32 x 32 (four times
    // as many workgroups, each staging twice the data per output). Vulkan core does not say how
    // many compute units a GPU has; 128 tiles is about one per SM of the largest (132 on an
    // H100), so a 896-wide Qwen2.5-0.5B projection over 512 rows (112 tiles of 64) takes 32.
    // lavapipe runs one workgroup per CPU thread.
    uint32_t min_tiles = env_.cpu_class ? std::max(1u, std::thread::hardware_concurrency()) : 128;
    CoopmatTiles big = coopmat_tiles(64, s, info), small = coopmat_tiles(32, s, info);
    auto count = [&](const CoopmatTiles &t) {
        return uint64_t((n + t.bm - 1) / t.bm) * ((w.rows + t.bn - 1) / t.bn);
    };
    uint64_t limit = info.max_compute_shared_memory;
    bool big_fits = coopmat_shared_bytes(big, s) <= limit,
         small_fits = coopmat_shared_bytes(small, s) <= limit;
    if (!big_fits && !small_fits) return false;
    bool want_big = env_.coopmat_tile ? env_.coopmat_tile == 64 : count(big) >= min_tiles;
    const CoopmatTiles &t = big_fits && (want_big || !small_fits) ? big : small;

    check_loops(coopmat_tile_loops(t, s, w.cols), "matmul", w.cols);

    shaders::MatmulCoopmatSpec spec;
    spec.WTYPE = uint32_t(w.type);
    spec.EPILOGUE = (end.bias.size ? shaders::EPILOGUE_BIAS : 0u) |
                    (end.accumulate ? shaders::EPILOGUE_ACCUMULATE : 0u) |
                    (end.scale != 1.0f ? shaders::EPILOGUE_SCALE : 0u);
    set_coopmat_spec(spec, t, s);
    if (end.bias.size) require(end.bias, uint64_t(w.rows) * 4, "matmul", "bias");
    const Pipeline &p =
        env_.pipelines.get<shaders::MatmulCoopmatBindings>(shaders::matmul_coopmat, spec);
    uint32_t tiles_m = (n + t.bm - 1) / t.bm;
    if (tiles_m > 65535) fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u rows is too many", n);
    shaders::MatmulCoopmatBindings b;
    b.x = x;
    b.y = y;
    for (const KernelEnv::Chunk &c : env_.split_rows(w)) {
        shaders::MatmulCoopmatPush push{};
        push.m = n;
        push.n = c.rows;
        push.k = w.cols;
        push.ldy = w.rows;
        push.y_col0 = c.row0;
        push.scale = end.scale;
        uint32_t tiles_n = (c.rows + t.bn - 1) / t.bn;
        if (tiles_n > env_.device.caps().max_groups_x)
            fail(VKLLM_ERR_UNSUPPORTED, "matmul: %u output rows is too many", c.rows);
        b.w = c.data;
        // Without a bias the binding is the chunk's own weights, never read (as matmul's).
        b.bias = end.bias.size ? end.bias : c.data;
        rec.dispatch(p, b, &push, sizeof push, tiles_n, tiles_m);
    }
    return true;
}

}  // namespace vkllm::gpu
