// The workgroup shapes of the cooperative-matrix matmuls (shaders/include/coopmat_tile.glsl:
// matmul_coopmat.comp, moe_matmul_coopmat.comp), chosen for the device: the tile, its K slices
// and its cut into warp tiles for the subgroups a workgroup holds.
#pragma once

#include <cstdint>

#include "gpu/coopmat.h"
#include "gpu/device_info.h"

namespace vkllm::gpu {

// A workgroup's BM x BN tile of Y in K slices of BK, cut into warp tiles of WM x WN for `slots`
// subgroups at a time.
struct CoopmatTiles {
    uint32_t bm, bn, bk, wm, wn, slots;
};

// The tiles of side `side` (64 or 32, rounded up to whole fragments of shape `s`) for the
// subgroups of a COOPMAT_WG workgroup on the device.
CoopmatTiles coopmat_tiles(uint32_t side, const CoopmatShape &s, const vkllm_device_info &info);

// Shared memory of coopmat_tile.glsl: the X and W slices as f16 in rows padded by 8, and an f32
// accumulator scratch per subgroup slot.
uint64_t coopmat_shared_bytes(const CoopmatTiles &t, const CoopmatShape &s);

// Iterations of coopmat_tile.glsl's loops for one invocation over rows of `cols` (check_loops).
uint64_t coopmat_tile_loops(const CoopmatTiles &t, const CoopmatShape &s, uint32_t cols);

// The shapes into a kernel's specialization (both kernels name them alike).
template <class Spec>
void set_coopmat_spec(Spec &spec, const CoopmatTiles &t, const CoopmatShape &s) {
    spec.TM = s.m;
    spec.TN = s.n;
    spec.TK = s.k;
    spec.BM = t.bm;
    spec.BN = t.bn;
    spec.BK = t.bk;
    spec.WM = t.wm;
    spec.WN = t.wn;
    spec.NSG = t.slots;
}

}  // namespace vkllm::gpu
