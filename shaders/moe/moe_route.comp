#version 450
#extension GL_GOOGLE_include_directive : require
// Mixture-of-experts routing and token grouping for one step, in one workgroup:
//  1. per token t, from its router logits [n_tokens][n_expert], the k experts and weights in
//     the architecture's order: GATING 0 (Qwen2-MoE): softmax over all experts, then the k
//     largest probabilities (renormalised to sum 1 when `norm` is set); GATING 1 (GPT-OSS): the
//     k largest logits, then a softmax over those k. Ties go to the lower expert index.
//  2. grouping: the entries e = t * k + j are counted per expert, the counts prefix-summed and
//     the entries scattered, so each expert's tokens are contiguous and the expert kernels
//     read each selected expert's weights once for its whole group.
// The route buffer (int32 words, see gpu::MoeRoute): [0, nk) expert of entry e, [nk, 2nk) its
// weight (float bits), [2nk, 2nk + n_expert + 1) the offsets of each expert's group, then nk
// entries ordered by expert (by entry within an expert).
#include "common.glsl"

#include "moe_route.h"
layout(local_size_x = 64) in;

layout(binding = MoeRouteBindings_logits) readonly buffer Logits { float logits[]; };
layout(binding = MoeRouteBindings_route) buffer Route { int route[]; };

shared uint counts[256];

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint nk = p.n_tokens * p.k;
    for (uint t = lane; t < p.n_tokens; t += 64u) {
        uint base = t * p.n_expert;
        float top_v[MAXK];
        int top_e[MAXK];
        for (uint j = 0; j < p.k; ++j) {
            top_v[j] = -3.0e38;
            top_e[j] = -1;
        }
        // Selection by repeated maximum: k x n_expert comparisons, strict > keeps the lower
        // index on ties. Softmax is monotonic, so GATING 0 selects on logits too.
        for (uint j = 0; j < p.k; ++j) {
            for (uint e = 0; e < p.n_expert; ++e) {
                bool taken = false;
                for (uint i = 0; i < j; ++i) taken = taken || top_e[i] == int(e);
                float v = logits[base + e];
                if (!taken && (top_e[j] < 0 || v > top_v[j])) {
                    top_v[j] = v;
                    top_e[j] = int(e);
                }
            }
        }
        float w[MAXK];
        float sum = 0.0;
        if (GATING == GATING_SOFTMAX_TOPK) {
            // Probabilities of the chosen over all experts: exp(v - max) / sum_all.
            float all = 0.0;
            for (uint e = 0; e < p.n_expert; ++e) all += exp(logits[base + e] - top_v[0]);
            for (uint j = 0; j < p.k; ++j) {
                w[j] = exp(top_v[j] - top_v[0]) / all;
                sum += w[j];
            }
            if (p.norm != 0u)
                for (uint j = 0; j < p.k; ++j) w[j] /= sum;
        } else {
            for (uint j = 0; j < p.k; ++j) {
                w[j] = exp(top_v[j] - top_v[0]);
                sum += w[j];
            }
            for (uint j = 0; j < p.k; ++j) w[j] /= sum;
        }
        for (uint j = 0; j < p.k; ++j) {
            route[t * p.k + j] = top_e[j];
            route[nk + t * p.k + j] = floatBitsToInt(w[j]);
        }
    }
    memoryBarrierBuffer();
    barrier();
    // Count: lane e scans the entries for its experts.
    for (uint e = lane; e < p.n_expert; e += 64u) {
        uint c = 0u;
        for (uint i = 0; i < nk; ++i) c += route[i] == int(e) ? 1u : 0u;
        counts[e] = c;
    }
    barrier();
    if (lane == 0u) {
        uint at = 0u;
        for (uint e = 0; e < p.n_expert; ++e) {
            route[2u * nk + e] = int(at);
            at += counts[e];
        }
        route[2u * nk + p.n_expert] = int(at);
    }
    memoryBarrierBuffer();
    barrier();
    // Scatter: lane e writes its experts' entries in entry order.
    uint list = 2u * nk + p.n_expert + 1u;
    for (uint e = lane; e < p.n_expert; e += 64u) {
        uint at = uint(route[2u * nk + e]);
        for (uint i = 0; i < nk; ++i)
            if (route[i] == int(e)) route[list + at++] = int(i);
    }
}
