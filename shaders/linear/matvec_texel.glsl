// The body of matvec_texel.comp and matvec_texel_subgroup.comp (which differ only in how a
// workgroup's lanes add up their partial sums: matvec_reduce.glsl). The including file gives
// the #version and the extensions.
#include "common.glsl"

#include "matvec_texel.h"
layout(local_size_x_id = 0) in;

const bool GATED = GLU != GLU_NONE;
const uint MATS = GATED ? 2u : 1u;  // matrices per workgroup (matvec_reduce.glsl)

layout(binding = MatvecTexelBindings_w) uniform utextureBuffer W;  // RGBA32UI
layout(binding = MatvecTexelBindings_x) uniform textureBuffer X;   // RGBA32F, [n][cols]
// Storing K and V itself, the last workgroup of a head reads its stacked outputs back.
#ifdef MATVEC_KV_STORE
#define OUTPUT coherent
#define STACKED_OUTPUT coherent
#else
#define OUTPUT
#define STACKED_OUTPUT writeonly
#endif
layout(binding = MatvecTexelBindings_y) OUTPUT buffer Output { float y[]; };  // [n][y_stride]
#define LINEAR_BIAS_BINDING MatvecTexelBindings_bias
#include "linear_epilogue.glsl"
layout(binding = MatvecTexelBindings_w2) uniform utextureBuffer W2;  // RGBA32UI, GATED only
layout(binding = MatvecTexelBindings_g) uniform textureBuffer G;    // RGBA32F, [cols], NORM only
layout(binding = MatvecTexelBindings_yk) STACKED_OUTPUT buffer OutputK { float yk[]; };  // QKV only
layout(binding = MatvecTexelBindings_yv) STACKED_OUTPUT buffer OutputV { float yv[]; };

uint row0, b0;  // the workgroup's first row and first vector

float gate_sum;  // GATED: the gate output of the row being emitted

// GELU's tanh form, as eltwise.comp computes it (its argument clamped where tanh is +-1).
float gelu(float v) {
    float t = clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -10.0, 10.0);
    return 0.5 * v * (1.0 + tanh(t));
}
float nscale[NB];  // NORM: each vector's 1 / sqrt(mean(x^2) + eps)

// Output i of the workgroup: matrix i % MATS of row i / (NB MATS) of vector i / MATS % NB.
void emit(uint i, float sum) {
    if (NORM) sum *= nscale[(i / MATS) % NB];
    uint r = row0 + i / (NB * MATS), b = b0 + (i / MATS) % NB;
    if (GATED && i % 2u == 0u) {
        gate_sum = sum;  // the up output follows from the same lane (matvec_reduce.glsl)
        return;
    }
    if (GLU == GLU_SWIGLU) sum *= gate_sum / (1.0 + exp(-gate_sum));
    if (GLU == GLU_GEGLU) sum *= gelu(gate_sum);
    if (r >= p.rows || b >= p.n) return;
    uint row = p.y_offset + r;  // in the whole matrix
    if (!QKV) {
        store(b * p.y_stride + row, row, sum);
        return;
    }
    if ((EPILOGUE & EPILOGUE_BIAS) != 0u) sum += bias[row];
    uint kv_rows = p.v_row0 - p.k_row0;
    if (row < p.k_row0)
        y[b * p.k_row0 + row] = sum;
    else if (row < p.v_row0)
        yk[b * kv_rows + row - p.k_row0] = sum;
    else
        yv[b * kv_rows + row - p.v_row0] = sum;
}
#include "matvec_reduce.glsl"
#ifdef MATVEC_KV_STORE
#include "matvec_kv_epilogue.glsl"
#endif

// Texel t of matrix m (a constant once the loops over matrices are unrolled).
uvec4 fetch(uint m, uint t) { return m == 0u ? texelFetch(W, int(t)) : texelFetch(W2, int(t)); }
#include "texel_weights.glsl"

