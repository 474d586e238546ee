#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Expert matrices over their groups of tokens: for each entry e (token t = e / k, its j-th
// expert) routed to expert x, y[e][r] = sum_c W_x[r][c] * in[c] (+ bias_x[r]), where `in` is
// the token's row (X_PER_ENTRY 0: the normed hidden state, shared by its k entries) or the
// entry's own row (1: the activation before the down projection).
// A workgroup owns ROWS rows of one chosen expert (moe_group.glsl) and walks that expert's
// group (moe_route.comp) NB entries at a time, so each chosen expert's weights are read once
// per NB tokens. The binding holds experts [e0, e0 + n_here) of the tensor, expert x at units
// (x - e0) * rows * (cols / 32).
// Weights of any type, decoded 32 at a time (shaders/weights.glsl); cols is whole units of
// 32. Lanes split the units; partial sums meet in shared memory. Accumulation is F32.
#include "common.glsl"

#include "moe_matvec.h"
const uint MATS = 1;  // matrices per workgroup (matvec_reduce.glsl)
layout(local_size_x_id = 0) in;

uint row0;  // the workgroup's first row

layout(binding = MoeMatvecBindings_w) readonly buffer Weights { uint w[]; };
#define WEIGHTS w
#include "weights.glsl"
layout(binding = MoeMatvecBindings_x) readonly buffer Input { float x[]; };
layout(binding = MoeMatvecBindings_y) writeonly buffer Output { float y[]; };  // [n_entries][rows]
layout(binding = MoeMatvecBindings_route) readonly buffer Route { int route[]; };
layout(binding = MoeMatvecBindings_bias) readonly buffer Bias { float bias[]; };  // [n_expert][rows] if has_bias
#include "moe_group.glsl"

uint entry[NB];  // the group's entries
uint ex, n_left;  // the expert; entries of the group that exist

// Output i of the workgroup: row i / NB of entry i % NB.
void emit(uint i, float sum) {
    uint r = row0 + i / NB, j = i % NB;
    if (r < p.rows && j < n_left) y[entry[j] * p.rows + r] = sum + (p.has_bias != 0u ? bias[ex * p.rows + r] : 0.0);
}
#include "matvec_reduce.glsl"

void main() {
    uint lane = gl_LocalInvocationID.x;
    row0 = flat_group() * ROWS;
    uint xi, begin, end;
    if (row0 >= p.rows || !chosen_expert(gl_WorkGroupID.z, p.n_entries, p.e0, p.n_here, xi, begin, end)) return;
    ex = p.e0 + xi;
    uint list = 2u * p.n_entries + p.n_expert + 1u;
    uint units = p.cols / 32u;
    uint wbase = xi * p.rows;  // this expert's first row in the binding
    for (uint g = begin; g < end; g += NB) {
        uint xbase[NB];
        n_left = end - g;
        [[unroll]] for (uint j = 0; j < NB; ++j) {
            // Past the group's end the last entry repeats: computed, never stored.
            entry[j] = uint(route[list + min(g + j, end - 1u)]);
            xbase[j] = (X_PER_ENTRY != 0u ? entry[j] : entry[j] / p.k) * p.cols;
        }
        [[unroll]] for (uint i = 0; i < ROWS * NB; ++i) acc[i] = 0.0;
        for (uint u = lane; u < units; u += WG) {
            vec4 xv[NB * 8u];
            [[unroll]] for (uint j = 0; j < NB; ++j) {
                [[unroll]] for (uint i = 0; i < 8u; ++i) {
                    uint e = xbase[j] + u * 32u + i * 4u;
                    xv[j * 8u + i] = vec4(x[e], x[e + 1u], x[e + 2u], x[e + 3u]);
                }
            }
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                vec4 wv[8];
                unit_weights32((wbase + min(row0 + r, p.rows - 1u)) * units + u, wv);
                [[unroll]] for (uint j = 0; j < NB; ++j) {
                    float sum = 0.0;
                    [[unroll]] for (uint i = 0; i < 8u; ++i) sum += dot(wv[i], xv[j * 8u + i]);
                    acc[r * NB + j] += sum;
                }
            }
        }
        reduce_acc(lane);
        barrier();
    }
}
