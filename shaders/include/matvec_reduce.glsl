// The end of a matvec-shaped workgroup: each lane holds partial sums in acc (declared here; an
// output i < ROWS * NB * MATS each, MATS consecutive outputs per row and vector when the
// workgroup multiplies MATS matrices) over its share of K; reduce_acc adds them up across the
// WG lanes and passes each total to emit(i, sum), which the including shader defines first.
// The MATS outputs of a row reach emit one after another from the same lane.
//
// With MATVEC_SUBGROUP_REDUCE (a workgroup of one subgroup, the including shader enables the
// subgroup arithmetic extension) each output is one subgroupAdd, emitted by lane
// (i / MATS) % WG. Otherwise partial sums go through shared memory four at a time: each lane
// stores vec4s, and lane q adds up group q of four outputs over the lanes with vec4 loads (no
// subgroup feature needed, any workgroup size; MATS is 1 or 2, so a row's outputs share a
// group).
const uint OUTS = ROWS * NB * MATS;
float acc[OUTS];

#ifdef MATVEC_SUBGROUP_REDUCE
void reduce_acc(uint lane) {
    [[unroll]] for (uint i = 0; i < OUTS; ++i) {
        float sum = subgroupAdd(acc[i]);
        if (lane == (i / MATS) % WG) emit(i, sum);
    }
}
#else
const uint OUTS4 = (OUTS + 3u) / 4u;
shared vec4 partial4[OUTS4 * WG];

void reduce_acc(uint lane) {
    [[unroll]] for (uint q = 0; q < OUTS4; ++q) {
        vec4 v = vec4(0.0);
        [[unroll]] for (uint c = 0; c < 4u; ++c)
            if (4u * q + c < OUTS) v[c] = acc[4u * q + c];
        partial4[q * WG + lane] = v;
    }
    barrier();
    for (uint q = lane; q < OUTS4; q += WG) {
        vec4 sum = vec4(0.0);
        [[unroll]] for (uint l = 0; l < WG; ++l) sum += partial4[q * WG + l];
        [[unroll]] for (uint c = 0; c < 4u; ++c)
            if (4u * q + c < OUTS) emit(4u * q + c, sum[c]);
    }
}
#endif
