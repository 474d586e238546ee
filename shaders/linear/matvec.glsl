// The body of matvec.comp and matvec_subgroup.comp (which differ only in how a workgroup's
// lanes add up their partial sums: matvec_reduce.glsl). The including file gives the #version
// and the extensions.
#include "common.glsl"
#include "weight_types.glsl"

#include "matvec.h"
const uint MATS = 1;  // matrices per workgroup (matvec_reduce.glsl)
layout(local_size_x_id = 0) in;

layout(binding = MatvecBindings_w) readonly buffer Weights { uint w[]; };
layout(binding = MatvecBindings_w) readonly buffer Weights4 { uvec4 w4[]; };  // the same, 4 words at a time
#define WEIGHTS w
#include "weights.glsl"
layout(binding = MatvecBindings_x) readonly buffer Input { float x[]; };  // [n][cols]
layout(binding = MatvecBindings_y) buffer Output { float y[]; };  // [n][y_stride]
#define LINEAR_BIAS_BINDING MatvecBindings_bias
#include "linear_epilogue.glsl"

uint row0, b0;  // the workgroup's first row and first vector

// Output i of the workgroup: row i / NB of vector i % NB.
void emit(uint i, float sum) {
    uint r = row0 + i / NB, b = b0 + i % NB;
    if (r < p.rows && b < p.n) store(b * p.y_stride + p.y_offset + r, p.y_offset + r, sum);
}
#include "matvec_reduce.glsl"


void main() {
    uint lane = gl_LocalInvocationID.x;
    row0 = flat_group() * ROWS;
    b0 = gl_WorkGroupID.z * NB;
    // Vectors past the end of the batch repeat the last one: computed, never stored.
    uint xbase[NB];
    [[unroll]] for (uint j = 0; j < NB; ++j) xbase[j] = min(b0 + j, p.n - 1u) * p.cols;
    [[unroll]] for (uint i = 0; i < ROWS * NB; ++i) acc[i] = 0.0;
    // Weights per uvec4: 4 (F32) or 8 (F16, BF16).
    const uint PER4 = WTYPE == WT_F32 ? 4u : 8u;
    if (WTYPE >= WT_FIRST_BLOCK_TYPE) {
        uint units = p.cols / 32u;
        for (uint k = lane; k < units; k += WG) {
            vec4 xv[NB * 8u];
            [[unroll]] for (uint j = 0; j < NB; ++j) {
                [[unroll]] for (uint i = 0; i < 8u; ++i) {
                    uint e = xbase[j] + k * 32u + i * 4u;
                    xv[j * 8u + i] = vec4(x[e], x[e + 1u], x[e + 2u], x[e + 3u]);
                }
            }
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                vec4 wv[8];
                unit_weights32(min(row0 + r, p.rows - 1u) * units + k, wv);
                [[unroll]] for (uint j = 0; j < NB; ++j) {
                    float sum = 0.0;
                    [[unroll]] for (uint i = 0; i < 8u; ++i) sum += dot(wv[i], xv[j * 8u + i]);
                    acc[r * NB + j] += sum;
                }
            }
        }
    } else if (p.cols % PER4 == 0u) {
        // Rows of whole uvec4: a lane loads 4 words at a time (cheaper per word on lavapipe).
        uint units = p.cols / PER4;
        for (uint k = lane; k < units; k += WG) {
            vec4 xa[NB], xb[NB];
            [[unroll]] for (uint j = 0; j < NB; ++j) {
                uint e = xbase[j] + k * PER4;
                xa[j] = vec4(x[e], x[e + 1u], x[e + 2u], x[e + 3u]);
                if (PER4 == 8u) xb[j] = vec4(x[e + 4u], x[e + 5u], x[e + 6u], x[e + 7u]);
            }
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                uvec4 q = w4[min(row0 + r, p.rows - 1u) * units + k];
                vec4 wa, wb;
                if (WTYPE == WT_F32) {
                    wa = uintBitsToFloat(q);
                } else if (WTYPE == WT_F16) {
                    wa = vec4(unpackHalf2x16(q.x), unpackHalf2x16(q.y));
                    wb = vec4(unpackHalf2x16(q.z), unpackHalf2x16(q.w));
                } else {
                    wa = uintBitsToFloat(uvec4(q.x << 16u, q.x & 0xffff0000u, q.y << 16u, q.y & 0xffff0000u));
                    wb = uintBitsToFloat(uvec4(q.z << 16u, q.z & 0xffff0000u, q.w << 16u, q.w & 0xffff0000u));
                }
                [[unroll]] for (uint j = 0; j < NB; ++j) {
                    acc[r * NB + j] += dot(wa, xa[j]);
                    if (PER4 == 8u) acc[r * NB + j] += dot(wb, xb[j]);
                }
            }
        }
    } else if ((WTYPE == WT_F16 || WTYPE == WT_BF16) && (p.cols & 1u) == 0u) {
        // 16-bit weights in rows of whole words: a lane takes a word, two weights, at a time,
        // so each word is loaded once.
        uint words = p.cols >> 1u;
        for (uint k = lane; k < words; k += WG) {
            vec2 xk[NB];
            [[unroll]] for (uint j = 0; j < NB; ++j) xk[j] = vec2(x[xbase[j] + 2u * k], x[xbase[j] + 2u * k + 1u]);
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                uint word = w[min(row0 + r, p.rows - 1u) * words + k];
                vec2 wv = WTYPE == WT_F16 ? unpackHalf2x16(word)
                                      : uintBitsToFloat(uvec2(word << 16u, word & 0xffff0000u));
                [[unroll]] for (uint j = 0; j < NB; ++j) acc[r * NB + j] += wv.x * xk[j].x + wv.y * xk[j].y;
            }
        }
    } else {
        for (uint k = lane; k < p.cols; k += WG) {
            float xk[NB];
            [[unroll]] for (uint j = 0; j < NB; ++j) xk[j] = x[xbase[j] + k];
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                // Rows past the end repeat the last row: no branch in the loop, never stored.
                uint row = min(row0 + r, p.rows - 1u);
                float wv = weight_at(row * p.cols + k);
                [[unroll]] for (uint j = 0; j < NB; ++j) acc[r * NB + j] += wv * xk[j];
            }
        }
    }
    reduce_acc(lane);
}
