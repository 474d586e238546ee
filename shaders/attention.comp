#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Attention of a step's tokens over their sequence's KV cache:
//   out[t][h] = sum_j softmax_j(scale * q[t][h] . K[j]) V[j]
// over the visible keys j of token t: positions [0, min(n_sink, pos + 1)) and [kv_begin, pos],
// read from their slots (p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink)) of
// sequence seq_ids[t] of the cache [n_seq][capacity][n_kv_heads][HEAD_DIM] (F16 two per word,
// or F32). Query head h reads KV head h / (n_heads / n_kv_heads).
//
// A workgroup serves one token and G query heads of one KV head, so each K/V row is loaded once
// for the G heads (on lavapipe loads dominate, LAVAPIPE.md). Its WG lanes split the visible
// keys (lane i takes keys i, i + WG, ...), each keeping an online softmax per head (running
// max, running sum, a HEAD_DIM accumulator, all F32); the lanes are combined through shared
// memory at the end. Loops over dimensions and heads run to the largest sizes with guards on
// the specialization constants, so glslc unrolls them: the only loop that grows with the
// context is the one over keys (capacity / WG iterations at most, far below llvmpipe's
// 65,535-iteration limit), and the state is indexed by constants (registers, not memory).
#include "common.glsl"

layout(constant_id = 0) const uint WG = 8;
layout(constant_id = 1) const uint HEAD_DIM = 64;  // 32, 64, 80, 96 or 128
layout(constant_id = 2) const uint KV_F16 = 1;
layout(constant_id = 3) const uint G = 1;  // query heads per workgroup, at most MAXG
layout(local_size_x_id = 0) in;

const uint MAXD = 128;
const uint MAXG = 8;
const uint ROW4 = KV_F16 == 1u ? HEAD_DIM / 8u : HEAD_DIM / 4u;  // uvec4 per K or V row

layout(binding = 0) readonly buffer Q { vec4 q4[]; };  // [n_tokens][n_heads][HEAD_DIM]
layout(binding = 1) readonly buffer KCache { uvec4 kc[]; };
layout(binding = 2) readonly buffer VCache { uvec4 vc[]; };
layout(binding = 3) writeonly buffer Out { vec4 o4[]; };  // [n_tokens][n_heads][HEAD_DIM]
layout(binding = 4) readonly buffer Positions { int positions[]; };
layout(binding = 5) readonly buffer SeqIds { int seq_ids[]; };
layout(binding = 6) readonly buffer KvBegin { int kv_begin[]; };
layout(push_constant) uniform Params {
    uint n_tokens;
    uint n_heads;
    uint n_kv_heads;
    uint capacity;
    uint n_sink;
    uint n_seq;  // sequences the cache bindings hold
    float scale;
} p;

const float NO_MAX = -3.0e38;  // running max before any key (finite: exp(NO_MAX - NO_MAX) = 1)
const uint D4 = MAXD / 4u;

// Per lane, for each of the G heads g, at [g * D4 + i] (i < HEAD_DIM / 4):
vec4 qv[MAXG * D4];   // the query, pre-scaled
vec4 acc[MAXG * D4];  // sum_j exp(s_j - m) V[j]
float m_run[MAXG];    // running max of the scores
float l_run[MAXG];    // sum_j exp(s_j - m)

shared float lane_m[G * WG];
shared float lane_l[G * WG];
shared vec4 lane_acc[(WG / 2u) * G * (HEAD_DIM / 4u)];

// Every [[unroll]] loop below is innermost with constant bounds, so glslc unrolls it and every
// array index is a constant: the state stays in registers.

// One K or V row (in uvec4 of the cache) as HEAD_DIM / 4 vec4.
void load_row(bool is_k, uint row, out vec4 r[D4]) {
    [[unroll]] for (uint i = 0; i < MAXD / 8u; ++i) {
        if (i * 8u < HEAD_DIM) {
            if (KV_F16 == 1u) {
                uvec4 w = is_k ? kc[row + i] : vc[row + i];
                r[2u * i] = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
                r[2u * i + 1u] = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
            } else {
                r[2u * i] = uintBitsToFloat(is_k ? kc[row + 2u * i] : vc[row + 2u * i]);
                r[2u * i + 1u] =
                    uintBitsToFloat(is_k ? kc[row + 2u * i + 1u] : vc[row + 2u * i + 1u]);
            }
        }
    }
}

