#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Y[m][y_col0 + n] = sum_k X[m][k] * W[n][k] on cooperative matrices (prefill): matmul.comp's
// contract, with f16 operands and f32 accumulation. Workgroup (x, y) computes the BM x BN tile
// of Y at rows y BM, columns x BN (coopmat_tile.glsl), then the epilogue per element.
#include "common.glsl"
#include "weight_types.glsl"

#include "matmul_coopmat.h"
layout(local_size_x = COOPMAT_WG) in;

layout(binding = MatmulCoopmatBindings_w) readonly buffer Weights { uint w[]; };
#define WEIGHTS w
#include "weights.glsl"
layout(binding = MatmulCoopmatBindings_x) readonly buffer Input { float x[]; };
layout(binding = MatmulCoopmatBindings_y) buffer Output { float y[]; };
#define LINEAR_BIAS_BINDING MatmulCoopmatBindings_bias
#include "linear_epilogue.glsl"

uint tile_m;  // the workgroup's first row of X and Y

uint x_row(uint r) { return tile_m + r < p.m ? (tile_m + r) * p.k : 0xffffffffu; }
uint w_row(uint n) { return n; }
void emit(uint r, uint n, float v) { store((tile_m + r) * p.ldy + p.y_col0 + n, p.y_col0 + n, v); }
#include "coopmat_tile.glsl"

void main() {
    tile_m = gl_WorkGroupID.y * BM;
    coopmat_tile(gl_WorkGroupID.x * BN, p.n, p.k);
}
