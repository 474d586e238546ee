// The end of a matvec-shaped workgroup: each lane holds partial sums in acc (declared here; an
// output i < ROWS * NB * MATS each, MATS consecutive outputs per row and vector when the
// workgroup multiplies MATS matrices) over its share of K; reduce_acc adds them up across the
// WG lanes and passes each total to emit(i, sum), which the including shader defines first.
// The MATS outputs of a row reach emit one after another from the same lane.
//
// With MATVEC_SUBGROUP_REDUCE (the including shader enables the subgroup arithmetic extension
// and has the specialization constant SUBGROUPS) each output is one subgroupAdd. SUBGROUPS 1: the
// workgroup is one subgroup (lavapipe's 8 lanes), and lane (i / MATS) % WG emits output i. More:
// the workgroup has at most SUBGROUPS subgroups of whatever size the driver chose (GPUs; the host
// passes WG, as if subgroups could be of one lane), each subgroup's first lane stores its sums,
// and lane r adds up row r's over the subgroups (OUTS x SUBGROUPS floats of shared memory, as
// many as the shared-memory reduction's). Otherwise partial sums go through shared memory four at a time: each lane
// stores vec4s, and lane q adds up group q of four outputs over the lanes with vec4 loads (no
// subgroup feature needed, any workgroup size; MATS is 1 or 2, so a row's outputs share a
// group).
const uint OUTS = ROWS * NB * MATS;
float acc[OUTS];

#ifdef MATVEC_SUBGROUP_REDUCE
shared float subgroup_sums[SUBGROUPS > 1u ? OUTS * SUBGROUPS : 1u];

void reduce_acc(uint lane) {
    if (SUBGROUPS == 1u) {
        [[unroll]] for (uint i = 0; i < OUTS; ++i) {
            float sum = subgroupAdd(acc[i]);
            if (lane == (i / MATS) % WG) emit(i, sum);
        }
        return;
    }
    [[unroll]] for (uint i = 0; i < OUTS; ++i) {
        float sum = subgroupAdd(acc[i]);
        if (subgroupElect()) subgroup_sums[i * SUBGROUPS + gl_SubgroupID] = sum;
    }
    barrier();
    for (uint r = lane; r < OUTS / MATS; r += WG) {
        [[unroll]] for (uint m = 0; m < MATS; ++m) {
            float sum = 0.0;
            for (uint g = 0; g < gl_NumSubgroups; ++g) sum += subgroup_sums[(r * MATS + m) * SUBGROUPS + g];
            emit(r * MATS + m, sum);
        }
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
