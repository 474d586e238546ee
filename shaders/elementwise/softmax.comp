#version 450
#extension GL_GOOGLE_include_directive : require
// y = softmax(x * scale) over each row, one workgroup per row (max-subtracted). y may alias x.
#include "common.glsl"

#include "softmax.h"
layout(local_size_x_id = 0) in;
#include "reduce.glsl"

layout(binding = SoftmaxBindings_x) readonly buffer Input { float x[]; };
layout(binding = SoftmaxBindings_y) buffer Output { float y[]; };

void main() {
    uint base = flat_group() * p.cols;
    uint lane = gl_LocalInvocationID.x;
    float m = -3.402823466e38;
    for (uint c = lane; c < p.cols; c += WG) m = max(m, x[base + c] * p.scale);
    m = workgroup_max(m);
    float sum = 0.0;
    for (uint c = lane; c < p.cols; c += WG) {
        float e = exp(x[base + c] * p.scale - m);
        y[base + c] = e;
        sum += e;
    }
    float inv = 1.0 / workgroup_sum(sum);
    for (uint c = lane; c < p.cols; c += WG) y[base + c] *= inv;
}