// Folds the key of K/V row `row` into this lane's state.
void visit(uint row) {
    vec4 r[D4];
    load_row(true, row, r);
    float s[MAXG];
    [[unroll]] for (uint g = 0; g < MAXG; ++g) s[g] = 0.0;
    [[unroll]] for (uint e = 0; e < MAXG * D4; ++e) {
        if (e / D4 < G && (e % D4) * 4u < HEAD_DIM) s[e / D4] += dot(qv[e], r[e % D4]);
    }
    float corr[MAXG];
    float w[MAXG];
    [[unroll]] for (uint g = 0; g < MAXG; ++g) {
        if (g < G) {
            float m = max(m_run[g], s[g]);
            corr[g] = exp(m_run[g] - m);
            w[g] = exp(s[g] - m);
            l_run[g] = l_run[g] * corr[g] + w[g];
            m_run[g] = m;
        }
    }
    load_row(false, row, r);
    [[unroll]] for (uint e = 0; e < MAXG * D4; ++e) {
        if (e / D4 < G && (e % D4) * 4u < HEAD_DIM)
            acc[e] = acc[e] * corr[e / D4] + w[e / D4] * r[e % D4];
    }
}

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint t = gl_WorkGroupID.y;
    uint group = p.n_heads / p.n_kv_heads;
    uint blocks = group / G;  // workgroups per KV head
    uint kvh = gl_WorkGroupID.x / blocks;
    uint h0 = kvh * group + (gl_WorkGroupID.x % blocks) * G;  // first query head served
    uint q0 = (t * p.n_heads + h0) * (HEAD_DIM / 4u);         // its vec4 in q and out

    [[unroll]] for (uint e = 0; e < MAXG * D4; ++e) {
        if (e / D4 < G && (e % D4) * 4u < HEAD_DIM) {
            qv[e] = q4[q0 + (e / D4) * (HEAD_DIM / 4u) + e % D4] * p.scale;
            acc[e] = vec4(0.0);
        }
    }
    [[unroll]] for (uint g = 0; g < MAXG; ++g) {
        m_run[g] = NO_MAX;
        l_run[g] = 0.0;
    }

    // The visible keys as one list: n_s sink positions [0, n_s), then the n_w window positions
    // [lo, pos]. The window never starts before the sinks nor further back than the ring holds.
    int pos = positions[t];
    int seq = seq_ids[t];
    uint ring = p.capacity - p.n_sink;
    uint n_s = 0u, n_w = 0u, lo = p.n_sink;
    if (pos >= 0 && seq >= 0 && seq < int(p.n_seq)) {
        n_s = min(p.n_sink, uint(pos) + 1u);
        int lo_i = max(max(kv_begin[t], int(p.n_sink)), pos - int(ring) + 1);
        if (lo_i <= pos) {
            lo = uint(lo_i);
            n_w = uint(pos) - lo + 1u;
        }
    }
    uint total = n_s + n_w;
    uint seq_slot0 = uint(max(seq, 0)) * p.capacity;
    // The slot of this lane's first window key, then WG keys further each time it takes one.
    uint first_w = n_s + (lane + WG - n_s % WG) % WG;
    uint wslot = p.n_sink + (lo - p.n_sink + (first_w - n_s)) % ring;
    uint step = WG % ring;
    for (uint j = lane; j < total; j += WG) {
        uint slot;
        if (j < n_s) {
            slot = j;
        } else {
            slot = wslot;
            wslot += step;
            if (wslot >= p.capacity) wslot -= ring;
        }
        visit(((seq_slot0 + slot) * p.n_kv_heads + kvh) * ROW4);
    }

    // Combine the lanes: with M the largest running max and L = sum_lanes l * exp(m - M), a
    // lane's accumulator counts with weight exp(m - M) / L. The weighted accumulators are then
    // summed in a tree: at each step the upper half of the lanes hands its sums to the lower.
    [[unroll]] for (uint g = 0; g < MAXG; ++g) {
        if (g < G) {
            lane_m[g * WG + lane] = m_run[g];
            lane_l[g * WG + lane] = l_run[g];
        }
    }
    barrier();
    float big[MAXG];
    float sum[MAXG];
    [[unroll]] for (uint g = 0; g < MAXG; ++g) big[g] = NO_MAX, sum[g] = 0.0;
    for (uint i = 0; i < WG; ++i) {
        [[unroll]] for (uint g = 0; g < MAXG; ++g) {
            if (g < G) big[g] = max(big[g], lane_m[g * WG + i]);
        }
    }
    for (uint i = 0; i < WG; ++i) {
        [[unroll]] for (uint g = 0; g < MAXG; ++g) {
            if (g < G) sum[g] += lane_l[g * WG + i] * exp(lane_m[g * WG + i] - big[g]);
        }
    }
    float f[MAXG];  // no visible key at all (sum 0): zeros
    [[unroll]] for (uint g = 0; g < MAXG; ++g) f[g] = sum[g] > 0.0 ? exp(m_run[g] - big[g]) / sum[g] : 0.0;
    [[unroll]] for (uint e = 0; e < MAXG * D4; ++e) {
        if (e / D4 < G && (e % D4) * 4u < HEAD_DIM) acc[e] *= f[e / D4];
    }
    const uint HD4 = HEAD_DIM / 4u;
    for (uint half_wg = WG / 2u; half_wg > 0u; half_wg >>= 1u) {
        if (lane >= half_wg && lane < 2u * half_wg) {
            uint base = (lane - half_wg) * G * HD4;
            [[unroll]] for (uint e = 0; e < MAXG * D4; ++e) {
                if (e / D4 < G && (e % D4) * 4u < HEAD_DIM) lane_acc[base + (e / D4) * HD4 + e % D4] = acc[e];
            }
        }
        barrier();
        if (lane < half_wg) {
            uint base = lane * G * HD4;
            [[unroll]] for (uint e = 0; e < MAXG * D4; ++e) {
                if (e / D4 < G && (e % D4) * 4u < HEAD_DIM) acc[e] += lane_acc[base + (e / D4) * HD4 + e % D4];
            }
        }
        barrier();
    }
    if (lane == 0u) {
        [[unroll]] for (uint e = 0; e < MAXG * D4; ++e) {
            if (e / D4 < G && (e % D4) * 4u < HEAD_DIM) o4[q0 + (e / D4) * HD4 + e % D4] = acc[e];
        }
    }
}
