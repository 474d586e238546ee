#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
// Causal flash attention on cooperative matrices, for prefill steps: attention.comp's contract
// (same bindings and push constants, attention_common.glsl) with S = Q K^T and O += P V as
// f16 x f16 -> f32 matrix products in the device's shape (TM x TN x TK, specialization
// constants: 8x8x8 on lavapipe, 16x16x16 on NVIDIA).
//
// A workgroup serves ROWS query rows: TOK = ROWS / GH tokens times GH query heads of one KV
// head (row r: token r / GH, head r % GH), so the heads that share a KV head read each K/V
// tile once (GQA without copies). It walks the keys of its tokens' sequence in tiles of BC,
// as attention_tiled.comp does (a pass per sequence, the union of the tokens' visible keys):
//   1. the lanes load the tile's K and V rows into shared memory as f16 (dequantized from
//      F32, F16 or Q8_0 on the way), with their positions;
//   2. each subgroup multiplies its TM x TN blocks of S = Q K^T (Q pre-scaled, f16) into f32
//      accumulators and stores them to shared memory;
//   3. per row, TPR = WG / ROWS lanes mask S (other sequences, later positions, outside the
//      window, the sink positions kept), soft-cap it, move the running max, write
//      P = exp(S - max) as f16 and rescale the row's O by exp(old max - new max);
//   4. each subgroup adds P V to its TM x TN blocks of O.
// O lives in shared memory as f32, loaded into accumulators around each P V product: the
// online softmax rescales it per row, which a KHR cooperative matrix cannot do in place (it
// does not say which row an element is), and accumulators kept in registers would need a
// number of blocks per subgroup fixed at compile time, which the subgroup size (8 to 64, not
// always known before the pipeline runs) does not give. Memory stays O(tile): nothing grows
// with the number of keys.
// Finally each row is divided by its sum of exponentials (plus the sink logit's, where bound).
//
// Head sizes that are not a multiple of TK or TN (72 on a 16-wide shape) are padded with zero
// columns to DP. Subgroups take their blocks by gl_SubgroupID, so any subgroup size works.
//
// Loops: a pass per distinct sequence among the TOK tokens (at most the sequences the cache
// holds), a tile per BC keys of it, and per tile the blocks a subgroup owns (S's and O's, by
// gl_NumSubgroups), each a loop over the product's K dimension in steps of up to 4; the loops
// over loads, keys and rows have constant trip counts and are unrolled. The host keeps the
// total within llvmpipe's limit (AttentionKernels::attention_coop).
#include "common.glsl"

#include "attention_coopmat.h"
const uint WG = 128;
layout(local_size_x = 128) in;

#include "attention_common.glsl"

const uint TOK = ROWS / GH;                      // tokens per workgroup
const uint TPR = WG / ROWS;                      // lanes per row in the softmax
const uint DPAD = TK > TN ? TK : TN;             // the head's columns come in multiples of it
const uint DP = (HEAD_DIM + DPAD - 1u) / DPAD * DPAD;
const uint HD4 = HEAD_DIM / 4u;
const uint S_BLOCKS = (ROWS / TM) * (BC / TN);   // of S, per tile
const uint O_BLOCKS = (ROWS / TM) * (DP / TN);   // of O
// The products' steps along K, unrolled by up to 4 (unrolled in full, a head of 256 on an 8-deep
// shape takes llvmpipe ten times as long to compile).
const uint S_UNROLL = (DP / TK) % 4u == 0u ? 4u : (DP / TK) % 2u == 0u ? 2u : 1u;
const uint O_UNROLL = (BC / TK) % 4u == 0u ? 4u : (BC / TK) % 2u == 0u ? 2u : 1u;
const uint COLS_PER_LANE = (BC + TPR - 1u) / TPR;
const uint DIMS_PER_LANE = (DP + TPR - 1u) / TPR;
// A K/V row as units of one uvec4 of the cache: F32 4 values, F16 8, Q8_0 16 quants (its
// scales sit in the row's last uvec4).
const uint UNITS = KV_TYPE == KV_F32 ? HD4 : KV_TYPE == KV_F16 ? HEAD_DIM / 8u : HEAD_DIM / 16u;
const uint PER_UNIT = HEAD_DIM / UNITS;

shared float16_t qs[ROWS * DP];  // the rows' queries, pre-scaled; zeros past HEAD_DIM
shared float16_t ks[BC * DP];    // the tile's keys, then values; zeros past the key list
shared float16_t vs[BC * DP];
shared float os[ROWS * DP];      // the rows' unnormalised outputs
shared float ss[ROWS * BC];      // the tile's scores
shared float16_t ps[ROWS * BC];  // their exponentials
shared int key_pos[BC];          // the tile's key positions, -1 past the list
// Per token of the workgroup: its sequence (-1 if it sees nothing), position, the start of its
// window (INT_MAX when it has none) and its sink count.
shared int tok_seq[TOK], tok_pos[TOK], tok_lo[TOK], tok_ns[TOK];
shared float lane_l[WG];  // each lane's share of its row's sum of exponentials

