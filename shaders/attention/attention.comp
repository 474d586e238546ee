#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Attention of a step's tokens over their sequence's KV cache:
//   out[t][h] = sum_j softmax_j(scale * q[t][h] . K[j]) V[j]
// over the visible keys j of token t: positions [0, min(n_sink, pos + 1)) and [kv_begin, pos],
// read from their slots (p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink)) of
// sequence seq_ids[t] of the cache [n_seq][capacity][n_kv_heads] rows of HEAD_DIM values (F32,
// F16 two per word, or Q8_0 quants with a tail of scales: gpu::KvType). Query head h reads KV head h / (n_heads / n_kv_heads).
//
// A workgroup serves one token and G query heads of one KV head, so each K/V row is loaded once
// for the G heads (on lavapipe loads dominate, LAVAPIPE.md). Its WG lanes split the visible
// keys (lane i takes keys i, i + WG, ...), each keeping an online softmax per head (running
// max, running sum, a HEAD_DIM accumulator, all F32). At the end each lane stores its
// accumulators, weighted by exp(m - M) / L, in shared memory once and the lanes sum them
// column by column (WG x G x HEAD_DIM floats of shared memory, which the host keeps within the
// device's limit).
// The loops over dimensions and heads have constant trip counts once specialised and are
// unrolled by the driver (lavapipe does; the long-context test would fail otherwise), so the
// state is indexed by constants (registers) and the only loop that grows with the context is
// the one over keys: capacity / WG + 1 iterations at most, far below llvmpipe's 65,535.
// When G does not divide the group of query heads of a KV head, the last workgroup of a group
// serves fewer heads: its extra heads repeat the last one and are not stored.
// Sliding-window layers (window > 0) see only positions [pos - window + 1, pos]. Attention
// sinks (GPT-OSS, has_sinks): a learned logit per query head joins each softmax's
// denominator without a value.
//
// Split-K ("flash decoding", SPLITS > 1): a decode step has few workgroups (tokens x KV heads
// x head blocks), too few to fill a GPU, and each would walk the whole cache. Then workgroup z
// of SPLITS takes the z-th slice of the visible keys and writes its unnormalised partial
// result (the weighted V sum, its max and its sum of exponentials) to `part`, then counts
// itself in `arrivals`; the last slice of a (token, head block) to arrive merges the slices
// (and the sink) into out and sets the count back to zero for the next dispatch. One dispatch,
// not a second pass: no barrier and no dispatch of its own per layer of a GPU's decode step.
#include "common.glsl"

#include "attention.h"
layout(local_size_x_id = 0) in;

#include "attention_common.glsl"

// SPLITS > 1: [n_tokens][n_heads][SPLITS] records of HEAD_DIM / 4 + 1 vec4: the V sum
// weighted by exp(s - m), then (m, l = sum of exp(s - m), 0, 0).
// Coherent: the last slice reads what the others wrote in the same dispatch.
layout(binding = AttentionSplitBindings_part) coherent buffer Part { vec4 part[]; };
// SPLITS > 1: per (token, workgroup of the x axis) the slices done, zero between dispatches.
layout(binding = AttentionSplitBindings_arrivals) coherent buffer Arrivals { uint arrivals[]; };

const uint HD4 = HEAD_DIM / 4u;

// Per lane, for each of the G heads g, at [g * HD4 + i] (i < HEAD_DIM / 4), sized by the
// specialization constants so that a variant holds only its own state:
vec4 qv[G * HD4];   // the query, pre-scaled
vec4 acc[G * HD4];  // sum_j exp(s_j - m) V[j]
float m_run[G];     // running max of the scores
float l_run[G];     // sum_j exp(s_j - m)

shared float lane_m[G * WG];
shared float lane_l[G * WG];
shared vec4 lane_acc[WG * G * HD4];  // [lane][head][HEAD_DIM / 4]
shared bool last_slice;

