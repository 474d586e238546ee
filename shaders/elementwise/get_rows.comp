#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// out[t][c] = table[ids[t]][c] for the ids that fall in this chunk of the table
// [row0, row0 + rows); a table of any weight type (WTYPE), F32 out. An invocation writes one
// value, or 8 of a block-quantized row (decoded together). The first chunk also zeroes the rows
// of ids outside the whole table, so a bad id never reads out of bounds or leaves garbage.
// Every value is multiplied by p.scale (1, or Gemma's embedding scale).
#include "common.glsl"
#include "weight_types.glsl"

#include "get_rows.h"
layout(local_size_x = 64) in;

layout(binding = GetRowsBindings_table) readonly buffer Table { uint table[]; };
#define WEIGHTS table
#include "weights.glsl"
layout(binding = GetRowsBindings_ids) readonly buffer Ids { int ids[]; };
layout(binding = GetRowsBindings_out) writeonly buffer Out { float o[]; };

void main() {
    const uint PER = WTYPE >= WT_FIRST_BLOCK_TYPE ? 8u : 1u;
    uint idx = (flat_group() * 64u + gl_LocalInvocationID.x) * PER;
    if (idx >= p.n_ids * p.cols) return;
    uint t = idx / p.cols;
    uint c = idx % p.cols;
    int id = ids[t];
    if (id >= int(p.row0) && id < int(p.row0 + p.rows)) {
        uint e = uint(id - int(p.row0)) * p.cols + c;
        if (PER == 1u) {
            o[idx] = weight_at(e) * p.scale;
        } else {
            vec4 a, b;
            unit_weights8(e >> 5u, (e >> 3u) & 3u, a, b);
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                o[idx + i] = a[i] * p.scale;
                o[idx + 4u + i] = b[i] * p.scale;
            }
        }
    } else if (p.row0 == 0u && (id < 0 || id >= int(p.total_rows))) {
        [[unroll]] for (uint i = 0; i < PER; ++i) o[idx + i] = 0.0;
    }
}
