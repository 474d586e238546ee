// Which expert a workgroup of the expert kernels (moe_matvec.comp, moe_matvec_texel.comp)
// serves. A dispatch covers experts [e0, e0 + n_here) of a tensor (its binding holds them) with
// at most min(n_here, entries) workgroups in z: workgroup z takes the z-th of those experts that
// some entry chose, so a step that chose few experts (a one-token decode: k of them) runs only
// their workgroups, not one per expert that then finds nothing to do. Include after the route
// buffer `int route[]` (layout in moe_route.comp).

// For workgroup slot z: the expert's index x within the binding and its group of entries
// [begin, end) in the route's list; false when fewer than z + 1 experts were chosen.
bool chosen_expert(uint z, uint n_entries, uint e0, uint n_here, out uint x, out uint begin, out uint end) {
    uint off = 2u * n_entries, seen = 0u;
    x = 0u;
    begin = 0u;
    end = 0u;
    for (uint i = 0u; i < n_here; ++i) {
        uint b = uint(route[off + e0 + i]), e = uint(route[off + e0 + i + 1u]);
        if (e == b) continue;
        if (seen == z) {
            x = i;
            begin = b;
            end = e;
            return true;
        }
        ++seen;
    }
    return false;
}

// For the matmuls (moe_matmul_coopmat.comp), which cut each chosen expert's group into tiles of
// `tile` entries, taken in expert order: tile t's expert x within the binding and its entries
// [begin, end) of the route's list (at most `tile` of them); false past the last tile.
bool expert_tile(uint t, uint tile, uint n_entries, uint e0, uint n_here, out uint x, out uint begin, out uint end) {
    uint off = 2u * n_entries;
    x = 0u;
    begin = 0u;
    end = 0u;
    for (uint i = 0u; i < n_here; ++i) {
        uint b = uint(route[off + e0 + i]), e = uint(route[off + e0 + i + 1u]);
        uint tiles = (e - b + tile - 1u) / tile;
        if (t < tiles) {
            x = i;
            begin = b + t * tile;
            end = min(e, begin + tile);
            return true;
        }
        t -= tiles;
    }
    return false;
}
