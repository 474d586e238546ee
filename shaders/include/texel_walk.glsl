// The row walk of the texel matrix-vector kernels (matvec_texel.glsl, moe_matvec_texel.glsl)
// on a workgroup that is one subgroup: one vector, whose units of x each lane holds in
// registers (xr, xro: X_UNITS of them), and the workgroup's ROWS rows walked two at a time,
// each row added up with one subgroupAdd, so the weights stream through memory in order.
// Include after texel_weights.glsl, emit(), row0, the push constants' rows and cols, and the
// constants WG, ROWS (even), MATS, X_UNITS and SPLIT_TAIL (matvec_texel.glsl's split last
// round: `tail` is then the lane's unit of it).
vec4 xr[X_UNITS * 8u + 1u];  // x of the lane's i-th unit at [8 i]
float xro[X_UNITS + 1u];

// Unit w times the lane's i-th unit of x.
float walk_dot(Unit w, uint i) {
    vec4 wv[8];
    float d, dm;
    decode_unit(w, wv, d, dm);
    float sum = 0.0, sum_hi = 0.0;
    [[unroll]] for (uint e = 0; e < 8u; ++e) {
        if (HALVES && e >= 4u)
            sum_hi += dot(wv[e], xr[8u * i + e]);
        else
            sum += dot(wv[e], xr[8u * i + e]);
    }
    return unit_value(sum, sum_hi, d, dm, xro[i]);
}

// The walk over the rows, x loaded; `first` is the matrix's first unit in the binding.
void walk_steps(uint lane, uint first, uint tail) {
    uint units = p.cols / 32u;
    const uint WHOLE = SPLIT_TAIL ? X_UNITS - 1u : X_UNITS;
    // Two rows per step (ROWS is even). All of a step's loads come first, then its arithmetic:
    // with the loads of both rows (and both matrices) in flight together this ran ~25% faster
    // from DRAM on lavapipe than loading each unit just before its use. Lanes past the row's
    // last unit load that unit again and count nothing.
    for (uint r = 0; r < ROWS; r += 2u) {
        Unit w[MATS * 2u * X_UNITS + 1u];  // [matrix][row of the step][unit of the lane]
        [[unroll]] for (uint m = 0; m < MATS; ++m) {
            [[unroll]] for (uint q = 0; q < 2u; ++q) {
                uint base = first + min(row0 + r + q, p.rows - 1u) * units;
                [[unroll]] for (uint i = 0; i < WHOLE; ++i)
                    w[(m * 2u + q) * X_UNITS + i] = fetch_unit(m, base + min(lane + i * WG, units - 1u));
            }
            if (SPLIT_TAIL) {
                uint row = min(row0 + r + lane / (WG / 2u), p.rows - 1u);
                w[m * 2u * X_UNITS + WHOLE] = fetch_unit(m, first + row * units + tail);
            }
        }
        float s[2u * MATS];  // [row of the step][matrix]
        [[unroll]] for (uint m = 0; m < MATS; ++m) {
            [[unroll]] for (uint q = 0; q < 2u; ++q) {
                s[q * MATS + m] = 0.0;
                [[unroll]] for (uint i = 0; i < WHOLE; ++i) {
                    float v = walk_dot(w[(m * 2u + q) * X_UNITS + i], i);
                    s[q * MATS + m] += lane + i * WG < units ? v : 0.0;
                }
            }
            if (SPLIT_TAIL) {
                float v = walk_dot(w[m * 2u * X_UNITS + WHOLE], WHOLE);
                s[m] += lane < WG / 2u ? v : 0.0;
                s[MATS + m] += lane < WG / 2u ? 0.0 : v;
            }
        }
        [[unroll]] for (uint q = 0; q < 2u; ++q) {
            [[unroll]] for (uint m = 0; m < MATS; ++m) {
                float sum = subgroupAdd(s[q * MATS + m]);
                if (lane == (r + q) % WG) emit((r + q) * MATS + m, sum);
            }
        }
    }
}
