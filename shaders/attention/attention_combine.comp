#version 450
#extension GL_GOOGLE_include_directive : require
// Split-K attention, second pass: out[t][h] merges the SPLITS slices attention.comp left in
// `part` for (token t, query head h): with M the largest slice max (and the sink's logit),
// out = sum_s exp(m_s - M) acc_s / (sum_s exp(m_s - M) l_s + exp(sink - M)). Zeros when no
// slice saw a key. One workgroup per (token, head), a lane per 4 dimensions.
#include "common.glsl"

#include "attention_combine.h"
layout(local_size_x = 32) in;

const uint HD4 = HEAD_DIM / 4u;
const float NO_MAX = -3.0e38;

layout(binding = AttentionCombineBindings_part) readonly buffer Part { vec4 part[]; };  // as attention.comp writes it
layout(binding = AttentionCombineBindings_sinks) readonly buffer Sinks { float sinks[]; };
layout(binding = AttentionCombineBindings_out) writeonly buffer Out { vec4 o4[]; };  // [n_tokens][n_heads][HEAD_DIM]

void main() {
    uint th = flat_group();
    if (th >= p.n) return;
    uint base = th * SPLITS * (HD4 + 1u);
    float sink = p.has_sinks != 0u ? sinks[th % p.n_heads] : NO_MAX;
    float big = sink;
    for (uint s = 0; s < SPLITS; ++s) big = max(big, part[base + s * (HD4 + 1u) + HD4].x);
    float sum = p.has_sinks != 0u ? exp(sink - big) : 0.0;
    for (uint s = 0; s < SPLITS; ++s) {
        vec4 ml = part[base + s * (HD4 + 1u) + HD4];
        sum += ml.y * exp(ml.x - big);
    }
    for (uint col = gl_LocalInvocationID.x; col < HD4; col += 32u) {
        vec4 v = vec4(0.0);
        for (uint s = 0; s < SPLITS; ++s)
            v += part[base + s * (HD4 + 1u) + col] * exp(part[base + s * (HD4 + 1u) + HD4].x - big);
        o4[th * HD4 + col] = sum > 0.0 ? v / sum : vec4(0.0);
    }
}
