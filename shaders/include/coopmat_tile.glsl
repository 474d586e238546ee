// One BM x BN tile of Y = X W^T on cooperative matrices, with f16 operands and f32
// accumulation: K slices of BK of X's tile rows (converted from f32) and of W's rows
// (dequantized) staged in shared memory as f16; each subgroup owns a WM x WN warp tile of
// TM x TN accumulators, loading A fragments row-major from the X tile and B fragments
// column-major from the W tile (a W row is one column of B). The accumulators leave through a
// per-subgroup f32 scratch tile, so that the ragged edges are bounds-checked and the caller's
// epilogue applies per element.
//
// The tile is cut into NSG warp tiles for the subgroups the device is expected to form; where a
// driver forms another number, the warp tiles are taken in passes by at most NSG subgroups at a
// time, so the result is right for any subgroup size (only slower).
//
// Include after the extensions, the specialization constants (TM TN TK BM BN BK WM WN NSG and
// WTYPE), weights.glsl and the binding `x`, with the caller's hooks defined:
//   uint x_row(uint r): where tile row r's activations start in x, or NO_ROW where the tile
//     has no row r (past M or past an expert's group);
//   uint w_row(uint n): the binding's weight row of the tile's output column n;
//   void emit(uint r, uint n, float v): the result of tile row r, output column n, called only
//     for rows that exist and columns below the tile's `cols`.
// Every invocation of the workgroup must call coopmat_tile (it has barriers).
const uint NO_ROW = 0xffffffffu;

// Rows of the staged tiles are padded by 8 halves (16 bytes: fragment loads stay aligned) so
// that consecutive rows start in different banks.
const uint BKP = BK + 8u;
shared float16_t xs[BM * BKP];
shared float16_t ws[BN * BKP];
shared float scratch[NSG * TM * TN];

const uint WARP_TILES = (BM / WM) * (BN / WN);
const uint FM = WM / TM;  // fragments of a warp tile down M
const uint FN = WN / TN;  // and across N
const uint WG = gl_WorkGroupSize.x;

// Stages K slice k0 of X's tile rows and of W's rows [n0, n0 + BN) of `cols` (zeros past the
// rows, the columns and K).
void stage(uint n0, uint cols, uint k, uint k0, uint tid) {
    // X: groups of 4 consecutive values of a row.
    [[unroll]] for (uint q = tid; q < BM * BK / 4u; q += WG) {
        uint r = q / (BK / 4u), c = (q % (BK / 4u)) * 4u;
        uint base = x_row(r);
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            uint gk = k0 + c + i;
            xs[r * BKP + c + i] = float16_t(base != NO_ROW && gk < k ? x[base + gk] : 0.0);
        }
    }
    if (WTYPE >= WT_FIRST_BLOCK_TYPE) {
        // Whole 32-weight units (rows are whole blocks and BK is a multiple of 32), each decoded
        // by one invocation that loads every word of it once.
        [[unroll]] for (uint u = tid; u < BN * BK / 32u; u += WG) {
            uint r = u / (BK / 32u), c = (u % (BK / 32u)) * 32u;
            vec4 wv[8];
            if (n0 + r < cols && k0 + c < k) {
                unit_weights32((w_row(n0 + r) * k + k0 + c) >> 5u, wv);
            } else {
                [[unroll]] for (uint i = 0; i < 8u; ++i) wv[i] = vec4(0.0);
            }
            [[unroll]] for (uint i = 0; i < 8u; ++i) {
                [[unroll]] for (uint j = 0; j < 4u; ++j) ws[r * BKP + c + 4u * i + j] = float16_t(wv[i][j]);
            }
        }
    } else {
        [[unroll]] for (uint q = tid; q < BN * BK / 4u; q += WG) {
            uint r = q / (BK / 4u), c = (q % (BK / 4u)) * 4u;
            bool in_n = n0 + r < cols;
            uint row = w_row(min(n0 + r, cols - 1u));
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                uint gk = k0 + c + i;
                ws[r * BKP + c + i] = float16_t(in_n && gk < k ? weight_at(row * k + gk) : 0.0);
            }
        }
    }
}

// The tile of output columns [n0, n0 + BN) of `cols`, over rows of length k.
void coopmat_tile(uint n0, uint cols, uint k) {
    uint tid = gl_LocalInvocationIndex;
    uint sg = gl_SubgroupID;
    uint slots = min(gl_NumSubgroups, NSG);  // subgroups that take warp tiles
    for (uint base = 0; base < WARP_TILES; base += slots) {
        uint wt = base + sg;
        bool has_tile = sg < slots && wt < WARP_TILES;  // uniform in the subgroup
        uint wm0 = (wt / (BN / WN)) * WM, wn0 = (wt % (BN / WN)) * WN;
        coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc[FM * FN];
        [[unroll]] for (uint i = 0; i < FM * FN; ++i)
            acc[i] = coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(0.0);
        for (uint k0 = 0; k0 < k; k0 += BK) {
            stage(n0, cols, k, k0, tid);
            barrier();
            if (has_tile) {
                [[unroll]] for (uint kk = 0; kk < BK; kk += TK) {
                    coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> a[FM];
                    coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> b[FN];
                    [[unroll]] for (uint i = 0; i < FM; ++i)
                        coopMatLoad(a[i], xs, (wm0 + i * TM) * BKP + kk, BKP, gl_CooperativeMatrixLayoutRowMajor);
                    [[unroll]] for (uint j = 0; j < FN; ++j)
                        coopMatLoad(b[j], ws, (wn0 + j * TN) * BKP + kk, BKP, gl_CooperativeMatrixLayoutColumnMajor);
                    [[unroll]] for (uint i = 0; i < FM; ++i) {
                        [[unroll]] for (uint j = 0; j < FN; ++j) acc[i * FN + j] = coopMatMulAdd(a[i], b[j], acc[i * FN + j]);
                    }
                }
            }
            barrier();
        }
        if (has_tile) {
            uint s0 = sg * TM * TN;
            [[unroll]] for (uint f = 0; f < FM * FN; ++f) {
                coopMatStore(acc[f], scratch, s0, TN, gl_CooperativeMatrixLayoutRowMajor);
                subgroupMemoryBarrierShared();
                subgroupBarrier();
                uint r0 = wm0 + (f / FN) * TM, c0 = n0 + wn0 + (f % FN) * TN;
                for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += gl_SubgroupSize) {
                    uint r = r0 + e / TN, n = c0 + e % TN;
                    if (n < cols && x_row(r) != NO_ROW) emit(r, n, scratch[s0 + e]);
                }
                subgroupBarrier();  // the scratch is read before the next fragment overwrites it
            }
        }
    }
}
