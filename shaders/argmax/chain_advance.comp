#version 450
#extension GL_GOOGLE_include_directive : require
// Between two decode steps chained in one submission: each sequence's sampled token (the
// argmax kernel's output) becomes the next step's input token, is kept in the readback buffer
// for the host, and the sequence moves one position on. The next step's first visible key
// position follows the same rule as the host's (Session::step): the sinks, then the most
// recent `window` positions.
#include "common.glsl"

#include "chain_advance.h"

layout(local_size_x = 64) in;

layout(binding = ChainAdvanceBindings_ids) readonly buffer Ids { int ids[]; };  // the step's argmax per sequence
layout(binding = ChainAdvanceBindings_tokens) writeonly buffer Tokens { int tokens[]; };
layout(binding = ChainAdvanceBindings_positions) buffer Positions { int positions[]; };
layout(binding = ChainAdvanceBindings_kv_begin) writeonly buffer KvBegin { int kv_begin[]; };
layout(binding = ChainAdvanceBindings_out) writeonly buffer Out { int out_ids[]; };  // [step][sequence]

void main() {
    uint r = flat_group() * 64u + gl_LocalInvocationID.x;
    if (r >= p.n) return;
    int id = ids[r];
    out_ids[p.step * p.n + r] = id;
    tokens[r] = id;
    uint pos = uint(positions[r]) + 1u;
    positions[r] = int(pos);
    uint begin = pos + 1u > p.window ? pos + 1u - p.window : 0u;
    kv_begin[r] = int(max(begin, p.n_sink));
}
