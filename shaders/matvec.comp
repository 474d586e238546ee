#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// y[b][y_offset + r] = sum_k W[r][k] * x[b][k] for the rows of one weight chunk and the n
// vectors b of a batch (decode of n sequences at once; n = 1 is the plain matvec).
// A workgroup owns ROWS rows and NB vectors of the batch (gl_WorkGroupID.z picks which) and
// its lanes split K, so each weight is loaded once for all NB vectors and each x[b][k] once
// for all ROWS rows (the shape that is fast on lavapipe, see LAVAPIPE.md); the per-row partial
// sums are reduced in shared memory at the end. Accumulation is F32.
#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint ROWS = 4;
layout(constant_id = 2) const uint WTYPE = 0;
layout(constant_id = 3) const uint NB = 1;
layout(local_size_x_id = 0) in;

layout(binding = 0) readonly buffer Weights { uint w[]; };
layout(binding = 1) readonly buffer Input { float x[]; };  // [n][cols]
layout(binding = 2) writeonly buffer Output { float y[]; };  // [n][y_stride]
layout(push_constant) uniform Params {
    uint rows;  // rows in this chunk
    uint cols;
    uint y_offset;
    uint n;         // vectors in the batch
    uint y_stride;  // floats between the outputs of consecutive vectors
} p;

shared float partial[ROWS * NB * WG];

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint row0 = flat_group() * ROWS;
    uint b0 = gl_WorkGroupID.z * NB;
    // Vectors past the end of the batch repeat the last one: computed, never stored.
    uint xbase[NB];
    [[unroll]] for (uint j = 0; j < NB; ++j) xbase[j] = min(b0 + j, p.n - 1u) * p.cols;
    float acc[ROWS * NB];
    [[unroll]] for (uint i = 0; i < ROWS * NB; ++i) acc[i] = 0.0;
    for (uint k = lane; k < p.cols; k += WG) {
        float xk[NB];
        [[unroll]] for (uint j = 0; j < NB; ++j) xk[j] = x[xbase[j] + k];
        [[unroll]] for (uint r = 0; r < ROWS; ++r) {
            // Rows past the end repeat the last row: no branch in the loop, never stored.
            uint row = min(row0 + r, p.rows - 1u);
            float wv = LOAD_WEIGHT(w, WTYPE, row * p.cols + k);
            [[unroll]] for (uint j = 0; j < NB; ++j) acc[r * NB + j] += wv * xk[j];
        }
    }
    [[unroll]] for (uint i = 0; i < ROWS * NB; ++i) partial[i * WG + lane] = acc[i];
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (lane < s) {
            [[unroll]] for (uint i = 0; i < ROWS * NB; ++i) partial[i * WG + lane] += partial[i * WG + lane + s];
        }
        barrier();
    }
    for (uint i = lane; i < ROWS * NB; i += WG) {
        uint r = i / NB;
        uint b = b0 + i % NB;
        if (row0 + r < p.rows && b < p.n) y[b * p.y_stride + p.y_offset + row0 + r] = partial[i * WG];
    }
}
