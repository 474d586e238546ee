#include "gpu/kernels/coopmat_tiles.h"

#include <algorithm>

#include "include/coopmat_tile.h"

namespace vkllm::gpu {

// The warp tiles halve the longer side (in fragments) until there is one per subgroup or no
// side can be halved.
CoopmatTiles coopmat_tiles(uint32_t side, const CoopmatShape &s, const vkllm_device_info &info) {
    uint32_t subgroups = std::max<uint32_t>(1, COOPMAT_WG / std::max(1u, info.subgroup_size));
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

uint64_t coopmat_shared_bytes(const CoopmatTiles &t, const CoopmatShape &s) {
    return uint64_t(t.bm + t.bn) * (t.bk + 8) * 2 + uint64_t(t.slots) * s.m * s.n * 4;
}

// Per K slice an invocation runs the staging loops, and a subgroup the fragment loops (as loops
// where the compiler keeps them); the output loop once per fragment at the end.
uint64_t coopmat_tile_loops(const CoopmatTiles &t, const CoopmatShape &s, uint32_t cols) {
    uint64_t fm = t.wm / s.m, fn = t.wn / s.n;
    uint64_t per_slice = (t.bm + t.bn) * uint64_t(t.bk) / 4 / COOPMAT_WG + 2 +
                         (t.bk / s.k) * (fm + fn + fm * fn + 1);
    uint64_t warp_tiles = uint64_t(t.bm / t.wm) * (t.bn / t.wn);
    return (uint64_t(cols) / t.bk + 1) * per_slice * ((warp_tiles + t.slots - 1) / t.slots) +
           fm * fn * s.m * s.n;
}

}  // namespace vkllm::gpu
