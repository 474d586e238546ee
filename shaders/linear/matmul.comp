#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Y[m][y_col0 + n] = sum_k X[m][k] * W[n][k]: a batch of M activation rows times the rows of
// one weight chunk (prefill). 64 invocations compute a 32 x 32 tile, 4 x 4 outputs each,
// staging 16-wide K slices of X and W in shared memory. Accumulation is F32.
#include "common.glsl"
#include "weight_types.glsl"

#include "matmul.h"
layout(local_size_x = 8, local_size_y = 8) in;

const uint BM = 32;
const uint BN = 32;
const uint BK = 16;

layout(binding = MatmulBindings_w) readonly buffer Weights { uint w[]; };
#define WEIGHTS w
#include "weights.glsl"
layout(binding = MatmulBindings_x) readonly buffer Input { float x[]; };
layout(binding = MatmulBindings_y) buffer Output { float y[]; };
#define LINEAR_BIAS_BINDING MatmulBindings_bias
#include "linear_epilogue.glsl"

shared float xs[BM * BK];
shared float ws[BN * BK];

void main() {
    uint tile_m = gl_WorkGroupID.y * BM;
    uint tile_n = gl_WorkGroupID.x * BN;
    uint lx = gl_LocalInvocationID.x;
    uint ly = gl_LocalInvocationID.y;
    uint tid = ly * 8u + lx;
    float acc[4][4];
    [[unroll]] for (uint i = 0; i < 4u; ++i) {
        [[unroll]] for (uint j = 0; j < 4u; ++j) acc[i][j] = 0.0;
    }
    for (uint k0 = 0; k0 < p.k; k0 += BK) {
        // Each invocation stages 8 consecutive values of one row of each tile (a quarter of a
        // 32-weight unit for block-quantized weights, whose rows are whole units).
        uint r = tid / 2u;
        uint c0 = (tid & 1u) * 8u;
        uint gm = tile_m + r;
        uint gn = tile_n + r;
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            uint gk = k0 + c0 + i;
            xs[r * BK + c0 + i] = (gm < p.m && gk < p.k) ? x[gm * p.k + gk] : 0.0;
        }
        if (WTYPE >= WT_FIRST_BLOCK_TYPE) {
            vec4 a = vec4(0.0), b = vec4(0.0);
            if (gn < p.n) unit_weights8((gn * p.k + k0 + c0) >> 5u, ((k0 + c0) >> 3u) & 3u, a, b);
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                ws[r * BK + c0 + i] = a[i];
                ws[r * BK + c0 + 4u + i] = b[i];
            }
        } else {
            [[unroll]] for (uint i = 0; i < 8u; ++i) {
                uint gk = k0 + c0 + i;
                ws[r * BK + c0 + i] = (gn < p.n && gk < p.k) ? weight_at(gn * p.k + gk) : 0.0;
            }
        }
        barrier();
        [[unroll]] for (uint kk = 0; kk < BK; ++kk) {
            float a[4];
            float b[4];
            [[unroll]] for (uint i = 0; i < 4u; ++i) a[i] = xs[(ly * 4u + i) * BK + kk];
            [[unroll]] for (uint j = 0; j < 4u; ++j) b[j] = ws[(lx * 4u + j) * BK + kk];
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                [[unroll]] for (uint j = 0; j < 4u; ++j) acc[i][j] += a[i] * b[j];
            }
        }
        barrier();
    }
    [[unroll]] for (uint i = 0; i < 4u; ++i) {
        uint gm = tile_m + ly * 4u + i;
        [[unroll]] for (uint j = 0; j < 4u; ++j) {
            uint gn = tile_n + lx * 4u + j;
            if (gm < p.m && gn < p.n) store(gm * p.ldy + p.y_col0 + gn, p.y_col0 + gn, acc[i][j]);
        }
    }
}
