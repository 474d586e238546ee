// What the attention kernel tests share: a step's tokens, caches uploaded as the kernels store
// them, and the sink logits the CPU reference does not model.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/half.h"
#include "gpu_fixture.h"
#include "reference/attention_ref.h"
#include "reference/cpu_ops.h"

struct Step {
    std::vector<int32_t> pos, seq, begin;
};

class AttentionFixture : public GpuTest {
  protected:
    using AttentionShape = vkllm::gpu::AttentionShape;
    using Buffer = vkllm::gpu::Buffer;
    using KvType = vkllm::gpu::KvType;
    using StepView = vkllm::gpu::StepView;

    // Uploads cache values (rows of head_dim) as the kernel stores them; `seen` gets the
    // values it will read.
    Buffer cache(const std::vector<float> &values, KvType kv, uint32_t head_dim,
                 std::vector<float> &seen) {
        if (kv == KvType::F32) {
            seen = values;
            return upload(values);
        }
        if (kv == KvType::F16) return upload(ref::to_f16(values, &seen));
        // Q8_0 rows: GGUF's 34-byte blocks regrouped as the row's quants, then its scales.
        std::vector<uint8_t> blocks = ref::to_q8_0(values, &seen), rows;
        size_t n_rows = values.size() / head_dim, per_row = head_dim / 32;
        for (size_t r = 0; r < n_rows; ++r) {
            for (size_t b = 0; b < per_row; ++b) {
                const uint8_t *blk = &blocks[(r * per_row + b) * 34];
                rows.insert(rows.end(), blk + 2, blk + 34);
            }
            std::vector<uint8_t> tail(16, 0);
            for (size_t b = 0; b < per_row; ++b) {
                tail[2 * b] = blocks[(r * per_row + b) * 34];
                tail[2 * b + 1] = blocks[(r * per_row + b) * 34 + 1];
            }
            rows.insert(rows.end(), tail.begin(), tail.end());
        }
        return upload(rows);
    }

    AttentionShape shape(const ref::AttnShape &s, uint32_t n_tokens, KvType kv) {
        AttentionShape sh{n_tokens,   s.n_heads, s.n_kv_heads, s.head_dim,
                          s.capacity, s.n_sink,  kv,           float(s.scale)};
        sh.softcap = float(s.softcap);
        return sh;
    }

    // GPT-OSS-like sink logits per query head: random, scaled to matter next to the scores.
    static std::vector<float> sink_logits(uint32_t heads, uint32_t seed) {
        std::vector<float> s = ref::random(heads, seed);
        for (float &x : s)
            x *= 4.0f;
        return s;
    }

    // A Q8_0 cache of rows of head_dim as floats.
    static std::vector<float> dequantize_q8_0_cache(const std::vector<uint8_t> &bytes,
                                                    uint32_t head_dim) {
        size_t row_bytes = head_dim + 16, n_rows = bytes.size() / row_bytes;
        std::vector<float> out(n_rows * head_dim);
        for (size_t r = 0; r < n_rows; ++r) {
            const uint8_t *row = &bytes[r * row_bytes];
            for (uint32_t i = 0; i < head_dim; ++i) {
                uint16_t h = uint16_t(row[head_dim + 2 * (i / 32)] |
                                      (row[head_dim + 2 * (i / 32) + 1] << 8));
                out[r * head_dim + i] = vkllm::half_to_float(h) * float(int8_t(row[i]));
            }
        }
        return out;
    }

    // A cache's contents (as downloaded floats) as the values it holds.
    static std::vector<float> values(const std::vector<float> &raw, KvType kv, uint32_t head_dim) {
        if (kv == KvType::F32) return raw;
        std::vector<uint8_t> bytes(raw.size() * 4);
        std::memcpy(bytes.data(), raw.data(), bytes.size());
        if (kv == KvType::Q8_0) return dequantize_q8_0_cache(bytes, head_dim);
        std::vector<float> out(bytes.size() / 2);
        for (size_t i = 0; i < out.size(); ++i)
            out[i] = vkllm::half_to_float(uint16_t(bytes[2 * i] | (bytes[2 * i + 1] << 8)));
        return out;
    }

    // The cache types a head size can use.
    static std::vector<KvType> kv_types(uint32_t head_dim) {
        if (head_dim % 32) return {KvType::F32, KvType::F16};
        return {KvType::F32, KvType::F16, KvType::Q8_0};
    }

    struct Uploaded {
        Buffer pos, seq, begin;
        StepView view() const { return StepView{pos.range(), seq.range(), begin.range()}; }
    };
    Uploaded upload_step(const Step &st) {
        return Uploaded{upload(st.pos), upload(st.seq), upload(st.begin)};
    }

    // The reference with a sink logit per query head: a key with that score and no value, so
    // each output is the reference's scaled by L / (L + exp(sink)), L the sum of exp(score)
    // over the visible keys (computed here in double as the reference does).
    static void add_sink_logits(std::vector<float> &out, const std::vector<float> &q,
                                const std::vector<float> &ks, const Step &st,
                                const ref::AttnShape &s, uint32_t n_seq,
                                const std::vector<float> &sinks) {
        size_t d = s.head_dim, kv_dim = size_t(s.n_kv_heads) * d;
        for (size_t t = 0; t < st.pos.size(); ++t) {
            if (st.pos[t] < 0 || st.seq[t] < 0 || st.seq[t] >= int32_t(n_seq)) continue;
            std::vector<int64_t> vis = ref::visible_positions(st.pos[t], st.begin[t], s.n_sink);
            for (uint32_t h = 0; h < s.n_heads; ++h) {
                size_t kvh = h / (s.n_heads / s.n_kv_heads);
                std::vector<double> score;
                for (int64_t p : vis) {
                    size_t row =
                        (size_t(st.seq[t]) * s.capacity + ref::kv_slot(p, s.capacity, s.n_sink)) *
                            kv_dim +
                        kvh * d;
                    double dot = 0;
                    for (size_t i = 0; i < d; ++i)
                        dot += double(q[(t * s.n_heads + h) * d + i]) * ks[row + i];
                    double x = dot * s.scale;
                    score.push_back(s.softcap > 0 ? s.softcap * std::tanh(x / s.softcap) : x);
                }
                double big = sinks[h];
                for (double x : score)
                    big = std::max(big, x);
                double sum = 0;
                for (double x : score)
                    sum += std::exp(x - big);
                double f = sum / (sum + std::exp(sinks[h] - big));
                for (size_t i = 0; i < d; ++i)
                    out[(t * s.n_heads + h) * d + i] = float(out[(t * s.n_heads + h) * d + i] * f);
            }
        }
    }
};