// Value i of unit u of K (is_k) or V row `row` (in uvec4 of the cache), at column c of the
// tile; a unit's values are consecutive.
void load_unit(bool is_k, uint row, uint u, uint c) {
    uvec4 w = is_k ? kc[row + u] : vc[row + u];
    uint o = c * DP + u * PER_UNIT;
    if (KV_TYPE == KV_F32) {
        vec4 x = uintBitsToFloat(w);
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            if (is_k) ks[o + i] = float16_t(x[i]); else vs[o + i] = float16_t(x[i]);
        }
    } else if (KV_TYPE == KV_F16) {
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
            f16vec2 x = unpackFloat2x16(w[i]);
            if (is_k) {
                ks[o + 2u * i] = x.x;
                ks[o + 2u * i + 1u] = x.y;
            } else {
                vs[o + 2u * i] = x.x;
                vs[o + 2u * i + 1u] = x.y;
            }
        }
    } else {
        uvec4 sw = is_k ? kc[row + HEAD_DIM / 16u] : vc[row + HEAD_DIM / 16u];
        float d = unpackHalf2x16(sw[u >> 2u])[(u >> 1u) & 1u];
        [[unroll]] for (uint i = 0; i < 16u; ++i) {
            float x = d * float(bitfieldExtract(int(w[i >> 2u]), int(8u * (i & 3u)), 8));
            if (is_k) ks[o + i] = float16_t(x); else vs[o + i] = float16_t(x);
        }
    }
}

