#version 450
#extension GL_GOOGLE_include_directive : require
// Rotary position embedding, in place, on x[token][head][head_dim]. The cos/sin of every
// (position, pair) come from a table computed once per model; each token's position comes
// from a buffer, so a recorded command buffer serves every step.
// NEOX = 0: pairs (2i, 2i+1) (GGUF llama). NEOX = 1: pairs (i, i + rot_dim/2) (Qwen2, GPT-OSS).
// Dimensions at and past rot_dim are left as they are.
#include "common.glsl"

#include "rope.h"
layout(local_size_x = 64) in;

layout(binding = RopeBindings_x) buffer Data { float x[]; };
layout(binding = RopeBindings_table) readonly buffer Table { vec2 cos_sin[]; };  // [n_pos][rot_dim / 2]
layout(binding = RopeBindings_positions) readonly buffer Positions { int pos[]; };    // [n_tokens]

void main() {
    uint half_dim = p.rot_dim / 2u;
    uint idx = flat_group() * 64u + gl_LocalInvocationID.x;
    if (idx >= p.n_tokens * p.n_heads * half_dim) return;
    uint i = idx % half_dim;
    uint th = idx / half_dim;  // token * n_heads + head
    uint t = th / p.n_heads;
    // A position outside the table would read out of bounds; clamp (the engine never asks).
    uint position = uint(clamp(pos[t], 0, int(p.n_pos) - 1));
    vec2 cs = cos_sin[position * half_dim + i];
    uint base = th * p.head_dim;
    uint a = NEOX == 1u ? base + i : base + 2u * i;
    uint b = NEOX == 1u ? base + i + half_dim : base + 2u * i + 1u;
    float x0 = x[a];
    float x1 = x[b];
    x[a] = x0 * cs.x - x1 * cs.y;
    x[b] = x0 * cs.y + x1 * cs.x;
}
