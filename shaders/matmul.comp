#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Y[m][y_col0 + n] = sum_k X[m][k] * W[n][k]: a batch of M activation rows times the rows of
// one weight chunk (prefill). 64 invocations compute a 32 x 32 tile, 4 x 4 outputs each,
// staging 16-wide K slices of X and W in shared memory. Accumulation is F32.
#include "common.glsl"

layout(constant_id = 0) const uint WTYPE = 0;
layout(local_size_x = 8, local_size_y = 8) in;

const uint BM = 32;
const uint BN = 32;
const uint BK = 16;

layout(binding = 0) readonly buffer Weights { uint w[]; };
layout(binding = 1) readonly buffer Input { float x[]; };
layout(binding = 2) writeonly buffer Output { float y[]; };
layout(push_constant) uniform Params {
    uint m;  // activation rows
    uint n;  // weight rows in this chunk
    uint k;
    uint ldy;  // row stride of Y
    uint y_col0;
} p;

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
        [[unroll]] for (uint i = 0; i < (BM * BK) / 64u; ++i) {
            uint e = tid + i * 64u;
            uint r = e / BK;
            uint c = e % BK;
            uint gk = k0 + c;
            uint gm = tile_m + r;
            uint gn = tile_n + r;
            xs[e] = (gm < p.m && gk < p.k) ? x[gm * p.k + gk] : 0.0;
            ws[e] = (gn < p.n && gk < p.k) ? LOAD_WEIGHT(w, WTYPE, gn * p.k + gk) : 0.0;
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
            if (gm < p.m && gn < p.n) y[gm * p.ldy + p.y_col0 + gn] = acc[i][j];
        }
    }
}