// Split-K's merge of the SPLITS records of query head `head` (t * n_heads + its index), done by
// the last slice to arrive: with M the largest slice max (and the sink's logit),
// out = sum_s exp(m_s - M) acc_s / (sum_s exp(m_s - M) l_s + exp(sink - M)); zeros when no
// slice saw a key.
void merge_slices(uint head, uint lane) {
    uint base = head * SPLITS * (HD4 + 1u);
    float sink = p.has_sinks != 0u ? sinks[head % p.n_heads] : NO_MAX;
    float big = sink;
    for (uint s = 0; s < SPLITS; ++s) big = max(big, part[base + s * (HD4 + 1u) + HD4].x);
    float sum = p.has_sinks != 0u ? exp(sink - big) : 0.0;
    for (uint s = 0; s < SPLITS; ++s) {
        vec4 ml = part[base + s * (HD4 + 1u) + HD4];
        sum += ml.y * exp(ml.x - big);
    }
    for (uint col = lane; col < HD4; col += WG) {
        vec4 v = vec4(0.0);
        for (uint s = 0; s < SPLITS; ++s)
            v += part[base + s * (HD4 + 1u) + col] * exp(part[base + s * (HD4 + 1u) + HD4].x - big);
        o4[head * HD4 + col] = sum > 0.0 ? v / sum : vec4(0.0);
    }
}

// One K or V row (in uvec4 of the cache) as HEAD_DIM / 4 vec4.
void load_row(bool is_k, uint row, out vec4 r[HD4]) {
    if (KV_TYPE == KV_Q8_0) {
        uvec4 sw = is_k ? kc[row + HEAD_DIM / 16u] : vc[row + HEAD_DIM / 16u];
        [[unroll]] for (uint i = 0; i < HEAD_DIM / 16u; ++i) {
            uvec4 w = is_k ? kc[row + i] : vc[row + i];
            float d = unpackHalf2x16(sw[i >> 2u])[(i >> 1u) & 1u];
            [[unroll]] for (uint c = 0; c < 4u; ++c) {
                int b = int(w[c]);
                r[4u * i + c] = d * vec4(bitfieldExtract(b, 0, 8), bitfieldExtract(b, 8, 8),
                                         bitfieldExtract(b, 16, 8), bitfieldExtract(b, 24, 8));
            }
        }
        return;
    }
    [[unroll]] for (uint i = 0; i < HEAD_DIM / 8u; ++i) {
        if (KV_TYPE == KV_F16) {
            uvec4 w = is_k ? kc[row + i] : vc[row + i];
            r[2u * i] = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
            r[2u * i + 1u] = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
        } else {
            r[2u * i] = uintBitsToFloat(is_k ? kc[row + 2u * i] : vc[row + 2u * i]);
            r[2u * i + 1u] = uintBitsToFloat(is_k ? kc[row + 2u * i + 1u] : vc[row + 2u * i + 1u]);
        }
    }
}

