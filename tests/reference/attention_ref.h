// CPU references (double precision) for the KV cache, attention and argmax kernels, and BF16
// rounding for weight tests. Written for clarity, not speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ref {

struct AttnShape {
    uint32_t n_heads, n_kv_heads, head_dim;
    uint32_t capacity;  // KV slots per sequence
    uint32_t n_sink;    // positions [0, n_sink) live in slots [0, n_sink)
    double scale;
    double softcap = 0;  // > 0: each scaled score s becomes softcap * tanh(s / softcap)
};

// The slot of position p: p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink).
uint32_t kv_slot(int64_t p, uint32_t capacity, uint32_t n_sink);

// The positions token (pos, kv_begin) sees: [0, min(n_sink, pos + 1)) then [kv_begin, pos].
std::vector<int64_t> visible_positions(int64_t pos, int64_t kv_begin, uint32_t n_sink);

// Caches are [n_seq][capacity][n_kv_heads][head_dim] values (F16 caches: the F16-rounded values).
// Writes k[t], v[t] ([n_tokens][n_kv_heads * head_dim]) into the slot of positions[t] of
// sequence seq_ids[t]; tokens with a negative position or a sequence outside [0, n_seq) are
// skipped.
void kv_store(const std::vector<float> &k, const std::vector<float> &v,
              const std::vector<int32_t> &positions, const std::vector<int32_t> &seq_ids,
              const AttnShape &s, uint32_t n_seq, std::vector<float> &k_cache,
              std::vector<float> &v_cache);

// out[t][h] = sum over visible p of softmax(scale * q[t][h] . K[p]) V[p] (the score soft-capped
// where s.softcap > 0), K/V of KV head
// h / (n_heads / n_kv_heads) of sequence seq_ids[t]; zeros for a token with no visible key.
std::vector<float> attention(const std::vector<float> &q, const std::vector<float> &k_cache,
                             const std::vector<float> &v_cache,
                             const std::vector<int32_t> &positions,
                             const std::vector<int32_t> &seq_ids,
                             const std::vector<int32_t> &kv_begin, const AttnShape &s,
                             uint32_t n_seq);

// Index of the largest value of each row, lowest on ties (NaNs skipped; 0 for a row of NaNs).
std::vector<int32_t> argmax(const std::vector<float> &x, uint32_t rows, uint32_t cols);

// Rounds each value to BF16, nearest even (returns the bits; `rounded` gets their values).
std::vector<uint16_t> to_bf16(const std::vector<float> &v, std::vector<float> *rounded);

}  // namespace ref
