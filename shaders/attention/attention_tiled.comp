#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Tiled causal flash attention, for prefill steps on GPUs: attention.comp's contract (same
// bindings and push constants, attention_common.glsl), but a workgroup serves BR tokens of one
// query head, so each K/V row is read once per BR tokens rather than once per token.
//
// The workgroup walks the keys of its tokens' sequence in tiles of BC: the 64 lanes load a
// tile of K and V (as F32) into shared memory, each of a token's TPR = 64 / BR lanes scores
// its token's query against BC / TPR of the tile's keys (masking the keys its token does not
// see: later positions, other windows), and then, per token, the online softmax (running max
// and sum) and the output accumulators move on by the tile, each lane owning every TPR-th vec4
// of the head's dimensions.
// BR and BC are specialization constants that the host picks from the head size and the
// device's shared memory (Kernels::attention_tiled): 16 x 16 up to head_dim 128, smaller
// tiles for larger heads (head_dim 256 takes 16 x 8 in 48 KiB, 8 x 8 in lavapipe's 32 KiB).
// The tile list of a sequence is the union of its tokens' visible keys (sinks, then the
// window positions from the lowest start to the highest position). A step with tokens of
// several sequences in one workgroup makes a pass per sequence.
//
// Loops: a pass per distinct sequence (at most BR) and a tile per BC keys of it; the loops
// over a tile's loads, keys and dimensions have constant trip counts and are unrolled. So an
// invocation iterates at most BR (capacity / BC + 2) + BR^2 times, which the host keeps within
// llvmpipe's limit (LAVAPIPE.md).
#include "common.glsl"

#include "attention_tiled.h"
const uint WG = 64;
layout(local_size_x = 64) in;

#include "attention_common.glsl"

const uint TPR = WG / BR;  // lanes per token (BC is a multiple of it)
const uint HD4 = HEAD_DIM / 4u;
const uint DPT = (HD4 + TPR - 1u) / TPR;  // vec4 of the output a lane owns (the last lanes may own one fewer)
// A K/V row as units of one uvec4 of the cache: F32 4 values, F16 8, Q8_0 16 quants (its
// scales sit in the row's last uvec4).
const uint UNITS = KV_TYPE == KV_F32 ? HD4 : KV_TYPE == KV_F16 ? HEAD_DIM / 8u : HEAD_DIM / 16u;

shared vec4 qs[BR * HD4];  // the tile's queries, pre-scaled
shared vec4 ks[BC * HD4];
shared vec4 vs[BC * HD4];
shared float scores[BR * BC];  // NO_MAX where the token does not see the key
shared int key_pos[BC];        // the tile's key positions, -1 past the list
// Per token of the workgroup: its sequence (-1 if it sees nothing), position, the start of its
// window (INT_MAX when it has none) and its sink count.
shared int tok_seq[BR], tok_pos[BR], tok_lo[BR], tok_ns[BR];

