// The body of matvec_texel.comp and matvec_texel_subgroup.comp (which differ only in how a
// workgroup's lanes add up their partial sums: matvec_reduce.glsl). The including file gives
// the #version and the extensions.
#include "common.glsl"

layout(constant_id = 0) const uint WG = 8;
layout(constant_id = 1) const uint ROWS = 16;
layout(constant_id = 2) const uint WTYPE = 0;
layout(constant_id = 3) const uint NB = 1;
layout(constant_id = 4) const uint EPILOGUE = 0;      // see linear_epilogue.glsl
layout(constant_id = 5) const bool SPLIT_TAIL = false;  // cols / 32 % WG == WG / 2: see main
// SwiGLU fused in: y = silu(W x) * (W2 x), W the gate and W2 the up projection (same type and
// shape), both read in one pass over x, with no epilogue.
layout(constant_id = 6) const bool SWIGLU = false;
// One vector (NB 1) and at most X_UNITS units of K per lane: the rows are walked one after
// another instead (walk_rows; 0: not). Only in matvec_texel_subgroup.comp.
layout(constant_id = 7) const uint X_UNITS = 0;
// RMS norm fused in: x is the un-normalised input. Each vector is multiplied by the norm
// weight G on its way in, and its outputs by 1 / sqrt(mean(x^2) + eps), which every workgroup
// computes from the x it loads anyway (load_x adds up the squares of the units it counts,
// norm_scales adds the lanes' sums): the norm needs no pass of its own and no normalised copy.
layout(constant_id = 8) const bool NORM = false;
// Stacked outputs: W stacks Q, K and V's projections, and its rows from k_row0 and from v_row0
// on are stored in YK and YV ([n][their rows] each), the rest in y as [n][k_row0]. The bias
// (EPILOGUE bit 0) is stacked likewise; no accumulation.
layout(constant_id = 9) const bool QKV = false;
layout(local_size_x_id = 0) in;

const uint MATS = SWIGLU ? 2u : 1u;  // matrices per workgroup (matvec_reduce.glsl)

layout(binding = 0) uniform utextureBuffer W;  // RGBA32UI
layout(binding = 1) uniform textureBuffer X;   // RGBA32F, [n][cols]
layout(binding = 2) buffer Output { float y[]; };  // [n][y_stride]
layout(push_constant) uniform Params {
    uint rows;  // rows in this chunk
    uint cols;  // a multiple of 32
    uint y_offset;
    uint n;         // vectors in the batch
    uint y_stride;  // floats between the outputs of consecutive vectors
    float eps;      // NORM
    uint k_row0;    // QKV
    uint v_row0;
} p;
#include "linear_epilogue.glsl"
layout(binding = 4) uniform utextureBuffer W2;  // RGBA32UI, SWIGLU only
layout(binding = 5) uniform textureBuffer G;    // RGBA32F, [cols], NORM only
layout(binding = 6) writeonly buffer OutputK { float yk[]; };  // QKV only
layout(binding = 7) writeonly buffer OutputV { float yv[]; };

uint row0, b0;  // the workgroup's first row and first vector

float gate_sum;  // SWIGLU: the gate output of the row being emitted
float nscale[NB];  // NORM: each vector's 1 / sqrt(mean(x^2) + eps)

// Output i of the workgroup: matrix i % MATS of row i / (NB MATS) of vector i / MATS % NB.
void emit(uint i, float sum) {
    if (NORM) sum *= nscale[(i / MATS) % NB];
    uint r = row0 + i / (NB * MATS), b = b0 + (i / MATS) % NB;
    if (SWIGLU && i % 2u == 0u) {
        gate_sum = sum;  // the up output follows from the same lane (matvec_reduce.glsl)
        return;
    }
    if (SWIGLU) sum *= gate_sum / (1.0 + exp(-gate_sum));
    if (r >= p.rows || b >= p.n) return;
    uint row = p.y_offset + r;  // in the whole matrix
    if (!QKV) {
        store(b * p.y_stride + row, row, sum);
        return;
    }
    if ((EPILOGUE & 1u) != 0u) sum += bias[row];
    uint kv_rows = p.v_row0 - p.k_row0;
    if (row < p.k_row0)
        y[b * p.k_row0 + row] = sum;
    else if (row < p.v_row0)
        yk[b * kv_rows + row - p.k_row0] = sum;
    else
        yv[b * kv_rows + row - p.v_row0] = sum;
}
#include "matvec_reduce.glsl"


