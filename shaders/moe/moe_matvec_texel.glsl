// The body of moe_matvec_texel.comp and moe_matvec_texel_subgroup.comp (which differ only in how
// a workgroup's lanes add up their partial sums: matvec_reduce.glsl).
// moe_matvec.comp's grouped expert products with the weights and inputs read as texels (16
// bytes per load: texel_weights.glsl), as the dense matvec_texel.glsl reads them: the fast path
// for every type the loader leaves in a texel layout. For each entry e (token t = e / k, its
// j-th expert) routed to expert x, y[e][r] = sum_c W_x[r][c] in[c] (+ bias_x[r]), `in` the
// token's row of X (X_PER_ENTRY 0) or the entry's own row (1).
// A workgroup owns ROWS rows of one chosen expert (moe_group.glsl) and walks that expert's
// group NB entries at a time, so each chosen expert's weights are read once per NB entries.
// Lanes take the units (32 weights) round-robin; a unit's scale and offset apply to its dot
// product as a whole. Partial sums meet through matvec_reduce.glsl. Accumulation is F32.
// With SWIGLU the experts' gate (W) and up (W2) projections are read in one pass over the
// input, each with its bias, and y is their activation: 1 silu(gate) up; 2 GPT-OSS's clamped
// form (eltwise.comp's swiglu_oai).
#include "common.glsl"

#include "moe_matvec_texel.h"
const uint MATS = SWIGLU != SWIGLU_NONE ? 2u : 1u;  // matrices per workgroup (matvec_reduce.glsl)
layout(local_size_x_id = 0) in;

layout(binding = MoeMatvecTexelBindings_w) uniform utextureBuffer W;  // RGBA32UI: experts [e0, e0 + n_here)
layout(binding = MoeMatvecTexelBindings_x) uniform textureBuffer X;   // RGBA32F, [n_tokens or n_entries][cols]
layout(binding = MoeMatvecTexelBindings_y) writeonly buffer Output { float y[]; };  // [n_entries][rows]
layout(binding = MoeMatvecTexelBindings_route) readonly buffer Route { int route[]; };
layout(binding = MoeMatvecTexelBindings_bias) readonly buffer Bias { float bias[]; };  // [n_expert][rows] if has_bias
layout(binding = MoeMatvecTexelBindings_w2) uniform utextureBuffer W2;                // SWIGLU: the up projections
layout(binding = MoeMatvecTexelBindings_bias2) readonly buffer Bias2 { float bias2[]; };  // SWIGLU, if has_bias
#include "moe_group.glsl"

uint row0;        // the workgroup's first row
uint ex, n_left;  // the expert (in the tensor); entries of the group from the current one on
uint entry[NB];   // the entries being worked on

float gate_sum;  // SWIGLU: the gate output of the row being emitted

// Output i of the workgroup: matrix i % MATS of row i / (NB MATS) of entry i / MATS % NB.
void emit(uint i, float sum) {
    uint m = i % MATS, r = row0 + i / (NB * MATS), j = (i / MATS) % NB;
    uint b = ex * p.rows + min(r, p.rows - 1u);
    if (p.has_bias != 0u) sum += m == 0u ? bias[b] : bias2[b];
    if (SWIGLU != SWIGLU_NONE && m == 0u) {
        gate_sum = sum;  // the up output follows from the same lane (matvec_reduce.glsl)
        return;
    }
    if (SWIGLU == SWIGLU_PLAIN) {
        sum *= gate_sum / (1.0 + exp(-gate_sum));
    } else if (SWIGLU == SWIGLU_OAI) {
        float g = min(gate_sum, 7.0);
        sum = (clamp(sum, -7.0, 7.0) + 1.0) * g / (1.0 + exp(-1.702 * g));
    }
    if (r < p.rows && j < n_left) y[entry[j] * p.rows + r] = sum;
}
#include "matvec_reduce.glsl"

// Texel t of matrix m (a constant once the loops over matrices are unrolled).
uvec4 fetch(uint m, uint t) { return m == 0u ? texelFetch(W, int(t)) : texelFetch(W2, int(t)); }
#include "texel_weights.glsl"

