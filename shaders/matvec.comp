#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// y[y_offset + r] = sum_k W[r][k] * x[k] for the rows of one weight chunk.
// A workgroup owns ROWS rows and its lanes split K, so each x[k] is loaded once and used for
// all ROWS rows (the shape that is fast on lavapipe, see LAVAPIPE.md); the per-row partial
// sums are reduced in shared memory at the end. Accumulation is F32.
#include "common.glsl"

layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const uint ROWS = 4;
layout(constant_id = 2) const uint WTYPE = 0;
layout(local_size_x_id = 0) in;

layout(binding = 0) readonly buffer Weights { uint w[]; };
layout(binding = 1) readonly buffer Input { float x[]; };
layout(binding = 2) writeonly buffer Output { float y[]; };
layout(push_constant) uniform Params {
    uint rows;  // rows in this chunk
    uint cols;
    uint y_offset;
} p;

shared float partial[ROWS * WG];

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint row0 = flat_group() * ROWS;
    float acc[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; ++r) acc[r] = 0.0;
    for (uint k = lane; k < p.cols; k += WG) {
        float xk = x[k];
        [[unroll]] for (uint r = 0; r < ROWS; ++r) {
            // Rows past the end repeat the last row: no branch in the loop, never stored.
            uint row = min(row0 + r, p.rows - 1u);
            acc[r] += LOAD_WEIGHT(w, WTYPE, row * p.cols + k) * xk;
        }
    }
    [[unroll]] for (uint r = 0; r < ROWS; ++r) partial[r * WG + lane] = acc[r];
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (lane < s) {
            [[unroll]] for (uint r = 0; r < ROWS; ++r) partial[r * WG + lane] += partial[r * WG + lane + s];
        }
        barrier();
    }
    for (uint r = lane; r < ROWS; r += WG) {
        if (row0 + r < p.rows) y[p.y_offset + row0 + r] = partial[r * WG];
    }
}