// Unit u of K (is_k) or V row `row` (in uvec4 of the cache) into column c of the tile.
void load_unit(bool is_k, uint row, uint u, uint c) {
    uvec4 w = is_k ? kc[row + u] : vc[row + u];
    uint o = c * HD4;
    if (KV_TYPE == KV_F32) {
        vec4 x = uintBitsToFloat(w);
        if (is_k) ks[o + u] = x; else vs[o + u] = x;
    } else if (KV_TYPE == KV_F16) {
        vec4 a = vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
        vec4 b = vec4(unpackHalf2x16(w.z), unpackHalf2x16(w.w));
        if (is_k) {
            ks[o + 2u * u] = a;
            ks[o + 2u * u + 1u] = b;
        } else {
            vs[o + 2u * u] = a;
            vs[o + 2u * u + 1u] = b;
        }
    } else {
        uvec4 sw = is_k ? kc[row + HEAD_DIM / 16u] : vc[row + HEAD_DIM / 16u];
        float d = unpackHalf2x16(sw[u >> 2u])[(u >> 1u) & 1u];
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            int b = int(w[i]);
            vec4 x = d * vec4(bitfieldExtract(b, 0, 8), bitfieldExtract(b, 8, 8), bitfieldExtract(b, 16, 8),
                              bitfieldExtract(b, 24, 8));
            if (is_k) ks[o + 4u * u + i] = x; else vs[o + 4u * u + i] = x;
        }
    }
}

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint h = gl_WorkGroupID.x;
    uint t0 = gl_WorkGroupID.y * BR;
    uint kvh = h / (p.n_heads / p.n_kv_heads);

    [[unroll]] for (uint k = 0; k < (BR * HD4 + WG - 1u) / WG; ++k) {
        uint i = k * WG + lane, t = t0 + i / HD4;
        if (i < BR * HD4) qs[i] = t < p.n_tokens ? q4[(t * p.n_heads + h) * HD4 + i % HD4] * p.scale : vec4(0.0);
    }
    if (lane < BR) {
        uint n_s = 0u, lo = 0u, n_w = 0u, t = t0 + lane;
        int seq = -1, pos = 0;
        if (t < p.n_tokens) {
            visible_keys(t, n_s, lo, n_w);
            seq = n_s + n_w > 0u ? seq_ids[t] : -1;
            pos = positions[t];
        }
        tok_seq[lane] = seq;
        tok_pos[lane] = pos;
        tok_lo[lane] = n_w > 0u ? int(lo) : 0x7fffffff;
        tok_ns[lane] = int(n_s);
    }
    barrier();

    uint r = lane / TPR, part = lane % TPR;  // this lane's token and its share of it
    int my_seq = tok_seq[r], my_pos = tok_pos[r], my_lo = tok_lo[r], my_ns = tok_ns[r];
    vec4 acc[DPT];
    [[unroll]] for (uint d = 0; d < DPT; ++d) acc[d] = vec4(0.0);
    float m_run = NO_MAX, l_run = 0.0;

    for (uint r0 = 0; r0 < BR; ++r0) {
        // A pass for the sequence of token r0 unless an earlier token had it (or it sees nothing).
        int seq = tok_seq[r0];
        bool seen = seq < 0;
        for (uint r1 = 0; r1 < r0; ++r1) seen = seen || tok_seq[r1] == seq;
        if (seen) continue;
        // Its keys: the most sinks any of its tokens sees, then the union of their windows.
        uint n_s = 0u;
        int lo = 0x7fffffff, hi = -1;
        for (uint r1 = r0; r1 < BR; ++r1) {
            if (tok_seq[r1] != seq) continue;
            n_s = max(n_s, uint(tok_ns[r1]));
            if (tok_lo[r1] <= tok_pos[r1]) {
                lo = min(lo, tok_lo[r1]);
                hi = max(hi, tok_pos[r1]);
            }
        }
        uint total = n_s + (hi >= lo ? uint(hi - lo + 1) : 0u);
        uint seq_slot0 = uint(seq) * p.capacity;
        for (uint base = 0; base < total; base += BC) {
            [[unroll]] for (uint k = 0; k < (BC * UNITS + WG - 1u) / WG; ++k) {
                uint i = k * WG + lane, c = i / UNITS, u = i % UNITS, j = base + c;
                if (i >= BC * UNITS) continue;
                if (j < total) {
                    uint kp = j < n_s ? j : uint(lo) + (j - n_s);
                    uint row = ((seq_slot0 + key_slot(kp)) * p.n_kv_heads + kvh) * ROW4;
                    load_unit(true, row, u, c);
                    load_unit(false, row, u, c);
                    if (u == 0u) key_pos[c] = int(kp);
                } else {
                    // Zeros, not stale values: a masked key's weight is 0, and 0 x NaN is NaN.
                    [[unroll]] for (uint e = 0; e < HD4 / UNITS; ++e) {
                        ks[c * HD4 + u * (HD4 / UNITS) + e] = vec4(0.0);
                        vs[c * HD4 + u * (HD4 / UNITS) + e] = vec4(0.0);
                    }
                    if (u == 0u) key_pos[c] = -1;
                }
            }
            barrier();
            [[unroll]] for (uint i = 0; i < BC / TPR; ++i) {
                uint c = part + i * TPR;
                int kp = key_pos[c];
                bool seen_key = kp >= 0 && my_seq == seq && (kp < my_ns || (kp >= my_lo && kp <= my_pos));
                float s = 0.0;
                [[unroll]] for (uint d = 0; d < HD4; ++d) s += dot(qs[r * HD4 + d], ks[c * HD4 + d]);
                scores[r * BC + c] = seen_key ? soft_capped(s) : NO_MAX;
            }
            barrier();
            float tile_max = NO_MAX;
            [[unroll]] for (uint c = 0; c < BC; ++c) tile_max = max(tile_max, scores[r * BC + c]);
            if (tile_max > NO_MAX) {
                float m_new = max(m_run, tile_max);
                float corr = exp(m_run - m_new);
                l_run *= corr;
                [[unroll]] for (uint d = 0; d < DPT; ++d) acc[d] *= corr;
                [[unroll]] for (uint c = 0; c < BC; ++c) {
                    float s = scores[r * BC + c];
                    float w = s > NO_MAX ? exp(s - m_new) : 0.0;
                    l_run += w;
                    [[unroll]] for (uint d = 0; d < DPT; ++d) {
                        if (part + d * TPR < HD4) acc[d] += w * vs[c * HD4 + part + d * TPR];
                    }
                }
                m_run = m_new;
            }
            barrier();
        }
    }

    // The sink logit joins the denominator without a value; a token that saw no key gets zeros.
    float sink = p.has_sinks != 0u ? sinks[h] : NO_MAX;
    float big = max(m_run, sink);
    float sum = l_run * exp(m_run - big) + (p.has_sinks != 0u ? exp(sink - big) : 0.0);
    float f = sum > 0.0 ? exp(m_run - big) / sum : 0.0;
    uint t = t0 + r;
    if (t < p.n_tokens) {
        [[unroll]] for (uint d = 0; d < DPT; ++d) {
            if (part + d * TPR < HD4) o4[(t * p.n_heads + h) * HD4 + part + d * TPR] = acc[d] * f;
        }
    }
}