#include "unpack.glsl"

// Texel t of matrix m (a constant once the loops over matrices are unrolled).
uvec4 fetch(uint m, uint t) { return m == 0u ? texelFetch(W, int(t)) : texelFetch(W2, int(t)); }

// The 32 weights of unit u (layouts in weights.glsl) are d * (wv - OFFSET), d wv - dm for
// Q4_K and Q5_K (K_MIN; Q4_1_G8 and Q5_1_G8 likewise with dm = -m), and d wv then dm wv for
// the two halves of a Q6_K_G8 unit (16 weights per scale): the scale is applied once to the
// unit's dot product rather than to each weight, and the offsets and mins through the sum of
// x (fewer instructions per weight: lavapipe is bound by their count). xoff holds OFFSET
// times that sum.
const bool K_MIN = WTYPE == 8u || WTYPE == 9u || WTYPE == 16u || WTYPE == 17u;
const float OFFSET = WTYPE == 13u ? 8.0 : WTYPE == 14u ? 16.0 : K_MIN ? 1.0 : 0.0;
const bool HALVES = WTYPE == 15u;

// A unit's dot product from the sums of wv times x (of the second half apart when HALVES,
// else all in `sum`), the unit's d and dm, and xoff.
float unit_value(float sum, float sum_hi, float d, float dm, float xo) {
    return HALVES ? d * sum + dm * sum_hi : K_MIN ? d * sum - dm * xo : d * (sum - xo);
}

// The texels of unit u of matrix m as decode_unit reads them: t[0 .. TEXELS) its weights
// and, for the grouped types, `scale` the word holding its F16 scale in the low half (Q4_1_G8,
// Q5_1_G8: and its min in the high half; Q5_0_G8, Q5_1_G8: `qh` its 5th bits). Q4_K is read
// as stored (a 144-byte super-block is 9 texels: d, dmin and the 12 scale bytes, then 128
// bytes of nibbles): t[0], t[1] the 32 bytes whose low or high nibbles are the unit, t[2] the
// super-block's first texel, `sub` the unit's sub-block.
// Q5_K likewise as stored (176 bytes, 11 texels: the Q4_K header, 32 bytes of 5th bits, 128 of
// nibbles), with t[3], t[4] the 5th bits (bit `sub` of each byte). Q6_K_G8: t[0], t[1] the 32
// ql bytes whose low or high nibbles are the unit, t[2], t[3] the 32 qh bytes holding its high
// 2 bits, `sc` its two int8 scales, `sub` its sub-block. MXFP4_G16: `scale` its exponent byte.
const uint TEXELS = WTYPE == 0u ? 8u : WTYPE == 1u || WTYPE == 2u || WTYPE == 15u ? 4u : WTYPE == 12u ? 2u : WTYPE == 8u ? 3u : WTYPE == 9u ? 5u : 1u;
struct Unit {
    uvec4 t[8];  // TEXELS used (a struct may not hold an array sized by a specialization constant)
    uint scale;
    uint qh;
    uint sc;
    uint sub;
};