// The x of the unit being worked on, for each vector of the batch, and OFFSET times its sum.
uint xbase[NB];
vec4 xv[NB * 8u];
float xoff[NB];

float sq[NB];  // NORM: the lane's sums of squares of the units of x it counted

// Unit k of x for every vector; `count`: add its squares to sq (each unit is counted by one
// lane only).
void load_x(uint k, bool count) {
    vec4 g[8];
    [[unroll]] for (uint i = 0; i < 8u; ++i) g[i] = NORM ? texelFetch(G, int(8u * k + i)) : vec4(1.0);
    [[unroll]] for (uint j = 0; j < NB; ++j) {
        vec4 xs = vec4(0.0);
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            xv[j * 8u + i] = texelFetch(X, int(xbase[j] + 8u * k + i));
            if (NORM) {
                sq[j] += count ? dot(xv[j * 8u + i], xv[j * 8u + i]) : 0.0;
                xv[j * 8u + i] *= g[i];
            }
            xs += xv[j * 8u + i];
        }
        xoff[j] = OFFSET * dot(xs, vec4(1.0));
    }
}

// NORM: nscale from the sums of squares of each vector of x, every lane with the same totals.
#ifdef MATVEC_SUBGROUP_REDUCE
shared float subgroup_squares[SUBGROUPS > 1u ? NB * SUBGROUPS : 1u];

void add_lanes(inout float v[NB]) {
    [[unroll]] for (uint j = 0; j < NB; ++j) v[j] = subgroupAdd(v[j]);
    if (SUBGROUPS == 1u) return;
    [[unroll]] for (uint j = 0; j < NB; ++j)
        if (subgroupElect()) subgroup_squares[j * SUBGROUPS + gl_SubgroupID] = v[j];
    barrier();
    [[unroll]] for (uint j = 0; j < NB; ++j) {
        v[j] = 0.0;
        for (uint g = 0; g < gl_NumSubgroups; ++g) v[j] += subgroup_squares[j * SUBGROUPS + g];
    }
}
#else
shared float lane_sums[NB * WG];

void add_lanes(inout float v[NB]) {
    uint lane = gl_LocalInvocationID.x;
    [[unroll]] for (uint j = 0; j < NB; ++j) lane_sums[j * WG + lane] = v[j];
    barrier();
    [[unroll]] for (uint j = 0; j < NB; ++j) {
        v[j] = 0.0;
        for (uint l = 0; l < WG; ++l) v[j] += lane_sums[j * WG + l];
    }
}
#endif

void norm_scales() {
    add_lanes(sq);
    [[unroll]] for (uint j = 0; j < NB; ++j) nscale[j] = inversesqrt(sq[j] / float(p.cols) + p.eps);
}

// Unit k of `row` of matrix m times vector j of the batch, scaled (d) and offset (xoff) as
// unit_weights says.
float unit_dot(uint m, uint row, uint units, uint k, uint j) {
    vec4 wv[8];
    float d, dm;
    // Rows past the end repeat the last row: no branch in the loop, never stored.
    unit_weights(m, min(row, p.rows - 1u) * units + k, wv, d, dm);
    float sum = 0.0, sum_hi = 0.0;
    [[unroll]] for (uint i = 0; i < 8u; ++i) {
        if (HALVES && i >= 4u)
            sum_hi += dot(wv[i], xv[j * 8u + i]);
        else
            sum += dot(wv[i], xv[j * 8u + i]);
    }
    return unit_value(sum, sum_hi, d, dm, xoff[j]);
}

#ifdef MATVEC_SUBGROUP_REDUCE
// Short rows, one vector (X_UNITS > 0): each lane loads its units of x once into registers
// and the workgroup walks its rows one after another, adding each row up with one subgroupAdd.
// The weights then stream through memory in order. main's round-robin over the rows has a
// workgroup read ROWS rows side by side, 272 bytes of each per round: from DRAM that ran at
// half the speed on lavapipe (the 151,936 x 896 output head: 56 -> 21 ms per token), while
// the rows' partial sums it keeps in registers buy nothing for a single vector. The rows go
// in pairs; with SPLIT_TAIL the last half round takes the tail units of both rows.
#include "texel_walk.glsl"