#ifdef MATVEC_SUBGROUP_REDUCE
// One entry at a time (NB 1) and at most X_UNITS units of x per lane (X_UNITS > 0): the lanes
// keep their units of the entry's x in registers and the workgroup walks its ROWS rows two at
// a time, each row's texels (and its up projection's) loaded before any arithmetic, one
// subgroupAdd per row (texel_walk.glsl, as matvec_texel.glsl's walk_rows). The weights stream in
// order, which on lavapipe took GPT-OSS's one-token expert products from ~70 to ~45 ms per
// token and Qwen2-MoE's from ~25 to ~14.
const bool SPLIT_TAIL = false;  // texel_walk.glsl
#include "texel_walk.glsl"

void walk_rows(uint lane, uint first, uint xb) {
    uint units = p.cols / 32u;
    [[unroll]] for (uint i = 0; i < X_UNITS; ++i) {
        uint k = min(lane + i * WG, units - 1u);
        vec4 xs = vec4(0.0);
        [[unroll]] for (uint e = 0; e < 8u; ++e) {
            xr[8u * i + e] = texelFetch(X, int(xb + 8u * k + e));
            xs += xr[8u * i + e];
        }
        xro[i] = OFFSET * dot(xs, vec4(1.0));
    }
    walk_steps(lane, first, 0u);
}
#endif

void main() {
    uint lane = gl_LocalInvocationID.x;
    row0 = flat_group() * ROWS;
    uint x, begin, end;
    if (row0 >= p.rows || !chosen_expert(gl_WorkGroupID.z, p.n_entries, p.e0, p.n_here, x, begin, end)) return;
    ex = p.e0 + x;
    uint list = 2u * p.n_entries + p.n_expert + 1u;
    uint units = p.cols / 32u;
    uint first = x * p.rows * units;  // the expert's first unit in the binding
    for (uint g = begin; g < end; g += NB) {
        uint xbase[NB];
        n_left = end - g;
        [[unroll]] for (uint j = 0; j < NB; ++j) {
            // Past the group's end the last entry repeats: computed, never stored.
            entry[j] = uint(route[list + min(g + j, end - 1u)]);
            xbase[j] = (X_PER_ENTRY != 0u ? entry[j] : entry[j] / p.k) * (p.cols / 4u);
        }
#ifdef MATVEC_SUBGROUP_REDUCE
        if (X_UNITS > 0u) {
            walk_rows(lane, first, xbase[0]);
            continue;
        }
#endif
        [[unroll]] for (uint i = 0; i < OUTS; ++i) acc[i] = 0.0;
        for (uint u = lane; u < units; u += WG) {
            vec4 xv[NB * 8u];
            float xoff[NB];  // OFFSET times the sum of the unit of x (texel_weights.glsl)
            [[unroll]] for (uint j = 0; j < NB; ++j) {
                vec4 xs = vec4(0.0);
                [[unroll]] for (uint i = 0; i < 8u; ++i) {
                    xv[j * 8u + i] = texelFetch(X, int(xbase[j] + 8u * u + i));
                    xs += xv[j * 8u + i];
                }
                xoff[j] = OFFSET * dot(xs, vec4(1.0));
            }
            [[unroll]] for (uint r = 0; r < ROWS; ++r) {
                [[unroll]] for (uint m = 0; m < MATS; ++m) {
                    vec4 wv[8];
                    float d, dm;
                    // Rows past the end repeat the last row: no branch in the loop, never stored.
                    unit_weights(m, first + min(row0 + r, p.rows - 1u) * units + u, wv, d, dm);
                    [[unroll]] for (uint j = 0; j < NB; ++j) {
                        float sum = 0.0, sum_hi = 0.0;
                        [[unroll]] for (uint i = 0; i < 8u; ++i) {
                            if (HALVES && i >= 4u)
                                sum_hi += dot(wv[i], xv[j * 8u + i]);
                            else
                                sum += dot(wv[i], xv[j * 8u + i]);
                        }
                        acc[(r * NB + j) * MATS + m] += unit_value(sum, sum_hi, d, dm, xoff[j]);
                    }
                }
            }
        }
        reduce_acc(lane);
        barrier();
    }
}