Unit fetch_unit(uint m, uint u) {
    Unit w;
    w.scale = 0u;
    w.qh = 0u;
    w.sc = 0u;
    w.sub = u & 7u;
    if (WTYPE == 0u || WTYPE == 1u || WTYPE == 2u) {
        [[unroll]] for (uint i = 0; i < TEXELS; ++i) w.t[i] = fetch(m, TEXELS * u + i);
    } else if (WTYPE == 8u) {
        uint b = 9u * (u >> 3u), s = u & 7u;
        w.t[0] = fetch(m, b + 1u + 2u * (s >> 1u));
        w.t[1] = fetch(m, b + 2u + 2u * (s >> 1u));
        w.t[2] = fetch(m, b);
    } else if (WTYPE == 9u) {
        uint b = 11u * (u >> 3u), s = u & 7u;
        w.t[0] = fetch(m, b + 3u + 2u * (s >> 1u));
        w.t[1] = fetch(m, b + 4u + 2u * (s >> 1u));
        w.t[2] = fetch(m, b);
        w.t[3] = fetch(m, b + 1u);
        w.t[4] = fetch(m, b + 2u);
    } else if (WTYPE == 15u) {
        // A group is 105 texels: the 8 d, then 13 per super-block (ql 8, qh 4, scales 1). Of
        // sub-block s, half n = s / 4 and quarter g = s % 4 of it.
        uint sb = u >> 3u, s = u & 7u, n = s >> 2u, g = s & 3u;
        uint base = (sb >> 3u) * 105u, slot = sb & 7u, blk = base + 1u + 13u * slot;
        w.scale = fetch(m, base)[slot >> 1u] >> ((slot & 1u) << 4u);
        w.t[0] = fetch(m, blk + 4u * n + 2u * (g & 1u));
        w.t[1] = fetch(m, blk + 4u * n + 2u * (g & 1u) + 1u);
        w.t[2] = fetch(m, blk + 8u + 2u * n);
        w.t[3] = fetch(m, blk + 9u + 2u * n);
        w.sc = fetch(m, blk + 12u)[2u * n + (g >> 1u)] >> ((g & 1u) << 4u);
    } else if (WTYPE == 18u) {
        // A group is 17 texels: the 16 exponent bytes, then a texel of quants per block.
        uint g = (u >> 4u) * 17u, j = u & 15u;
        w.scale = (fetch(m, g)[j >> 2u] >> ((j & 3u) << 3u)) & 0xffu;
        w.t[0] = fetch(m, g + 1u + j);
    } else {
        // A group is 17 (Q8_0_G8), 9 (Q4_0_G8), 11 (Q5_0_G8), 10 (Q4_1_G8) or 12 (Q5_1_G8)
        // texels: the 8 scales (and mins), (the 5th bits,) then the quants.
        const uint HEAD = WTYPE == 16u || WTYPE == 17u ? 2u : 1u;
        const uint QH = WTYPE == 14u || WTYPE == 17u ? 2u : 0u;
        uint g = (u >> 3u) * (HEAD + QH + 8u * TEXELS), j = u & 7u;
        w.scale = HEAD == 2u ? fetch(m, g + (j >> 2u))[j & 3u] : fetch(m, g)[j >> 1u] >> ((j & 1u) << 4u);
        if (QH > 0u) w.qh = fetch(m, g + HEAD + (j >> 2u))[j & 3u];
        [[unroll]] for (uint i = 0; i < TEXELS; ++i) w.t[i] = fetch(m, g + HEAD + QH + TEXELS * j + i);
    }
    return w;
}