void walk_rows(uint lane) {
    uint units = p.cols / 32u;
    const uint WHOLE = SPLIT_TAIL ? X_UNITS - 1u : X_UNITS;  // rounds of a unit per lane at most
    uint tail = units - WG / 2u + lane % (WG / 2u);           // SPLIT_TAIL: the lane's tail unit
    [[unroll]] for (uint i = 0; i < X_UNITS; ++i) {
        load_x(i < WHOLE ? min(lane + i * WG, units - 1u) : tail,
               i < WHOLE ? lane + i * WG < units : lane < WG / 2u);
        [[unroll]] for (uint e = 0; e < 8u; ++e) xr[8u * i + e] = xv[e];
        xro[i] = xoff[0];
    }
    if (NORM) norm_scales();
    walk_steps(lane, 0u, tail);
}
#endif

const uint HALF = ROWS / 2u;

// The rows side by side: each lane takes units of K in turn, for all ROWS rows.
void round_robin(uint lane) {
    uint units = p.cols / 32u;
    [[unroll]] for (uint i = 0; i < OUTS; ++i) acc[i] = 0.0;
    // Units that are whole rounds of the lanes plus half a round (Qwen2.5-0.5B's 896 columns:
    // 28 units on 8 lanes) end with a half round: there each unit goes to two lanes, each
    // taking half the rows, so the rows cost 3.5 rounds instead of 4 with half the lanes idle.
    // The host sets SPLIT_TAIL for such widths (and even ROWS and WG).
    uint whole = SPLIT_TAIL ? units - WG / 2u : units;
    for (uint k = lane; k < whole; k += WG) {
        load_x(k, true);
        [[unroll]] for (uint r = 0; r < ROWS; ++r)
            [[unroll]] for (uint j = 0; j < NB; ++j)
                [[unroll]] for (uint m = 0; m < MATS; ++m) acc[(r * NB + j) * MATS + m] += unit_dot(m, row0 + r, units, k, j);
    }
    if (SPLIT_TAIL) {
        uint half_ = lane / (WG / 2u), k = whole + lane % (WG / 2u);
        load_x(k, half_ == 0u);
        // Static accumulator indices: lane-dependent selects rather than a lane-dependent
        // index, which llvmpipe would put in memory.
        [[unroll]] for (uint r = 0; r < HALF; ++r) {
            [[unroll]] for (uint j = 0; j < NB; ++j) {
                [[unroll]] for (uint m = 0; m < MATS; ++m) {
                    float v = unit_dot(m, row0 + half_ * HALF + r, units, k, j);
                    acc[(r * NB + j) * MATS + m] += half_ == 0u ? v : 0.0;
                    acc[((HALF + r) * NB + j) * MATS + m] += half_ == 0u ? 0.0 : v;
                }
            }
        }
    }
    if (NORM) norm_scales();
    reduce_acc(lane);
}

void main() {
    uint lane = gl_LocalInvocationID.x;
    row0 = flat_group() * ROWS;
    b0 = gl_WorkGroupID.z * NB;
    // Vectors past the end of the batch repeat the last one: computed, never stored.
    [[unroll]] for (uint j = 0; j < NB; ++j) xbase[j] = min(b0 + j, p.n - 1u) * (p.cols / 4u);
    [[unroll]] for (uint j = 0; j < NB; ++j) sq[j] = 0.0;
#ifdef MATVEC_SUBGROUP_REDUCE
    if (X_UNITS > 0u)
        walk_rows(lane);
    else
#endif
        round_robin(lane);
#ifdef MATVEC_KV_STORE
    kv_epilogue(lane);
#endif
}
