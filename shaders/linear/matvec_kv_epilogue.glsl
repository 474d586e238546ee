// The KV cache store of the QKV projection, fused into its matrix-vector kernel
// (matvec_texel_kv.comp, matvec_texel_kv_subgroup.comp): on a GPU a decode step's kv_store is a
// dispatch and a barrier of its own (~10 us) for a few kilobytes. The stacked outputs are heads
// of head_dim rows: Q's, then K's, then V's. A workgroup that has stored its rows counts them
// into each head they belong to (`arrivals`, per vector and head); the workgroup that completes
// a head finishes it: Q's head rotated in place, K's rotated into the cache, V's into the cache
// (kv_write.glsl, as kv_store.comp would), and its count back to zero for the next dispatch.
// Without RoPE, Q's rows are left as they are and not counted. Include after emit() and the
// stacked outputs y, yk and yv, which are coherent here: the last workgroup reads what the
// others wrote in the same dispatch (attention.comp's split-K merge does likewise).
layout(binding = MatvecTexelKvBindings_k_cache) writeonly buffer KCache { uvec4 kc[]; };
layout(binding = MatvecTexelKvBindings_v_cache) writeonly buffer VCache { uvec4 vc[]; };
layout(binding = MatvecTexelKvBindings_positions) readonly buffer Positions { int positions[]; };
layout(binding = MatvecTexelKvBindings_seq_ids) readonly buffer SeqIds { int seq_ids[]; };
layout(binding = MatvecTexelKvBindings_table) readonly buffer Table { vec2 cos_sin[]; };
layout(binding = MatvecTexelKvBindings_arrivals) coherent buffer Arrivals { uint arrivals[]; };

float kv_k(uint i) { return yk[i]; }
vec4 kv_k4(uint i) { return vec4(yk[4u * i], yk[4u * i + 1u], yk[4u * i + 2u], yk[4u * i + 3u]); }
vec4 kv_v4(uint i) { return vec4(yv[4u * i], yv[4u * i + 1u], yv[4u * i + 2u], yv[4u * i + 3u]); }
float kv_q(uint i) { return y[i]; }
void kv_set_q(uint i, float value) { y[i] = value; }
#include "kv_write.glsl"

// The (vector, head) pairs this workgroup completes, as vector * heads + head: its ROWS rows
// of NB vectors reach at most ROWS heads each.
shared uint kv_finished[NB * ROWS];
shared uint kv_count;

// Head h (of all the stacked heads) of vector t, complete: rotated and stored.
void finish_head(uint t, uint h, uint lane) {
    uint q_heads = p.k_row0 / p.head_dim, kv_heads = (p.v_row0 - p.k_row0) / p.head_dim;
    uint kv_dim = kv_heads * p.head_dim;
    int pos = positions[t];
    if (h < q_heads) {
        // As kv_store.comp rotates Q: every token, its position clamped to the table.
        uint position = uint(clamp(pos, 0, int(p.n_pos) - 1));
        for (uint i = lane; i < p.rot_dim / 2u; i += WG) rotate_q_pair(t * p.k_row0 + h * p.head_dim, i, position);
        return;
    }
    int seq = seq_ids[t];
    if (pos < 0 || seq < 0 || seq >= int(p.n_seq)) return;
    uint up = uint(pos), slot = kv_slot(up);
    bool is_k = h < q_heads + kv_heads;
    uint kh = h - q_heads - (is_k ? 0u : kv_heads);
    uint src = t * kv_dim + kh * p.head_dim;  // the head's first float in yk or yv
    if (KV_TYPE == KV_Q8_0) {
        // One lane: a block's scale needs the largest of its 32 values.
        if (lane == 0u) store_q8_0(is_k, src / 4u, ((uint(seq) * p.capacity + slot) * kv_heads + kh) * (p.head_dim / 16u + 1u), up);
        return;
    }
    uint units = kv_dim / 8u;
    for (uint u = lane; u < p.head_dim / 8u; u += WG) {
        uint at = src + 8u * u, dst = (uint(seq) * p.capacity + slot) * units + kh * (p.head_dim / 8u) + u;
        if (is_k)
            store8(true, dst, k_vec4(at, up), k_vec4(at + 4u, up));
        else
            store8(false, dst, kv_v4(at / 4u), kv_v4(at / 4u + 1u));
    }
}

void kv_epilogue(uint lane) {
    // Every lane's rows out to the device before the counts say they are there.
    memoryBarrierBuffer();
    barrier();
    if (lane == 0u) {
        uint heads = p.v_row0 / p.head_dim + (p.v_row0 - p.k_row0) / p.head_dim;
        uint first = max(p.y_offset + row0, ROPE == ROPE_NONE ? p.k_row0 : 0u);  // rows of the whole matrix
        uint end = p.y_offset + min(row0 + ROWS, p.rows);
        uint found = 0u;
        for (uint j = 0; j < NB && b0 + j < p.n && first < end; ++j) {
            for (uint h = first / p.head_dim; h * p.head_dim < end; ++h) {
                uint mine = min(end, (h + 1u) * p.head_dim) - max(first, h * p.head_dim);
                uint a = (b0 + j) * heads + h;
                if (atomicAdd(arrivals[a], mine) + mine == p.head_dim) {
                    arrivals[a] = 0u;
                    kv_finished[found++] = a;
                }
            }
        }
        kv_count = found;
    }
    barrier();
    if (kv_count == 0u) return;
    memoryBarrierBuffer();  // the other workgroups' rows, seen through their counts
    uint heads = p.v_row0 / p.head_dim + (p.v_row0 - p.k_row0) / p.head_dim;
    for (uint f = 0; f < kv_count; ++f) finish_head(kv_finished[f] / heads, kv_finished[f] % heads, lane);
}