void decode_unit(Unit w, out vec4 wv[8], out float d, out float dm) {
    d = 1.0;
    dm = 0.0;
    if (WTYPE == 0u) {
        [[unroll]] for (uint i = 0; i < 8u; ++i) wv[i] = uintBitsToFloat(w.t[i]);
    } else if (WTYPE == 1u || WTYPE == 2u) {
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            uvec4 q = w.t[i];
            if (WTYPE == 1u) {
                wv[2u * i] = vec4(unpackHalf2x16(q.x), unpackHalf2x16(q.y));
                wv[2u * i + 1u] = vec4(unpackHalf2x16(q.z), unpackHalf2x16(q.w));
            } else {
                wv[2u * i] = uintBitsToFloat(uvec4(q.x << 16u, q.x & 0xffff0000u, q.y << 16u, q.y & 0xffff0000u));
                wv[2u * i + 1u] = uintBitsToFloat(uvec4(q.z << 16u, q.z & 0xffff0000u, q.w << 16u, q.w & 0xffff0000u));
            }
        }
    } else if (WTYPE == 8u || WTYPE == 9u) {  // Q4_K, Q5_K: the same header and nibbles
        uint s = w.sub;
        vec2 sm = k_scale_min_words(w.t[2].yzw, s);
        vec2 dmin = unpackHalf2x16(w.t[2].x);
        d = dmin.x * sm.x;
        dm = dmin.y * sm.y;
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            if (WTYPE == 8u) {
                wv[i] = nibbles4(w.t[i >> 2u][i & 3u], s & 1u);
            } else {
                uint q = ((w.t[i >> 2u][i & 3u] >> ((s & 1u) << 2u)) & 0x0f0f0f0fu) |
                         (((w.t[3u + (i >> 2u)][i & 3u] >> s) & 0x01010101u) << 4u);
                wv[i] = vec4(q & 0xffu, (q >> 8u) & 0xffu, (q >> 16u) & 0xffu, q >> 24u);
            }
        }
    } else if (WTYPE == 15u) {
        // q - 32 as a 6-bit signed value is q ^ 32; shifted up 2 its bytes are int8 4 (q - 32),
        // the 4 taken back in the scales.
        uint g = w.sub & 3u;
        float d4 = 0.25 * unpackHalf2x16(w.scale).x;
        d = d4 * float(bitfieldExtract(int(w.sc), 0, 8));
        dm = d4 * float(bitfieldExtract(int(w.sc), 8, 8));
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            uint q = ((w.t[i >> 2u][i & 3u] >> ((g >> 1u) << 2u)) & 0x0f0f0f0fu) |
                     (((w.t[2u + (i >> 2u)][i & 3u] >> (2u * g)) & 0x03030303u) << 4u);
            wv[i] = int8x4((q ^ 0x20202020u) << 2u);
        }
    } else if (WTYPE == 18u) {
        d = e8m0_half(w.scale);
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            wv[i] = fp4x4(w.t[0][i], 0u);
            wv[4u + i] = fp4x4(w.t[0][i], 1u);
        }
    } else {
        d = unpackHalf2x16(w.scale).x;
        dm = -unpackHalf2x16(w.scale).y;  // Q4_1_G8, Q5_1_G8
        if (WTYPE == 12u) {
            [[unroll]] for (uint i = 0; i < 2u; ++i) {
                uvec4 q = w.t[i];
                wv[4u * i] = int8x4(q.x), wv[4u * i + 1u] = int8x4(q.y);
                wv[4u * i + 2u] = int8x4(q.z), wv[4u * i + 3u] = int8x4(q.w);
            }
        } else if (WTYPE == 13u || WTYPE == 16u) {
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                wv[i] = nibbles4(w.t[0][i], 0u);
                wv[4u + i] = nibbles4(w.t[0][i], 1u);
            }
        } else {
            // Each nibble's 5th bit is moved to bit 4 of its byte, four at once: the multiply
            // puts copies of the 4 bits at 4, 11, 18 and 25, and the mask keeps bit k of copy k.
            [[unroll]] for (uint i = 0; i < 4u; ++i) {
                uint lo = (w.t[0][i] & 0x0f0f0f0fu) | ((((w.qh >> (4u * i)) & 15u) * 0x02040810u) & 0x10101010u);
                uint hi = ((w.t[0][i] >> 4u) & 0x0f0f0f0fu) |
                          ((((w.qh >> (16u + 4u * i)) & 15u) * 0x02040810u) & 0x10101010u);
                wv[i] = vec4(lo & 0xffu, (lo >> 8u) & 0xffu, (lo >> 16u) & 0xffu, lo >> 24u);
                wv[4u + i] = vec4(hi & 0xffu, (hi >> 8u) & 0xffu, (hi >> 16u) & 0xffu, hi >> 24u);
            }
        }
    }
}

void unit_weights(uint m, uint u, out vec4 wv[8], out float d, out float dm) { decode_unit(fetch_unit(m, u), wv, d, dm); }

