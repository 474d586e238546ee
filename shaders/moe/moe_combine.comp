#version 450
#extension GL_GOOGLE_include_directive : require
// The MoE layer's output for each token: out[t][d] = sum_j w[t k + j] * y[t k + j][d], the
// expert outputs weighted by the router (moe_route.comp's weights), plus, for Qwen2-MoE's
// shared expert (has_shared), sigmoid(gate[t]) * shared[t][d].
#include "common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Y { float y[]; };  // [n_tokens * k][n]
layout(binding = 1) readonly buffer Route { int route[]; };
layout(binding = 2) readonly buffer Shared { float shared_out[]; };  // [n_tokens][n]
layout(binding = 3) readonly buffer SharedGate { float shared_gate[]; };  // [n_tokens]
layout(binding = 4) writeonly buffer Out { float o[]; };  // [n_tokens][n]
#include "moe_combine.h"

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
