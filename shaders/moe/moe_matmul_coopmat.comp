#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// moe_matvec.comp's expert products on cooperative matrices (prefill): for each entry e routed
// to expert x, y[e][r] = sum_c W_x[r][c] * in_e[c] (+ bias_x[r]), in_e the token's row
// (X_PER_ENTRY 0) or the entry's own (1). Each chosen expert's group of entries is cut into
// tiles of BM (moe_group.glsl's expert_tile); workgroup (x, y) computes output rows
// [x BN, x BN + BN) of tile y, its BM entries' input rows gathered as X's rows
// (coopmat_tile.glsl), so each expert's weights are read once per BM of its entries. The grid
// has a row of workgroups for as many tiles as any routing can make; those past the last exit.
#include "common.glsl"
#include "weight_types.glsl"

#include "moe_matmul_coopmat.h"
layout(local_size_x = COOPMAT_WG) in;

layout(binding = MoeMatmulCoopmatBindings_w) readonly buffer Weights { uint w[]; };
#define WEIGHTS w
#include "weights.glsl"
layout(binding = MoeMatmulCoopmatBindings_x) readonly buffer Input { float x[]; };
layout(binding = MoeMatmulCoopmatBindings_y) writeonly buffer Output { float y[]; };  // [n_entries][rows]
layout(binding = MoeMatmulCoopmatBindings_route) readonly buffer Route { int route[]; };
layout(binding = MoeMatmulCoopmatBindings_bias) readonly buffer Bias { float bias[]; };  // [n_expert][rows] if has_bias
#include "moe_group.glsl"

shared uint in_row[BM];  // where each tile row's input starts in x (NO_ROW: none)
shared uint out_entry[BM];
uint ex;     // the expert
uint wbase;  // its first row in the binding

uint x_row(uint r) { return in_row[r]; }
uint w_row(uint n) { return wbase + n; }
void emit(uint r, uint n, float v) {
    y[out_entry[r] * p.rows + n] = v + (p.has_bias != 0u ? bias[ex * p.rows + n] : 0.0);
}
#include "coopmat_tile.glsl"

void main() {
    uint xi, begin, end;
    if (!expert_tile(gl_WorkGroupID.y, BM, p.n_entries, p.e0, p.n_here, xi, begin, end)) return;
    ex = p.e0 + xi;
    wbase = xi * p.rows;
    uint list = 2u * p.n_entries + p.n_expert + 1u;
    for (uint r = gl_LocalInvocationIndex; r < BM; r += WG) {
        uint e = begin + r < end ? uint(route[list + begin + r]) : 0u;
        out_entry[r] = e;
        in_row[r] = begin + r < end ? (X_PER_ENTRY != 0u ? e : e / p.k) * p.cols : NO_ROW;
    }
    barrier();
    coopmat_tile(gl_WorkGroupID.x * BN, p.rows, p.cols);
}
