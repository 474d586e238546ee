#version 450
#extension GL_GOOGLE_include_directive : require
// y = (x - mean) / sqrt(var + eps) * w + b, one workgroup per row. Stays accurate when
// |mean| >> std: the mean is summed relative to the row's first element, and the variance is
// taken of the centred values (a second pass). y may alias x.
#include "common.glsl"

#include "layer_norm.h"
layout(local_size_x_id = 0) in;
#include "reduce.glsl"

layout(binding = LayerNormBindings_x) readonly buffer Input { float x[]; };
layout(binding = LayerNormBindings_weight) readonly buffer Weight { float w[]; };
layout(binding = LayerNormBindings_bias) readonly buffer Bias { float b[]; };
layout(binding = LayerNormBindings_y) writeonly buffer Output { float y[]; };

void main() {
    uint base = flat_group() * p.cols;
    uint lane = gl_LocalInvocationID.x;
    float shift = x[base];
    float sum = 0.0;
    for (uint c = lane; c < p.cols; c += WG) sum += x[base + c] - shift;
    float mean = shift + workgroup_sum(sum) / float(p.cols);
    float sq = 0.0;
    for (uint c = lane; c < p.cols; c += WG) {
        float d = x[base + c] - mean;
        sq += d * d;
    }
    float scale = inversesqrt(workgroup_sum(sq) / float(p.cols) + p.eps);
    for (uint c = lane; c < p.cols; c += WG) y[base + c] = (x[base + c] - mean) * scale * w[c] + b[c];
}
