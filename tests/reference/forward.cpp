#include "reference/forward.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

#include "format/gguf.h"
#include "format/quant.h"
#include "reference/cpu_ops.h"

namespace ref {

namespace {

using Vec = std::vector<double>;
using vkllm::format::GgufFile;
using vkllm::format::TensorInfo;

[[noreturn]] void bad(const GgufFile &f, const std::string &what) {
    throw std::runtime_error(f.path() + ": " + what);
}

// Every element exactly as the file stores it: F16 and BF16 widen to float without rounding;
// block-quantized types are dequantized as ggml does (format/quant.h, checked against gguf-py
// by the quantization tests).
Vec values(const GgufFile &f, const TensorInfo &t) {
    uint32_t type = t.type->id;
    if (!vkllm::format::can_dequantize(type))
        bad(f, t.name + " has type " + t.type->name + ", which the reference cannot read");
    std::vector<float> v(t.n_elements);
    vkllm::format::dequantize_row(type, f.tensor_data(t), v.data(), t.n_elements);
    return Vec(v.begin(), v.end());
}

const TensorInfo &tensor(const GgufFile &f, const std::string &name) {
    const TensorInfo *t = f.find_tensor(name);
    if (!t) bad(f, "no tensor " + name);
    return *t;
}

std::string shape(const TensorInfo &t) {
    std::string s;
    for (uint32_t d = 0; d < t.n_dims; ++d)
        s += (d ? ", " : "[") + std::to_string(t.dims[d]);
    return s + "]";
}

Matrix read_matrix(const GgufFile &f, const std::string &name, uint32_t cols, uint32_t rows) {
    const TensorInfo &t = tensor(f, name);
    if (t.n_dims != 2 || t.dims[0] != cols || t.dims[1] != rows)
        bad(f, name + " is " + shape(t) + ", expected [" + std::to_string(cols) + ", " +
                   std::to_string(rows) + "]");
    return Matrix{rows, cols, values(f, t)};
}

Vec read_vector(const GgufFile &f, const std::string &name, uint32_t n) {
    const TensorInfo &t = tensor(f, name);
    if (t.n_dims != 1 || t.dims[0] != n)
        bad(f, name + " is " + shape(t) + ", expected [" + std::to_string(n) + "]");
    return values(f, t);
}

Vec read_optional_vector(const GgufFile &f, const std::string &name, uint32_t n) {
    return f.find_tensor(name) ? read_vector(f, name, n) : Vec();
}

uint32_t key_u32(const GgufFile &f, const std::string &key, std::optional<uint32_t> fallback) {
    std::optional<int64_t> v = f.get_int(key);
    if (!v && fallback) return *fallback;
    if (!v) bad(f, "no key " + key);
    if (*v <= 0 || *v > int64_t(UINT32_MAX)) bad(f, key + " = " + std::to_string(*v));
    return uint32_t(*v);
}

// y = W x (+ b).
Vec project(const Matrix &m, const Vec &x, const Vec &bias = Vec()) {
    Vec y(m.rows);
    for (uint32_t r = 0; r < m.rows; ++r) {
        const double *row = &m.w[size_t(r) * m.cols];
        double s = 0;
        for (uint32_t c = 0; c < m.cols; ++c)
            s += row[c] * x[c];
        y[r] = bias.empty() ? s : s + bias[r];
    }
    return y;
}

// x[0..n) / sqrt(mean(x^2) + eps) * w, in place.
void rms_norm(double *x, size_t n, const Vec &w, double eps) {
    double ss = 0;
    for (size_t i = 0; i < n; ++i)
        ss += x[i] * x[i];
    double inv = 1.0 / std::sqrt(ss / double(n) + eps);
    for (size_t i = 0; i < n; ++i)
        x[i] = x[i] * inv * w[i];
}

Vec rms_normed(Vec x, const Vec &w, double eps) {
    rms_norm(x.data(), x.size(), w, eps);
    return x;
}

// (x - mean) / sqrt(var + eps) * w + b.
Vec layer_normed(Vec x, const Vec &w, const Vec &b, double eps) {
    double mean = 0, var = 0;
    for (double v : x)
        mean += v;
    mean /= double(x.size());
    for (double v : x)
        var += (v - mean) * (v - mean);
    double inv = 1.0 / std::sqrt(var / double(x.size()) + eps);
    for (size_t i = 0; i < x.size(); ++i)
        x[i] = (x[i] - mean) * inv * w[i] + b[i];
    return x;
}

// The model's pre-norm: LayerNorm with bias for gpt2, RMSNorm otherwise.
Vec normed(const ModelRef &m, const Vec &x, const Vec &w, const Vec &b) {
    return m.gpt2 ? layer_normed(x, w, b, m.norm_eps) : rms_normed(x, w, m.norm_eps);
}

// Rotates the first rot_dim values of one head by pos * base^(-2i/rot_dim) for pair i.
void rope(const ModelRef &m, double *head, int pos) {
    uint32_t half = m.rot_dim / 2;
    for (uint32_t i = 0; i < half; ++i) {
        double angle = pos * std::pow(m.rope_base, -2.0 * i / m.rot_dim);
        double *a = m.neox_rope ? &head[i] : &head[2 * i];
        double *b = m.neox_rope ? &head[i + half] : &head[2 * i + 1];
        double x0 = *a, x1 = *b;
        *a = x0 * std::cos(angle) - x1 * std::sin(angle);
        *b = x0 * std::sin(angle) + x1 * std::cos(angle);
    }
}

double silu(double v) {
    return v / (1.0 + std::exp(-v));
}

// x[t] += attention over the positions s <= t with visible(t, s), of layer L, for every t.
void attention(const ModelRef &m, const LayerRef &L, std::vector<Vec> &x,
               const Visibility &visible) {
    size_t n = x.size();
    uint32_t hd = m.head_dim;
    std::vector<Vec> q(n), k(n), v(n);
    for (size_t t = 0; t < n; ++t) {
        Vec h = normed(m, x[t], L.attn_norm, L.attn_norm_b);
        q[t] = project(L.wq, h, L.bq);
        k[t] = project(L.wk, h, L.bk);
        v[t] = project(L.wv, h, L.bv);
        for (uint32_t head = 0; head < m.n_head; ++head) {
            if (!L.q_norm.empty()) rms_norm(&q[t][head * hd], hd, L.q_norm, m.norm_eps);
            rope(m, &q[t][head * hd], int(t));
        }
        for (uint32_t head = 0; head < m.n_head_kv; ++head) {
            if (!L.k_norm.empty()) rms_norm(&k[t][head * hd], hd, L.k_norm, m.norm_eps);
            rope(m, &k[t][head * hd], int(t));
        }
    }
    uint32_t group = m.n_head / m.n_head_kv;
    double scale = 1.0 / std::sqrt(double(hd));
    for (size_t t = 0; t < n; ++t) {
        Vec out(size_t(m.n_head) * hd, 0.0);
        for (uint32_t head = 0; head < m.n_head; ++head) {
            const double *qh = &q[t][head * hd];
            uint32_t kv = head / group;
            Vec score(t + 1);
            double max_score = -INFINITY;
            for (size_t s = 0; s <= t; ++s) {
                double dot = 0;
                for (uint32_t i = 0; i < hd; ++i)
                    dot += qh[i] * k[s][kv * hd + i];
                score[s] = visible(uint32_t(t), uint32_t(s)) ? dot * scale : -INFINITY;
                max_score = std::max(max_score, score[s]);
            }
            double sum = 0;
            for (double &sc : score) {
                sc = std::exp(sc - max_score);
                sum += sc;
            }
            for (size_t s = 0; s <= t; ++s)
                for (uint32_t i = 0; i < hd; ++i)
                    out[head * hd + i] += score[s] / sum * v[s][kv * hd + i];
        }
        Vec o = project(L.wo, out, L.bo);
        for (uint32_t i = 0; i < m.n_embd; ++i)
            x[t][i] += o[i];
    }
}

void feed_forward(const ModelRef &m, const LayerRef &L, std::vector<Vec> &x) {
    for (Vec &xt : x) {
        Vec h = normed(m, xt, L.ffn_norm, L.ffn_norm_b);
        Vec act(m.n_ff);
        if (m.gpt2) {
            Vec up = project(L.up, h, L.b_up);
            for (uint32_t i = 0; i < m.n_ff; ++i)
                act[i] = gelu_tanh(up[i]);
        } else {
            Vec gate = project(L.gate, h), up = project(L.up, h);
            for (uint32_t i = 0; i < m.n_ff; ++i)
                act[i] = silu(gate[i]) * up[i];
        }
        Vec down = project(L.down, act, L.b_down);
        for (uint32_t i = 0; i < m.n_embd; ++i)
            xt[i] += down[i];
    }
}

// GPT-2's fused attn_qkv: rows [0, q_dim) are Q, then K, then V (so for its bias).
void read_gpt2_layer(const GgufFile &f, const ModelRef &m, const std::string &b, LayerRef &L) {
    uint32_t d = m.n_embd;
    L.attn_norm = read_vector(f, b + "attn_norm.weight", d);
    L.attn_norm_b = read_vector(f, b + "attn_norm.bias", d);
    Matrix qkv = read_matrix(f, b + "attn_qkv.weight", d, 3 * d);
    Vec bqkv = read_vector(f, b + "attn_qkv.bias", 3 * d);
    Matrix *parts[3] = {&L.wq, &L.wk, &L.wv};
    Vec *biases[3] = {&L.bq, &L.bk, &L.bv};
    for (uint32_t i = 0; i < 3; ++i) {
        *parts[i] = Matrix{
            d, d, Vec(qkv.w.begin() + size_t(i) * d * d, qkv.w.begin() + size_t(i + 1) * d * d)};
        *biases[i] = Vec(bqkv.begin() + size_t(i) * d, bqkv.begin() + size_t(i + 1) * d);
    }
    L.wo = read_matrix(f, b + "attn_output.weight", d, d);
    L.bo = read_vector(f, b + "attn_output.bias", d);
    L.ffn_norm = read_vector(f, b + "ffn_norm.weight", d);
    L.ffn_norm_b = read_vector(f, b + "ffn_norm.bias", d);
    L.up = read_matrix(f, b + "ffn_up.weight", d, m.n_ff);
    L.b_up = read_vector(f, b + "ffn_up.bias", m.n_ff);
    L.down = read_matrix(f, b + "ffn_down.weight", m.n_ff, d);
    L.b_down = read_vector(f, b + "ffn_down.bias", d);
}

}  // namespace

std::unique_ptr<ModelRef> load_model_ref(const std::string &gguf_path) {
    GgufFile f(gguf_path);
    auto m = std::make_unique<ModelRef>();
    m->arch = std::string(f.get_string("general.architecture").value_or(""));
    if (m->arch != "llama" && m->arch != "qwen2" && m->arch != "qwen3" && m->arch != "gpt2")
        bad(f, "architecture \"" + m->arch + "\" (llama, qwen2, qwen3 and gpt2 are supported)");
    m->gpt2 = m->arch == "gpt2";
    const std::string a = m->arch + ".";
    m->n_embd = key_u32(f, a + "embedding_length", std::nullopt);
    m->n_layer = key_u32(f, a + "block_count", std::nullopt);
    m->n_head = key_u32(f, a + "attention.head_count", std::nullopt);
    m->n_head_kv = key_u32(f, a + "attention.head_count_kv", m->n_head);
    m->head_dim = key_u32(f, a + "attention.key_length", m->n_embd / m->n_head);
    m->rot_dim = m->gpt2 ? 0 : key_u32(f, a + "rope.dimension_count", m->head_dim);
    m->n_ff = key_u32(f, a + "feed_forward_length", std::nullopt);
    m->rope_base = f.get_float(a + "rope.freq_base").value_or(10000.0);
    std::string eps_key =
        a + (m->gpt2 ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon");
    std::optional<double> eps = f.get_float(eps_key);
    if (!eps) bad(f, "no key " + eps_key);
    m->norm_eps = *eps;
    m->neox_rope = m->arch != "llama";
    if (m->n_head % m->n_head_kv != 0) bad(f, "head_count is not a multiple of head_count_kv");
    if (m->rot_dim % 2 != 0 || m->rot_dim > m->head_dim)
        bad(f, "rope.dimension_count " + std::to_string(m->rot_dim) + " for head_dim " +
                   std::to_string(m->head_dim));

    const TensorInfo &embd = tensor(f, "token_embd.weight");
    if (embd.n_dims != 2) bad(f, "token_embd.weight is " + shape(embd));
    m->n_vocab = uint32_t(embd.dims[1]);
    m->token_embd = read_matrix(f, "token_embd.weight", m->n_embd, m->n_vocab);
    m->output_norm = read_vector(f, "output_norm.weight", m->n_embd);
    if (m->gpt2) {
        m->output_norm_b = read_vector(f, "output_norm.bias", m->n_embd);
        uint32_t n_pos = key_u32(f, a + "context_length", std::nullopt);
        m->position_embd = read_matrix(f, "position_embd.weight", m->n_embd, n_pos);
    }
    m->tied_output = f.find_tensor("output.weight") == nullptr;
    m->output =
        m->tied_output ? m->token_embd : read_matrix(f, "output.weight", m->n_embd, m->n_vocab);

    uint32_t q_dim = m->n_head * m->head_dim, kv_dim = m->n_head_kv * m->head_dim;
    for (uint32_t i = 0; i < m->n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        LayerRef L;
        if (m->gpt2) {
            read_gpt2_layer(f, *m, b, L);
            m->layers.push_back(std::move(L));
            continue;
        }
        L.attn_norm = read_vector(f, b + "attn_norm.weight", m->n_embd);
        L.wq = read_matrix(f, b + "attn_q.weight", m->n_embd, q_dim);
        L.wk = read_matrix(f, b + "attn_k.weight", m->n_embd, kv_dim);
        L.wv = read_matrix(f, b + "attn_v.weight", m->n_embd, kv_dim);
        L.bq = read_optional_vector(f, b + "attn_q.bias", q_dim);
        L.bk = read_optional_vector(f, b + "attn_k.bias", kv_dim);
        L.bv = read_optional_vector(f, b + "attn_v.bias", kv_dim);
        L.wo = read_matrix(f, b + "attn_output.weight", q_dim, m->n_embd);
        if (m->arch == "qwen3") {
            L.q_norm = read_vector(f, b + "attn_q_norm.weight", m->head_dim);
            L.k_norm = read_vector(f, b + "attn_k_norm.weight", m->head_dim);
        }
        L.ffn_norm = read_vector(f, b + "ffn_norm.weight", m->n_embd);
        L.gate = read_matrix(f, b + "ffn_gate.weight", m->n_embd, m->n_ff);
        L.up = read_matrix(f, b + "ffn_up.weight", m->n_embd, m->n_ff);
        L.down = read_matrix(f, b + "ffn_down.weight", m->n_ff, m->n_embd);
        m->layers.push_back(std::move(L));
    }
    return m;
}

std::vector<std::vector<double>> forward_logits_f64(const ModelRef &m,
                                                    const std::vector<int32_t> &tokens) {
    return forward_logits_masked_f64(m, tokens, [](uint32_t, uint32_t) { return true; });
}

std::vector<std::vector<float>> forward_logits_masked(const ModelRef &m,
                                                      const std::vector<int32_t> &tokens,
                                                      const Visibility &visible) {
    std::vector<std::vector<float>> out;
    for (const Vec &l : forward_logits_masked_f64(m, tokens, visible))
        out.emplace_back(l.begin(), l.end());
    return out;
}

std::vector<std::vector<double>> forward_logits_masked_f64(const ModelRef &m,
                                                           const std::vector<int32_t> &tokens,
                                                           const Visibility &visible) {
    std::vector<Vec> x;
    for (int32_t id : tokens) {
        if (id < 0 || uint32_t(id) >= m.n_vocab)
            throw std::runtime_error("token id " + std::to_string(id) + " is outside the " +
                                     std::to_string(m.n_vocab) + "-token vocabulary");
        const double *row = &m.token_embd.w[size_t(id) * m.n_embd];
        x.emplace_back(row, row + m.n_embd);
        if (m.gpt2) {
            size_t p = x.size() - 1;
            if (p >= m.position_embd.rows)
                throw std::runtime_error("position " + std::to_string(p) + " is past gpt2's " +
                                         std::to_string(m.position_embd.rows));
            for (uint32_t i = 0; i < m.n_embd; ++i)
                x.back()[i] += m.position_embd.w[p * m.n_embd + i];
        }
    }
    for (const LayerRef &L : m.layers) {
        attention(m, L, x, visible);
        feed_forward(m, L, x);
    }
    std::vector<Vec> logits;
    for (const Vec &xt : x)
        logits.push_back(project(m.output, normed(m, xt, m.output_norm, m.output_norm_b)));
    return logits;
}

std::vector<std::vector<float>> forward_logits(const ModelRef &m,
                                               const std::vector<int32_t> &tokens) {
    std::vector<std::vector<float>> out;
    for (const Vec &l : forward_logits_f64(m, tokens))
        out.emplace_back(l.begin(), l.end());
    return out;
}

std::vector<int32_t> greedy(const ModelRef &m, std::vector<int32_t> prompt, int n) {
    if (prompt.empty()) throw std::runtime_error("greedy: the prompt is empty");
    std::vector<int32_t> out;
    for (int k = 0; k < n; ++k) {
        Vec last = forward_logits_f64(m, prompt).back();
        int32_t best = 0;
        for (uint32_t id = 1; id < m.n_vocab; ++id)
            if (last[id] > last[best]) best = int32_t(id);
        out.push_back(best);
        prompt.push_back(best);
    }
    return out;
}

}  // namespace ref
