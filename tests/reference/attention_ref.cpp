#include "reference/attention_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ref {

uint32_t kv_slot(int64_t p, uint32_t capacity, uint32_t n_sink) {
    if (p < int64_t(n_sink)) return uint32_t(p);
    return uint32_t(n_sink + (p - n_sink) % (capacity - n_sink));
}

std::vector<int64_t> visible_positions(int64_t pos, int64_t kv_begin, uint32_t n_sink) {
    std::vector<int64_t> out;
    for (int64_t p = 0; p < std::min<int64_t>(n_sink, pos + 1); ++p)
        out.push_back(p);
    for (int64_t p = kv_begin; p <= pos; ++p)
        out.push_back(p);
    return out;
}

void kv_store(const std::vector<float> &k, const std::vector<float> &v,
              const std::vector<int32_t> &positions, const std::vector<int32_t> &seq_ids,
              const AttnShape &s, uint32_t n_seq, std::vector<float> &k_cache,
              std::vector<float> &v_cache) {
    size_t kv_dim = size_t(s.n_kv_heads) * s.head_dim;
    for (size_t t = 0; t < positions.size(); ++t) {
        if (positions[t] < 0 || seq_ids[t] < 0 || seq_ids[t] >= int32_t(n_seq)) continue;
        size_t slot = kv_slot(positions[t], s.capacity, s.n_sink);
        size_t dst = (size_t(seq_ids[t]) * s.capacity + slot) * kv_dim;
        for (size_t i = 0; i < kv_dim; ++i) {
            k_cache[dst + i] = k[t * kv_dim + i];
            v_cache[dst + i] = v[t * kv_dim + i];
        }
    }
}

std::vector<float> attention(const std::vector<float> &q, const std::vector<float> &k_cache,
                             const std::vector<float> &v_cache,
                             const std::vector<int32_t> &positions,
                             const std::vector<int32_t> &seq_ids,
                             const std::vector<int32_t> &kv_begin, const AttnShape &s,
                             uint32_t n_seq) {
    size_t d = s.head_dim;
    size_t kv_dim = size_t(s.n_kv_heads) * d;
    uint32_t group = s.n_heads / s.n_kv_heads;
    std::vector<float> out(positions.size() * s.n_heads * d, 0.0f);
    for (size_t t = 0; t < positions.size(); ++t) {
        if (positions[t] < 0 || seq_ids[t] < 0 || seq_ids[t] >= int32_t(n_seq)) continue;
        std::vector<int64_t> vis = visible_positions(positions[t], kv_begin[t], s.n_sink);
        for (uint32_t h = 0; h < s.n_heads; ++h) {
            const float *qh = &q[(t * s.n_heads + h) * d];
            size_t kvh = h / group;
            std::vector<double> score(vis.size());
            double big = -INFINITY;
            for (size_t j = 0; j < vis.size(); ++j) {
                size_t row =
                    (size_t(seq_ids[t]) * s.capacity + kv_slot(vis[j], s.capacity, s.n_sink)) *
                        kv_dim +
                    kvh * d;
                double dot = 0;
                for (size_t i = 0; i < d; ++i)
                    dot += double(qh[i]) * k_cache[row + i];
                score[j] = dot * s.scale;
                if (s.softcap > 0) score[j] = s.softcap * std::tanh(score[j] / s.softcap);
                big = std::max(big, score[j]);
            }
            double sum = 0;
            for (double &x : score)
                sum += (x = std::exp(x - big));
            for (size_t i = 0; i < d; ++i) {
                double o = 0;
                for (size_t j = 0; j < vis.size(); ++j) {
                    size_t row =
                        (size_t(seq_ids[t]) * s.capacity + kv_slot(vis[j], s.capacity, s.n_sink)) *
                            kv_dim +
                        kvh * d;
                    o += score[j] * v_cache[row + i];
                }
                out[(t * s.n_heads + h) * d + i] = vis.empty() ? 0.0f : float(o / sum);
            }
        }
    }
    return out;
}

std::vector<int32_t> argmax(const std::vector<float> &x, uint32_t rows, uint32_t cols) {
    std::vector<int32_t> ids(rows, 0);
    for (uint32_t r = 0; r < rows; ++r) {
        bool found = false;
        float best = 0;
        for (uint32_t c = 0; c < cols; ++c) {
            float v = x[size_t(r) * cols + c];
            if (std::isnan(v)) continue;
            if (!found || v > best) best = v, ids[r] = int32_t(c), found = true;
        }
    }
    return ids;
}

std::vector<uint16_t> to_bf16(const std::vector<float> &v, std::vector<float> *rounded) {
    std::vector<uint16_t> out(v.size());
    if (rounded) rounded->resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        uint32_t bits;
        std::memcpy(&bits, &v[i], 4);
        // Round to nearest even on the dropped 16 bits (test data is finite).
        bits += 0x7fffu + ((bits >> 16) & 1u);
        out[i] = uint16_t(bits >> 16);
        if (rounded) {
            uint32_t back = uint32_t(out[i]) << 16;
            std::memcpy(&(*rounded)[i], &back, 4);
        }
    }
    return out;
}

}  // namespace ref
