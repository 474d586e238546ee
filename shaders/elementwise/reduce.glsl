// Workgroup-wide sum and max through shared memory. Needs the specialization constant WG
// (the workgroup size, a power of two) to be declared before inclusion. Every invocation
// of the workgroup must call these, in uniform control flow.

shared float reduce_scratch[WG];

float workgroup_sum(float v) {
    uint lane = gl_LocalInvocationID.x;
    reduce_scratch[lane] = v;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (lane < s) reduce_scratch[lane] += reduce_scratch[lane + s];
        barrier();
    }
    float r = reduce_scratch[0];
    barrier();
    return r;
}

float workgroup_max(float v) {
    uint lane = gl_LocalInvocationID.x;
    reduce_scratch[lane] = v;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (lane < s) reduce_scratch[lane] = max(reduce_scratch[lane], reduce_scratch[lane + s]);
        barrier();
    }
    float r = reduce_scratch[0];
    barrier();
    return r;
}