// The x of the unit being worked on, for each vector of the batch, and OFFSET times its sum.
uint xbase[NB];
vec4 xv[NB * 8u];
float xoff[NB];

float sq[NB];  // NORM: the lane's sums of squares of the units of x it counted

// Unit k of x for every vector; `count`: add its squares to sq (each unit is counted by one
// lane only).
void load_x(uint k, bool count) {
    vec4 g[8];
    [[unroll]] for (uint i = 0; i < 8u; ++i) g[i] = NORM ? texelFetch(G, int(8u * k + i)) : vec4(1.0);
    [[unroll]] for (uint j = 0; j < NB; ++j) {
        vec4 xs = vec4(0.0);
        [[unroll]] for (uint i = 0; i < 8u; ++i) {
            xv[j * 8u + i] = texelFetch(X, int(xbase[j] + 8u * k + i));
            if (NORM) {
                sq[j] += count ? dot(xv[j * 8u + i], xv[j * 8u + i]) : 0.0;
                xv[j * 8u + i] *= g[i];
            }
            xs += xv[j * 8u + i];
        }
        xoff[j] = OFFSET * dot(xs, vec4(1.0));
    }
}

// NORM: nscale from the sums of squares of each vector of x, every lane with the same totals.
#ifdef MATVEC_SUBGROUP_REDUCE
void add_lanes(inout float v[NB]) {
    [[unroll]] for (uint j = 0; j < NB; ++j) v[j] = subgroupAdd(v[j]);
}
#else
shared float lane_sums[NB * WG];

void add_lanes(inout float v[NB]) {
    uint lane = gl_LocalInvocationID.x;
    [[unroll]] for (uint j = 0; j < NB; ++j) lane_sums[j * WG + lane] = v[j];
    barrier();
    [[unroll]] for (uint j = 0; j < NB; ++j) {
        v[j] = 0.0;
        for (uint l = 0; l < WG; ++l) v[j] += lane_sums[j * WG + l];
    }
}
#endif

void norm_scales() {
    add_lanes(sq);
    [[unroll]] for (uint j = 0; j < NB; ++j) nscale[j] = inversesqrt(sq[j] / float(p.cols) + p.eps);
}

// Unit k of `row` of matrix m times vector j of the batch, scaled (d) and offset (xoff) as
// unit_weights says.
float unit_dot(uint m, uint row, uint units, uint k, uint j) {
    vec4 wv[8];
    float d, dm;
    // Rows past the end repeat the last row: no branch in the loop, never stored.
    unit_weights(m, min(row, p.rows - 1u) * units + k, wv, d, dm);
    float sum = 0.0, sum_hi = 0.0;
    [[unroll]] for (uint i = 0; i < 8u; ++i) {
        if (HALVES && i >= 4u)
            sum_hi += dot(wv[i], xv[j * 8u + i]);
        else
            sum += dot(wv[i], xv[j * 8u + i]);
    }
    return unit_value(sum, sum_hi, d, dm, xoff[j]);
}

#ifdef MATVEC_SUBGROUP_REDUCE
// Short rows, one vector (X_UNITS > 0): each lane loads its units of x once into registers
// and the workgroup walks its rows one after another, adding each row up with one subgroupAdd.
// The weights then stream through memory in order. main's round-robin over the rows has a
// workgroup read ROWS rows side by side, 272 bytes of each per round: from DRAM that ran at
// half the speed on lavapipe (the 151,936 x 896 output head: 56 -> 21 ms per token), while
// the rows' partial sums it keeps in registers buy nothing for a single vector. The rows go
// in pairs; with SPLIT_TAIL the last half round takes the tail units of both rows.
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

