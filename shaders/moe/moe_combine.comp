#version 450
#extension GL_GOOGLE_include_directive : require
// The MoE layer's output for each token: out[t][d] = sum_j w[t k + j] * y[t k + j][d], the
// expert outputs weighted by the router (moe_route.comp's weights), plus, for Qwen2-MoE's
// shared expert (has_shared), sigmoid(gate[t]) * shared[t][d].
#include "common.glsl"

layout(local_size_x = 64) in;

#include "moe_combine.h"

layout(binding = MoeCombineBindings_y) readonly buffer Y { float y[]; };  // [n_tokens * k][n]
layout(binding = MoeCombineBindings_route) readonly buffer Route { int route[]; };
layout(binding = MoeCombineBindings_shared) readonly buffer Shared { float shared_out[]; };  // [n_tokens][n]
layout(binding = MoeCombineBindings_shared_gate) readonly buffer SharedGate { float shared_gate[]; };  // [n_tokens]
layout(binding = MoeCombineBindings_out) writeonly buffer Out { float o[]; };  // [n_tokens][n]

void main() {
    uint i = flat_group() * 64u + gl_LocalInvocationID.x;
    if (i >= p.n_tokens * p.n) return;
    uint t = i / p.n, d = i % p.n;
    uint nk = p.n_tokens * p.k;
    float sum = 0.0;
    for (uint j = 0; j < p.k; ++j) {
        uint e = t * p.k + j;
        sum += intBitsToFloat(route[nk + e]) * y[e * p.n + d];
    }
    if (p.has_shared != 0u) sum += shared_out[i] / (1.0 + exp(-shared_gate[t]));
    o[i] = sum;
}
