#version 450
#extension GL_GOOGLE_include_directive : require
// out[t][c] = table[ids[t]][c] for the ids that fall in this chunk of the table
// [row0, row0 + rows); F32 or F16 table (WTYPE), F32 out. The first chunk also zeroes the rows
// of ids outside the whole table, so a bad id never reads out of bounds or leaves garbage.
#include "common.glsl"

layout(constant_id = 0) const uint WTYPE = 0;
layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer Table { uint table[]; };
layout(binding = 1) readonly buffer Ids { int ids[]; };
layout(binding = 2) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Params {
    uint n_ids;
    uint cols;
    uint row0;
    uint rows;        // rows in this chunk
    uint total_rows;  // rows in the whole table
} p;

void main() {
    uint idx = flat_group() * 64u + gl_LocalInvocationID.x;
    if (idx >= p.n_ids * p.cols) return;
    uint t = idx / p.cols;
    uint c = idx % p.cols;
    int id = ids[t];
    if (id >= int(p.row0) && id < int(p.row0 + p.rows)) {
        o[idx] = LOAD_WEIGHT(table, WTYPE, uint(id - int(p.row0)) * p.cols + c);
    } else if (p.row0 == 0u && (id < 0 || id >= int(p.total_rows))) {
        o[idx] = 0.0;
    }
}
