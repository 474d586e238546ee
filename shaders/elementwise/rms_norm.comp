#version 450
#extension GL_GOOGLE_include_directive : require
// y = x / sqrt(mean(x^2) + eps) * w, one workgroup per row. y may alias x.
#include "common.glsl"

#include "rms_norm.h"
layout(local_size_x_id = 0) in;
#include "reduce.glsl"

layout(binding = RmsNormBindings_x) readonly buffer Input { float x[]; };
layout(binding = RmsNormBindings_weight) readonly buffer Weight { float w[]; };
layout(binding = RmsNormBindings_y) writeonly buffer Output { float y[]; };

void main() {
    uint base = flat_group() * p.cols;
    uint lane = gl_LocalInvocationID.x;
    float sum = 0.0;
    for (uint c = lane; c < p.cols; c += WG) {
        float v = x[base + c];
        sum += v * v;
    }
    float scale = inversesqrt(workgroup_sum(sum) / float(p.cols) + p.eps);
    for (uint c = lane; c < p.cols; c += WG) y[base + c] = x[base + c] * scale * w[c];
}
