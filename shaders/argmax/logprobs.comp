#version 450
#extension GL_GOOGLE_include_directive : require
// Log-probabilities of rows of logits, one workgroup per row: over the first `n` values (the
// tokenizer's ids; a padded embedding's extra columns are never candidates), the row's maximum,
// its log-sum-exp and its `top` most likely ids with their log-probabilities (value - lse),
// largest first, the lowest id first on ties. Output row o (out0 + row0 + r) is 2 + 2 top
// words: max, lse (float bits), then (id, logprob bits) pairs; an id of -1 (logprob -inf) pads
// a row with fewer than `top` candidates. NaNs are skipped: they join neither the sum nor the
// top ids.
//
// Each lane scans 4 elements per loop iteration in increasing order, keeping a running max and
// sum of exp (rescaled when the max grows) and its K best (value, id) pairs, sorted, in
// registers. llvmpipe counts every iteration of every loop against its limit of 65,535 per
// invocation (LAVAPIPE.md), [[unroll]] loops included (a rising vocabulary-wide row, where every
// element enters the kept pairs, was cut short), so the 4 elements and a new pair's
// compare-and-swap steps are written out by the preprocessor: the only loop that grows with the
// row is the scan, n / (4 WG) iterations. Lane 0 then merges the lanes' sums and lists.
#include "common.glsl"

#include "logprobs.h"
layout(local_size_x_id = 0) in;

layout(binding = LogprobsBindings_x) readonly buffer X { float x[]; };
layout(binding = LogprobsBindings_out) writeonly buffer Out { uint words[]; };

const uint NONE = 0xffffffffu;
const uint KMAX = 20u;  // ArgmaxKernels::kMaxTop

// The new pair, at slot k, moves above slot k - 1 where it ranks higher: strictly larger (ids
// come in increasing order, so an equal value never passes one kept before), or that slot is
// empty. Slots at K and beyond do not exist: the specialized K folds their steps away.
#define BUBBLE(k)                                                           \
    if (k < K && (ti[k - 1u] == NONE || tv[k] > tv[k - 1u])) {              \
        float sv = tv[k];                                                   \
        tv[k] = tv[k - 1u];                                                 \
        tv[k - 1u] = sv;                                                    \
        uint si = ti[k];                                                    \
        ti[k] = ti[k - 1u];                                                 \
        ti[k - 1u] = si;                                                    \
    }

// M(k) for every slot, written out (constant indices keep the pairs in registers).
#define EACH_SLOT(M)                                                                              \
    M(0u) M(1u) M(2u) M(3u) M(4u) M(5u) M(6u) M(7u) M(8u) M(9u) M(10u) M(11u) M(12u) M(13u) \
    M(14u) M(15u) M(16u) M(17u) M(18u) M(19u)
#define EMPTY(k)          \
    if (k < K) {          \
        tv[k] = NEG_INF;  \
        ti[k] = NONE;     \
    }
#define SHARE(k)                             \
    if (k < K) {                             \
        cand_v[lane * K + k] = tv[k];        \
        cand_i[lane * K + k] = ti[k];        \
    }

// Element i of the row into the lane's running max and sum and, where it beats the last kept
// pair, into the kept pairs.
#define TAKE(idx)                                                           \
    {                                                                       \
        uint i = idx;                                                       \
        float v = i < p.n ? x[base + i] : 0.0;                              \
        if (i < p.n && !isnan(v)) {                                         \
            if (v > m) {                                                    \
                s = s * exp(m - v) + 1.0;                                   \
                m = v;                                                      \
            } else if (v > NEG_INF) {                                       \
                s += exp(v - m);                                            \
            }                                                               \
            if (ti[K - 1u] == NONE || v > tv[K - 1u]) {                     \
                tv[K - 1u] = v;                                             \
                ti[K - 1u] = i;                                             \
                BUBBLE(19u) BUBBLE(18u) BUBBLE(17u) BUBBLE(16u) BUBBLE(15u) \
                BUBBLE(14u) BUBBLE(13u) BUBBLE(12u) BUBBLE(11u) BUBBLE(10u) \
                BUBBLE(9u) BUBBLE(8u) BUBBLE(7u) BUBBLE(6u) BUBBLE(5u)      \
                BUBBLE(4u) BUBBLE(3u) BUBBLE(2u) BUBBLE(1u)                 \
            }                                                               \
        }                                                                   \
    }

shared float lane_max[WG];
shared float lane_sum[WG];
shared float cand_v[WG * K];
shared uint cand_i[WG * K];
shared uint head[WG];

void main() {
    const float NEG_INF = uintBitsToFloat(0xff800000u);
    uint r = flat_group();
    if (r >= p.rows) return;  // the whole workgroup
    uint lane = gl_LocalInvocationID.x;
    uint base = r * p.cols;
    float m = NEG_INF, s = 0.0;
    float tv[KMAX];
    uint ti[KMAX];
    EACH_SLOT(EMPTY)
    for (uint e = 4u * lane; e < p.n; e += 4u * WG) {
        TAKE(e);
        TAKE(e + 1u);
        TAKE(e + 2u);
        TAKE(e + 3u);
    }
    lane_max[lane] = m;
    lane_sum[lane] = s;
    EACH_SLOT(SHARE)
    head[lane] = 0u;
    barrier();
    if (lane != 0u) return;
    float mx = NEG_INF;
    for (uint l = 0; l < WG; ++l)
        mx = max(mx, lane_max[l]);
    float sum = 0.0;
    for (uint l = 0; l < WG; ++l)
        if (lane_max[l] > NEG_INF) sum += lane_sum[l] * exp(lane_max[l] - mx);
    float lse = mx + log(sum);
    uint o = (p.out0 + p.row0 + r) * (2u + 2u * p.top);
    words[o] = floatBitsToUint(mx);
    words[o + 1u] = floatBitsToUint(lse);
    for (uint k = 0; k < p.top; ++k) {
        // The best head among the lanes' sorted lists: larger value, or equal and lower id.
        uint best = NONE;
        float bv = NEG_INF;
        uint bi = NONE;
        for (uint l = 0; l < WG; ++l) {
            uint h = head[l];
            if (h >= K) continue;
            uint i = cand_i[l * K + h];
            float v = cand_v[l * K + h];
            if (i != NONE && (bi == NONE || v > bv || (v == bv && i < bi))) {
                best = l;
                bv = v;
                bi = i;
            }
        }
        if (best != NONE) head[best] += 1u;
        words[o + 2u + 2u * k] = bi;
        words[o + 3u + 2u * k] = floatBitsToUint(best == NONE ? NEG_INF : bv - lse);
    }
}