void walk_rows(uint lane) {
    uint units = p.cols / 32u;
    const uint WHOLE = SPLIT_TAIL ? X_UNITS - 1u : X_UNITS;  // rounds of a unit per lane at most
    uint tail = units - WG / 2u + lane % (WG / 2u);           // SPLIT_TAIL: the lane's tail unit
    [[unroll]] for (uint i = 0; i < X_UNITS; ++i) {
        load_x(i < WHOLE ? min(lane + i * WG, units - 1u) : tail,
               i < WHOLE ? lane + i * WG < units : lane < WG / 2u);
        [[unroll]] for (uint e = 0; e < 8u; ++e) xr[8u * i + e] = xv[e];
        xro[i] = xoff[0];
    }
    if (NORM) norm_scales();
    // Two rows per step (ROWS is even). All of a step's loads come first, then its arithmetic:
    // with the loads of both rows (and both matrices) in flight together this ran ~25% faster
    // from DRAM on lavapipe than loading each unit just before its use. Lanes past the row's
    // last unit load that unit again and count nothing.
    for (uint r = 0; r < ROWS; r += 2u) {
        Unit w[MATS * 2u * X_UNITS + 1u];  // [matrix][row of the step][unit of the lane]
        [[unroll]] for (uint m = 0; m < MATS; ++m) {
            [[unroll]] for (uint q = 0; q < 2u; ++q) {
                uint base = min(row0 + r + q, p.rows - 1u) * units;
                [[unroll]] for (uint i = 0; i < WHOLE; ++i)
                    w[(m * 2u + q) * X_UNITS + i] = fetch_unit(m, base + min(lane + i * WG, units - 1u));
            }
            if (SPLIT_TAIL) {
                uint row = min(row0 + r + lane / (WG / 2u), p.rows - 1u);
                w[m * 2u * X_UNITS + WHOLE] = fetch_unit(m, row * units + tail);
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
#endif

const uint HALF = ROWS / 2u;

void main() {
    uint lane = gl_LocalInvocationID.x;
    row0 = flat_group() * ROWS;
    b0 = gl_WorkGroupID.z * NB;
    uint units = p.cols / 32u;
    // Vectors past the end of the batch repeat the last one: computed, never stored.
    [[unroll]] for (uint j = 0; j < NB; ++j) xbase[j] = min(b0 + j, p.n - 1u) * (p.cols / 4u);
    [[unroll]] for (uint j = 0; j < NB; ++j) sq[j] = 0.0;
#ifdef MATVEC_SUBGROUP_REDUCE
    if (X_UNITS > 0u) {
        walk_rows(lane);
        return;
    }
#endif
    [[unroll]] for (uint i = 0; i < OUTS; ++i) acc[i] = 0.0;
    // Units that are whole rounds of the lanes plus half a round (Qwen2.5-0.5B's 896 columns:
    // 28 units on 8 lanes) end with a half round: there each unit goes to two lanes, each
    // taking half the rows, so the rows cost 3.5 rounds instead of 4 with half the lanes idle.
    // The host sets SPLIT_TAIL for such widths (and even ROWS and WG).
    uint whole = SPLIT_TAIL ? units - WG / 2u : units;
    for (uint k = lane; k < whole; k += WG) {
        load_x(k, true);
        [[unroll]] for (uint r = 0; r < ROWS; ++r)
            [[unroll]] for (uint j = 0; j < NB; ++j)
                [[unroll]] for (uint m = 0; m < MATS; ++m) acc[(r * NB + j) * MATS + m] += unit_dot(m, row0 + r, units, k, j);
    }
    if (SPLIT_TAIL) {
        uint half_ = lane / (WG / 2u), k = whole + lane % (WG / 2u);
        load_x(k, half_ == 0u);
        // Static accumulator indices: lane-dependent selects rather than a lane-dependent
        // index, which llvmpipe would put in memory.
        [[unroll]] for (uint r = 0; r < HALF; ++r) {
            [[unroll]] for (uint j = 0; j < NB; ++j) {
                [[unroll]] for (uint m = 0; m < MATS; ++m) {
                    float v = unit_dot(m, row0 + half_ * HALF + r, units, k, j);
                    acc[(r * NB + j) * MATS + m] += half_ == 0u ? v : 0.0;
                    acc[((HALF + r) * NB + j) * MATS + m] += half_ == 0u ? 0.0 : v;
                }
            }
        }
    }
    if (NORM) norm_scales();
    reduce_acc(lane);
}