// Folds the key of K/V row `row` into this lane's state.
void visit(uint row) {
    vec4 r[HD4];
    load_row(true, row, r);
    float s[G];
    [[unroll]] for (uint g = 0; g < G; ++g) {
        s[g] = 0.0;
        [[unroll]] for (uint i = 0; i < HD4; ++i) s[g] += dot(qv[g * HD4 + i], r[i]);
        s[g] = soft_capped(s[g]);
    }
    float corr[G];
    float w[G];
    [[unroll]] for (uint g = 0; g < G; ++g) {
        // One exponential: the smaller of (old max, score) relative to the larger.
        bool up = s[g] > m_run[g];
        float e = exp(up ? m_run[g] - s[g] : s[g] - m_run[g]);
        corr[g] = up ? e : 1.0;
        w[g] = up ? 1.0 : e;
        l_run[g] = l_run[g] * corr[g] + w[g];
        m_run[g] = max(m_run[g], s[g]);
    }
    load_row(false, row, r);
    [[unroll]] for (uint g = 0; g < G; ++g) {
        [[unroll]] for (uint i = 0; i < HD4; ++i) acc[g * HD4 + i] = acc[g * HD4 + i] * corr[g] + w[g] * r[i];
    }
}

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint t = gl_WorkGroupID.y;
    uint group = p.n_heads / p.n_kv_heads;
    uint blocks = (group + G - 1u) / G;  // workgroups per KV head (the last may serve fewer)
    uint kvh = gl_WorkGroupID.x / blocks;
    uint g0 = (gl_WorkGroupID.x % blocks) * G;  // first head served, within the group
    uint n_g = min(G, group - g0);              // heads served: the others repeat the last
    uint q0 = (t * p.n_heads + kvh * group + g0) * HD4;  // its vec4 in q and out

    [[unroll]] for (uint g = 0; g < G; ++g) {
        uint qg = q0 + min(g, n_g - 1u) * HD4;
        [[unroll]] for (uint i = 0; i < HD4; ++i) {
            qv[g * HD4 + i] = q4[qg + i] * p.scale;
            acc[g * HD4 + i] = vec4(0.0);
        }
        m_run[g] = NO_MAX;
        l_run[g] = 0.0;
    }

    // The visible keys as one list: n_s sink positions, then n_w window positions from lo.
    uint n_s, lo, n_w;
    visible_keys(t, n_s, lo, n_w);
    int seq = seq_ids[t];
    uint ring = p.capacity - p.n_sink;
    uint total = n_s + n_w;
    // This workgroup's slice of the list [begin, end) (all of it without split-K).
    uint split = gl_WorkGroupID.z;
    uint slice = (total + SPLITS - 1u) / SPLITS;
    uint begin = min(split * slice, total), end = min(begin + slice, total);
    uint seq_slot0 = uint(max(seq, 0)) * p.capacity;
    // The slot of this lane's first window key, then WG keys further each time it takes one.
    uint j0 = begin + lane;
    uint first_w = j0 >= n_s ? j0 : j0 + (n_s - j0 + WG - 1u) / WG * WG;
    uint wslot = p.n_sink + (lo - p.n_sink + (first_w - n_s)) % ring;
    uint step = WG % ring;
    for (uint j = j0; j < end; j += WG) {
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
    // lane's accumulator counts with weight exp(m - M) / L. Each lane stores its weighted
    // accumulators once; the lanes then sum them column by column.
    [[unroll]] for (uint g = 0; g < G; ++g) {
        lane_m[g * WG + lane] = m_run[g];
        lane_l[g * WG + lane] = l_run[g];
    }
    barrier();
    // A slice leaves the sink and the division to the merge: its lanes' weights
    // are exp(m - M) alone, and it records M and L.
    float slice_m[G], slice_l[G];
    [[unroll]] for (uint g = 0; g < G; ++g) {
        bool sunk = SPLITS == 1u && p.has_sinks != 0u;
        float sink = sunk ? sinks[kvh * group + g0 + min(g, n_g - 1u)] : NO_MAX;
        float big = sink;
        for (uint i = 0; i < WG; ++i) big = max(big, lane_m[g * WG + i]);
        float sum = sunk ? exp(sink - big) : 0.0;
        for (uint i = 0; i < WG; ++i) sum += lane_l[g * WG + i] * exp(lane_m[g * WG + i] - big);
        float f = SPLITS > 1u ? exp(m_run[g] - big) : sum > 0.0 ? exp(m_run[g] - big) / sum : 0.0;  // no key: zeros
        slice_m[g] = big;
        slice_l[g] = sum;
        [[unroll]] for (uint i = 0; i < HD4; ++i) lane_acc[(lane * G + g) * HD4 + i] = acc[g * HD4 + i] * f;
    }
    barrier();
    for (uint col = lane; col < n_g * HD4; col += WG) {
        vec4 sum = vec4(0.0);
        for (uint i = 0; i < WG; ++i) sum += lane_acc[i * G * HD4 + col];
        if (SPLITS == 1u) {
            o4[q0 + col] = sum;
        } else {
            uint head = q0 / HD4 + col / HD4;  // t * n_heads + query head
            part[(head * SPLITS + split) * (HD4 + 1u) + col % HD4] = sum;
        }
    }
    if (SPLITS == 1u) return;
    if (lane == 0u) {
        [[unroll]] for (uint g = 0; g < G; ++g) {
            if (g < n_g) part[((q0 / HD4 + g) * SPLITS + split) * (HD4 + 1u) + HD4] = vec4(slice_m[g], slice_l[g], 0.0, 0.0);
        }
    }
    // Every lane's records out to the device before the count says this slice is done.
    memoryBarrierBuffer();
    barrier();
    if (lane == 0u) {
        uint a = t * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        last_slice = atomicAdd(arrivals[a], 1u) == SPLITS - 1u;
        if (last_slice) arrivals[a] = 0u;  // every slice has counted: ready for the next dispatch
    }
    barrier();
    if (!last_slice) return;
    memoryBarrierBuffer();  // the other slices' records, seen through their count
    for (uint g = 0; g < n_g; ++g) merge_slices(q0 / HD4 + g, lane);
}
