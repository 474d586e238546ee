#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// ids[row0 + r] = the index of the largest of the first `n` values of row r of x, the lowest
// index on ties, one workgroup per row (greedy decoding without reading the logits back). Rows
// may be longer than `n`: an embedding padded past the tokenizer's vocabulary has logits for
// ids without a token, which must never be chosen. Each lane scans 4 elements per loop
// iteration, in increasing order, keeping the first strictly larger value; the lanes' (value,
// index) pairs are then reduced in shared memory. NaNs are never chosen over a number; a row of
// NaNs gives 0.
#include "common.glsl"

#include "argmax.h"
layout(local_size_x_id = 0) in;

layout(binding = ArgmaxBindings_x) readonly buffer X { float x[]; };
layout(binding = ArgmaxBindings_ids) writeonly buffer Ids { int ids[]; };

const uint NONE = 0xffffffffu;

shared float best_v[WG];
shared uint best_i[WG];

// (v, i) beats (bv, bi): larger, or equal with a lower index; nothing (NONE) beats nothing.
bool beats(float v, uint i, float bv, uint bi) {
    return i != NONE && (bi == NONE || v > bv || (v == bv && i < bi));
}

void main() {
    uint r = flat_group();
    if (r >= p.rows) return;  // the whole workgroup
    uint lane = gl_LocalInvocationID.x;
    uint base = r * p.cols;
    float bv = uintBitsToFloat(0xff800000u);  // -inf
    uint bi = NONE;
    for (uint e = 4u * lane; e < p.n; e += 4u * WG) {
        [[unroll]] for (uint j = 0; j < 4u; ++j) {
            // Past the end, the last element again: same value, same index, never a new winner.
            uint i = min(e + j, p.n - 1u);
            float v = x[base + i];
            if (v > bv || (bi == NONE && !isnan(v))) {
                bv = v;
                bi = i;
            }
        }
    }
    best_v[lane] = bv;
    best_i[lane] = bi;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (lane < s && beats(best_v[lane + s], best_i[lane + s], best_v[lane], best_i[lane])) {
            best_v[lane] = best_v[lane + s];
            best_i[lane] = best_i[lane + s];
        }
        barrier();
    }
    if (lane == 0u) ids[p.row0 + r] = best_i[0] == NONE ? 0 : int(best_i[0]);
}