void main() {
    uint lane = gl_LocalInvocationID.x;
    uint group = p.n_heads / p.n_kv_heads;
    uint blocks = (group + GH - 1u) / GH;  // workgroups per KV head (the last may serve fewer)
    uint kvh = gl_WorkGroupID.x / blocks;
    uint g0 = (gl_WorkGroupID.x % blocks) * GH;  // first head served, within the group
    uint t0 = gl_WorkGroupID.y * TOK;
    uint h0 = kvh * group + g0;  // the first query head served

    // The queries, pre-scaled, as f16: zeros for rows past the step, the group, TOK * GH.
    [[unroll]] for (uint k = 0; k < (ROWS * (DP / 4u) + WG - 1u) / WG; ++k) {
        uint i = k * WG + lane, r = i / (DP / 4u), c4 = i % (DP / 4u);
        uint t = t0 + r / GH, g = g0 + r % GH;
        if (i >= ROWS * (DP / 4u)) continue;
        vec4 x = vec4(0.0);
        if (r / GH < TOK && t < p.n_tokens && g < group && c4 < HD4)
            x = q4[(t * p.n_heads + h0 + r % GH) * HD4 + c4] * p.scale;
        [[unroll]] for (uint e = 0; e < 4u; ++e) qs[r * DP + 4u * c4 + e] = float16_t(x[e]);
    }
    // The padding columns of K and V, never loaded.
    [[unroll]] for (uint k = 0; k < (BC * (DP - HEAD_DIM) + WG - 1u) / WG; ++k) {
        uint i = k * WG + lane;
        if (i >= BC * (DP - HEAD_DIM)) continue;
        uint c = i / (DP - HEAD_DIM), d = HEAD_DIM + i % (DP - HEAD_DIM);
        ks[c * DP + d] = float16_t(0.0);
        vs[c * DP + d] = float16_t(0.0);
    }
    coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> zero =
        coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(0.0);
    for (uint b = gl_SubgroupID; b < O_BLOCKS; b += gl_NumSubgroups) {
        uint mi = b / (DP / TN), ni = b % (DP / TN);
        coopMatStore(zero, os, mi * TM * DP + ni * TN, DP, gl_CooperativeMatrixLayoutRowMajor);
    }
    if (lane < TOK) {
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

    uint r = lane / TPR, part = lane % TPR;  // this lane's row and its share of it
    uint tr = r / GH;                        // the row's token within the workgroup
    int my_seq = tr < TOK ? tok_seq[tr] : -1;
    int my_pos = tr < TOK ? tok_pos[tr] : 0, my_lo = tr < TOK ? tok_lo[tr] : 0x7fffffff;
    int my_ns = tr < TOK ? tok_ns[tr] : 0;
    float m_run = NO_MAX, l_run = 0.0;  // the row's running max; this lane's share of its sum

    for (uint r0 = 0; r0 < TOK; ++r0) {
        // A pass for the sequence of token r0 unless an earlier token had it (or it sees nothing).
        int seq = tok_seq[r0];
        bool seen = seq < 0;
        for (uint r1 = 0; r1 < r0; ++r1) seen = seen || tok_seq[r1] == seq;
        if (seen) continue;
        // Its keys: the most sinks any of its tokens sees, then the union of their windows.
        uint n_s = 0u;
        int lo = 0x7fffffff, hi = -1;
        for (uint r1 = r0; r1 < TOK; ++r1) {
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
            // 1. K and V as f16.
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
                    [[unroll]] for (uint e = 0; e < PER_UNIT; ++e) {
                        ks[c * DP + u * PER_UNIT + e] = float16_t(0.0);
                        vs[c * DP + u * PER_UNIT + e] = float16_t(0.0);
                    }
                    if (u == 0u) key_pos[c] = -1;
                }
            }
            barrier();
            // 2. S = Q K^T: K's rows read as the columns of B.
            for (uint b = gl_SubgroupID; b < S_BLOCKS; b += gl_NumSubgroups) {
                uint mi = b / (BC / TN), ni = b % (BC / TN);
                coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc = zero;
                [[dont_unroll]] for (uint k0 = 0; k0 < DP / TK; k0 += S_UNROLL) {
                    [[unroll]] for (uint kk = 0; kk < S_UNROLL; ++kk) {
                        uint k = k0 + kk;
                        coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> qa;
                        coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> kb;
                        coopMatLoad(qa, qs, mi * TM * DP + k * TK, DP, gl_CooperativeMatrixLayoutRowMajor);
                        coopMatLoad(kb, ks, ni * TN * DP + k * TK, DP, gl_CooperativeMatrixLayoutColumnMajor);
                        acc = coopMatMulAdd(qa, kb, acc);
                    }
                }
                coopMatStore(acc, ss, mi * TM * BC + ni * TN, BC, gl_CooperativeMatrixLayoutRowMajor);
            }
            barrier();
            // 3. The online softmax of row r: every lane of the row finds the same new max, then
            // takes its share of the columns (P) and of the row of O (the rescale).
            float tile_max = NO_MAX;
            [[unroll]] for (uint c = 0; c < BC; ++c) {
                int kp = key_pos[c];
                bool vis = kp >= 0 && my_seq == seq && (kp < my_ns || (kp >= my_lo && kp <= my_pos));
                if (vis) tile_max = max(tile_max, soft_capped(ss[r * BC + c]));
            }
            float m_new = max(m_run, tile_max);
            float corr = exp(m_run - m_new);
            l_run *= corr;
            [[unroll]] for (uint i = 0; i < COLS_PER_LANE; ++i) {
                uint c = part + i * TPR;
                if (c >= BC) continue;
                int kp = key_pos[c];
                bool vis = kp >= 0 && my_seq == seq && (kp < my_ns || (kp >= my_lo && kp <= my_pos));
                // The sum takes the weight as P V will see it, rounded to f16.
                float16_t w = float16_t(vis ? exp(soft_capped(ss[r * BC + c]) - m_new) : 0.0);
                ps[r * BC + c] = w;
                l_run += float(w);
            }
            [[unroll]] for (uint i = 0; i < DIMS_PER_LANE; ++i) {
                uint d = part + i * TPR;
                if (d < DP) os[r * DP + d] *= corr;
            }
            m_run = m_new;
            barrier();
            // 4. O += P V.
            for (uint b = gl_SubgroupID; b < O_BLOCKS; b += gl_NumSubgroups) {
                uint mi = b / (DP / TN), ni = b % (DP / TN);
                coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> acc;
                coopMatLoad(acc, os, mi * TM * DP + ni * TN, DP, gl_CooperativeMatrixLayoutRowMajor);
                [[dont_unroll]] for (uint k0 = 0; k0 < BC / TK; k0 += O_UNROLL) {
                    [[unroll]] for (uint kk = 0; kk < O_UNROLL; ++kk) {
                        uint k = k0 + kk;
                        coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> pa;
                        coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> vb;
                        coopMatLoad(pa, ps, mi * TM * BC + k * TK, BC, gl_CooperativeMatrixLayoutRowMajor);
                        coopMatLoad(vb, vs, k * TK * DP + ni * TN, DP, gl_CooperativeMatrixLayoutRowMajor);
                        acc = coopMatMulAdd(pa, vb, acc);
                    }
                }
                coopMatStore(acc, os, mi * TM * DP + ni * TN, DP, gl_CooperativeMatrixLayoutRowMajor);
            }
            barrier();
        }
    }

    // The row's sum from its lanes' shares; the sink logit joins it without a value; a row that
    // saw no key gets zeros.
    lane_l[lane] = l_run;
    barrier();
    float sum_l = 0.0;
    [[unroll]] for (uint i = 0; i < TPR; ++i) sum_l += lane_l[r * TPR + i];
    uint g = g0 + r % GH, t = t0 + tr;
    bool stored = tr < TOK && t < p.n_tokens && g < group;
    float sink = p.has_sinks != 0u && stored ? sinks[h0 + r % GH] : NO_MAX;
    float big = max(m_run, sink);
    float sum = sum_l * exp(m_run - big) + (p.has_sinks != 0u ? exp(sink - big) : 0.0);
    float f = sum > 0.0 ? exp(m_run - big) / sum : 0.0;
    if (stored) {
        [[unroll]] for (uint i = 0; i < (HD4 + TPR - 1u) / TPR; ++i) {
            uint c4 = part + i * TPR;
            if (c4 < HD4) {
                uint o = r * DP + 4u * c4;
                o4[(t * p.n_heads + h0 + r % GH) * HD4 + c4] = vec4(os[o], os[o + 1u], os[o + 2u], os[o + 3u]) * f;
            }
        }
    }
}
