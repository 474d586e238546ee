// The bindings, push constants and key list shared by attention.comp, attention_tiled.comp and
// attention_coopmat.comp (Kernels::attention binds them alike). The including file gives
// HEAD_DIM and KV_TYPE.

#include "attention_common.h"

layout(binding = AttentionBindings_q) readonly buffer Q { vec4 q4[]; };  // [n_tokens][n_heads][HEAD_DIM]
layout(binding = AttentionBindings_k_cache) readonly buffer KCache { uvec4 kc[]; };
layout(binding = AttentionBindings_v_cache) readonly buffer VCache { uvec4 vc[]; };
layout(binding = AttentionBindings_out) writeonly buffer Out { vec4 o4[]; };  // [n_tokens][n_heads][HEAD_DIM]
layout(binding = AttentionBindings_positions) readonly buffer Positions { int positions[]; };
layout(binding = AttentionBindings_seq_ids) readonly buffer SeqIds { int seq_ids[]; };
layout(binding = AttentionBindings_kv_begin) readonly buffer KvBegin { int kv_begin[]; };
layout(binding = AttentionBindings_sinks) readonly buffer Sinks { float sinks[]; };  // [n_heads] when has_sinks

// Gemma 2's attention-logit soft-capping where SOFTCAP is set (a specialization constant:
// other models compile without it): softcap * tanh(s / softcap). The argument is clamped where
// tanh is already +-1 in float (some drivers' exp-based tanh overflows to inf / inf).
float soft_capped(float s) {
    return SOFTCAP != 0u ? p.softcap * tanh(clamp(s / p.softcap, -10.0, 10.0)) : s;
}

const float NO_MAX = -3.0e38;  // running max before any key (finite: exp(NO_MAX - NO_MAX) = 1)

// uvec4 per K or V row
const uint ROW4 = KV_TYPE == KV_F32 ? HEAD_DIM / 4u : KV_TYPE == KV_F16 ? HEAD_DIM / 8u : HEAD_DIM / 16u + 1u;

// The keys token t sees, as one list: n_s sink positions [0, n_s), then n_w window positions
// [lo, lo + n_w). The window never starts before the sinks nor further back than the ring
// holds, nor (sliding-window layers) before pos - window + 1. A token with a negative position
// or a sequence the cache does not hold sees nothing.
void visible_keys(uint t, out uint n_s, out uint lo, out uint n_w) {
    int pos = positions[t];
    int seq = seq_ids[t];
    uint ring = p.capacity - p.n_sink;
    n_s = 0u;
    n_w = 0u;
    lo = p.n_sink;
    if (pos >= 0 && seq >= 0 && seq < int(p.n_seq)) {
        n_s = min(p.n_sink, uint(pos) + 1u);
        int lo_i = max(max(kv_begin[t], int(p.n_sink)), pos - int(ring) + 1);
        if (p.window > 0u) lo_i = max(lo_i, pos - int(p.window) + 1);
        if (lo_i <= pos) {
            lo = uint(lo_i);
            n_w = uint(pos) - lo + 1u;
        }
    }
}

// The slot of position kp: sinks first, then a ring for the rest.
uint key_slot(uint kp) {
    return kp < p.n_sink ? kp : p.n_sink + (kp - p.n_sink) % (p.capacity - p.n_sink);
}
