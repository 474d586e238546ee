#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Y[m][y_col0 + n] = sum_k X[m][k] * W[n][k] on cooperative matrices (prefill): matmul.comp's
// contract, with f16 operands and f32 accumulation. A workgroup computes a BM x BN tile of Y,
// staging BK-deep K slices of X (converted from f32) and W (dequantized) in shared memory as
// f16; each subgroup owns a WM x WN warp tile of TM x TN accumulators, loading A fragments
// row-major from the X tile and B fragments column-major from the W tile (a W row is one column
// of B). The accumulators leave through a per-subgroup f32 scratch tile, so that the ragged
// edges are bounds-checked and the epilogue applies per element.
//
// The tile is cut into NSG warp tiles for the subgroups the device is expected to form; where a
// driver forms another number, the warp tiles are taken in passes by at most NSG subgroups at a
// time, so the result is right for any subgroup size (only slower).
#include "common.glsl"
#include "weight_types.glsl"

#include "matmul_coopmat.h"
layout(local_size_x = MATMUL_COOPMAT_WG) in;

layout(binding = MatmulCoopmatBindings_w) readonly buffer Weights { uint w[]; };
#define WEIGHTS w
#include "weights.glsl"
layout(binding = MatmulCoopmatBindings_x) readonly buffer Input { float x[]; };
layout(binding = MatmulCoopmatBindings_y) buffer Output { float y[]; };
#define LINEAR_BIAS_BINDING MatmulCoopmatBindings_bias
#include "linear_epilogue.glsl"

// Rows of the staged tiles are padded by 8 halves (16 bytes: fragment loads stay aligned) so
// that consecutive rows start in different banks.
const uint BKP = BK + 8u;
shared float16_t xs[BM * BKP];
shared float16_t ws[BN * BKP];
shared float scratch[NSG * TM * TN];

const uint WARP_TILES = (BM / WM) * (BN / WN);
const uint FM = WM / TM;  // fragments of a warp tile down M
const uint FN = WN / TN;  // and across N
const uint WG = MATMUL_COOPMAT_WG;

// Stages K slice k0 of X and W (zeros past M, N and K).
void stage(uint tile_m, uint tile_n, uint k0, uint tid) {
    // X: groups of 4 consecutive values of a row.
    [[unroll]] for (uint q = tid; q < BM * BK / 4u; q += WG) {
        uint r = q / (BK / 4u), c = (q % (BK / 4u)) * 4u;
        uint gm = tile_m + r;
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            uint gk = k0 + c + i;
            xs[r * BKP + c + i] = float16_t(gm < p.m && gk < p.k ? x[gm * p.k + gk] : 0.0);
        }
    }
    if (WTYPE >= WT_FIRST_BLOCK_TYPE) {
        // Whole 32-weight units (rows are whole blocks and BK is a multiple of 32), each decoded
        // by one invocation that loads every word of it once.
        [[unroll]] for (uint u = tid; u < BN * BK / 32u; u += WG) {
            uint r = u / (BK / 32u), c = (u % (BK / 32u)) * 32u;
            uint gn = tile_n + r;
            vec4 wv[8];
            if (gn < p.n && k0 + c < p.k) {
                unit_weights32((gn * p.k + k0 + c) >> 5u, wv);
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
            uint gn = tile_n + r;
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                uint gk = k0 + c + i;
                ws[r * BKP + c + i] = float16_t(gn < p.n && gk < p.k ? weight_at(gn * p.k + gk) : 0.0);
            }
        }
    }
}

void main() {
    uint tile_m = gl_WorkGroupID.y * BM;
    uint tile_n = gl_WorkGroupID.x * BN;
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
        for (uint k0 = 0; k0 < p.k; k0 += BK) {
            stage(tile_m, tile_n, k0, tid);
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
                uint m0 = tile_m + wm0 + (f / FN) * TM, n0 = tile_n + wn0 + (f % FN) * TN;
                for (uint e = gl_SubgroupInvocationID; e < TM * TN; e += gl_SubgroupSize) {
                    uint gm = m0 + e / TN, gn = n0 + e % TN;
                    if (gm < p.m && gn < p.n) store(gm * p.ldy + p.y_col0 + gn, p.y_col0 + gn, scratch[s0 + e]);
                }
                subgroupBarrier();  // the scratch is read before the next fragment overwrites it
            }
        }
    }
}
