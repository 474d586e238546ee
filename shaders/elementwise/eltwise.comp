#version 450
#extension GL_GOOGLE_include_directive : require
// Element-wise operations, chosen by the specialization constant OP:
//   0 add:    y = a + b        2 silu: y = a * sigmoid(a)
//   1 mul:    y = a * b        3 gelu: y = GELU(a), tanh form (GPT-2, ggml)
//   4 swiglu: y = silu(a) * b
//   5 swiglu_oai (GPT-OSS): g = min(a, 7), u = clamp(b, -7, 7), y = (u + 1) * g * sigmoid(1.702 g)
//   6 geglu (Gemma): y = gelu(a) * b, GELU's tanh form
//   7 softcap (Gemma 2's final logits): y = param * tanh(a / param)
// b is read at i % nb, so a vector can be broadcast over rows (a bias, a gain); unary ops
// ignore it. y may alias a or b.
#include "common.glsl"

#include "eltwise.h"
layout(local_size_x = 64) in;

layout(binding = EltwiseBindings_a) readonly buffer A { float a[]; };
layout(binding = EltwiseBindings_b) readonly buffer B { float b[]; };
layout(binding = EltwiseBindings_y) writeonly buffer Y { float y[]; };

float silu(float v) { return v / (1.0 + exp(-v)); }

float gelu(float v) {
    // tanh overflows to inf/inf in some drivers' exp-based tanh: its argument is clamped
    // where tanh is already +-1 in float.
    float t = clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -10.0, 10.0);
    return 0.5 * v * (1.0 + tanh(t));
}

void main() {
    uint i = flat_group() * 64u + gl_LocalInvocationID.x;
    if (i >= p.n) return;
    float av = a[i];
    if (OP == OP_SILU) {
        y[i] = silu(av);
    } else if (OP == OP_GELU) {
        y[i] = gelu(av);
    } else if (OP == OP_SOFTCAP) {
        // Clamped where tanh is +-1 in float, as gelu's argument.
        y[i] = p.param * tanh(clamp(av / p.param, -10.0, 10.0));
    } else {
        float bv = b[i % p.nb];
        if (OP == OP_SWIGLU_OAI) {
            float g = min(av, 7.0), u = clamp(bv, -7.0, 7.0);
            y[i] = (u + 1.0) * g / (1.0 + exp(-1.702 * g));
        } else if (OP == OP_GEGLU) {
            y[i] = gelu(av) * bv;
        } else {
            y[i] = OP == OP_ADD ? av + bv : (OP == OP_MUL ? av * bv : silu(av) * bv);
        }
    }
}
