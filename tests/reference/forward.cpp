#include "reference/forward.h"

#include <algorithm>
#include <cmath>
#include <numeric>
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

// The n [cols, rows] slabs of a GGUF tensor [cols, rows, n]: slab e is expert e's matrix.
std::vector<Matrix> read_experts(const GgufFile &f, const std::string &name, uint32_t cols,
                                 uint32_t rows, uint32_t n) {
    const TensorInfo &t = tensor(f, name);
    if (t.n_dims != 3 || t.dims[0] != cols || t.dims[1] != rows || t.dims[2] != n)
        bad(f, name + " is " + shape(t) + ", expected [" + std::to_string(cols) + ", " +
                   std::to_string(rows) + ", " + std::to_string(n) + "]");
    Vec all = values(f, t);
    size_t slab = size_t(rows) * cols;
    std::vector<Matrix> out;
    for (uint32_t e = 0; e < n; ++e)
        out.push_back(
            Matrix{rows, cols, Vec(all.begin() + e * slab, all.begin() + (e + 1) * slab)});
    return out;
}

// The n columns of a GGUF tensor [rows, n]: column e is expert e's bias.
std::vector<Vec> read_expert_biases(const GgufFile &f, const std::string &name, uint32_t rows,
                                    uint32_t n) {
    Matrix m = read_matrix(f, name, rows, n);
    std::vector<Vec> out;
    for (uint32_t e = 0; e < n; ++e)
        out.emplace_back(m.w.begin() + size_t(e) * rows, m.w.begin() + size_t(e + 1) * rows);
    return out;
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

// The model's pre-norm: LayerNorm with bias for gpt2, RMSNorm otherwise; none for olmo2 (no
// weight).
Vec normed(const ModelRef &m, const Vec &x, const Vec &w, const Vec &b) {
    if (w.empty()) return x;
    return m.gpt2 ? layer_normed(x, w, b, m.norm_eps) : rms_normed(x, w, m.norm_eps);
}

// ggml_rope_yarn_corr_dim: the pair index whose wavelength fits n_rot times into the original
// context, i.e. n_dims * ln(n_ctx_orig / (n_rot * 2 pi)) / (2 ln base).
double yarn_corr_dim(double n_dims, double n_ctx_orig, double n_rot, double base) {
    return n_dims * std::log(n_ctx_orig / (n_rot * 2.0 * 3.14159265358979323846)) /
           (2.0 * std::log(base));
}

// Rotates the first rot_dim values of one head by pos * base^(-2i/rot_dim) for pair i. With
// YaRN (ggml's rope_yarn, i being i0/2 there): the angle mixes the interpolated angle
// (divided by the factor) with that one by ramp(i) * ext_factor, ramp(i) = 1 - clamp((i - low)
// / max(0.001, high - low), 0, 1), and cos and sin are scaled by attn_factor * (1 + 0.1 ln
// factor) (the log term only when ext_factor != 0).
void rope(const ModelRef &m, const LayerRef &L, double *head, int pos) {
    uint32_t half = m.rot_dim / 2;
    double base = m.gemma3 ? L.rope_base : m.rope_base;
    const Vec *factors = &m.rope_freqs;
    if (!m.rope_long.empty())
        factors =
            (m.n_ctx ? m.n_ctx : m.n_ctx_train) > m.rope_orig_ctx ? &m.rope_long : &m.rope_short;
    for (uint32_t i = 0; i < half; ++i) {
        double angle = pos / L.rope_linear * std::pow(base, -2.0 * i / m.rot_dim);
        if (!factors->empty()) angle /= (*factors)[i];
        double mscale = m.rope_attn_factor;
        if (m.yarn) {
            double interpolated = angle / m.yarn_factor;
            double low = m.yarn_corr_dims[0], high = m.yarn_corr_dims[1];
            double y = (double(i) - low) / std::max(0.001, high - low);
            double mix = (1.0 - std::clamp(y, 0.0, 1.0)) * m.yarn_ext_factor;
            angle = interpolated * (1.0 - mix) + angle * mix;
            mscale *= m.yarn_attn_factor;
            if (m.yarn_ext_factor != 0.0) mscale *= 1.0 + 0.1 * std::log(m.yarn_factor);
        }
        double c = std::cos(angle) * mscale, s = std::sin(angle) * mscale;
        double *a = m.neox_rope ? &head[i] : &head[2 * i];
        double *b = m.neox_rope ? &head[i + half] : &head[2 * i + 1];
        double x0 = *a, x1 = *b;
        *a = x0 * c - x1 * s;
        *b = x0 * s + x1 * c;
    }
}

double silu(double v) {
    return v / (1.0 + std::exp(-v));
}

double sigmoid(double v) {
    return 1.0 / (1.0 + std::exp(-v));
}

// gpt-oss's clamped SwiGLU (ggml's swiglu_oai with alpha 1.702, limit 7).
double swiglu_oai(double gate, double up) {
    double g = std::min(gate, 7.0);
    double u = std::clamp(up, -7.0, 7.0);
    return (u + 1.0) * g * sigmoid(1.702 * g);
}

// x[t] += attention over the positions s <= t with visible(t, s), of layer L, for every t; on
// a sliding-window layer only the keys s > t - window. A head's sink logit, if any, joins the
// softmax's denominator (unscaled, with no value).
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
        if (m.olmo2) {  // over the whole projections, before the heads are split
            q[t] = rms_normed(q[t], L.q_norm, m.norm_eps);
            k[t] = rms_normed(k[t], L.k_norm, m.norm_eps);
        }
        for (uint32_t head = 0; head < m.n_head; ++head) {
            if (!m.olmo2 && !L.q_norm.empty()) rms_norm(&q[t][head * hd], hd, L.q_norm, m.norm_eps);
            if (L.rope) rope(m, L, &q[t][head * hd], int(t));
        }
        for (uint32_t head = 0; head < m.n_head_kv; ++head) {
            if (!m.olmo2 && !L.k_norm.empty()) rms_norm(&k[t][head * hd], hd, L.k_norm, m.norm_eps);
            if (L.rope) rope(m, L, &k[t][head * hd], int(t));
        }
    }
    uint32_t group = m.n_head / m.n_head_kv;
    double scale = m.attn_scale > 0 ? m.attn_scale : 1.0 / std::sqrt(double(hd));
    for (size_t t = 0; t < n; ++t) {
        Vec out(size_t(m.n_head) * hd, 0.0);
        for (uint32_t head = 0; head < m.n_head; ++head) {
            const double *qh = &q[t][head * hd];
            uint32_t kv = head / group;
            Vec score(t + 1);
            double max_score = L.sinks.empty() ? -INFINITY : L.sinks[head];
            for (size_t s = 0; s <= t; ++s) {
                double dot = 0;
                for (uint32_t i = 0; i < hd; ++i)
                    dot += qh[i] * k[s][kv * hd + i];
                bool in_window = L.window == 0 || t - s < L.window;
                bool seen = in_window && visible(uint32_t(t), uint32_t(s));
                double sc = dot * scale;
                if (m.attn_softcap > 0) sc = m.attn_softcap * std::tanh(sc / m.attn_softcap);
                score[s] = seen ? sc : -INFINITY;
                max_score = std::max(max_score, score[s]);
            }
            double sum = L.sinks.empty() ? 0.0 : std::exp(L.sinks[head] - max_score);
            for (double &sc : score) {
                sc = std::exp(sc - max_score);
                sum += sc;
            }
            for (size_t s = 0; s <= t; ++s)
                for (uint32_t i = 0; i < hd; ++i)
                    out[head * hd + i] += score[s] / sum * v[s][kv * hd + i];
        }
        Vec o = project(L.wo, out, L.bo);
        if (!L.post_attn_norm.empty()) o = rms_normed(o, L.post_attn_norm, m.norm_eps);
        for (uint32_t i = 0; i < m.n_embd; ++i)
            x[t][i] += m.residual_scale * o[i];
    }
}

// The mixture-of-experts FFN of one normed input h: the routed experts' outputs, weighted,
// plus the shared expert's, if any.
Vec moe(const ModelRef &m, const LayerRef &L, const Vec &h) {
    Vec out(m.n_embd, 0.0);
    std::vector<int> experts;
    Vec weights;
    route(m, project(L.router, h, L.router_b), &experts, &weights);
    auto bias = [](const std::vector<Vec> &b, int e) { return b.empty() ? Vec() : b[e]; };
    for (size_t k = 0; k < experts.size(); ++k) {
        int e = experts[k];
        Vec gate = project(L.gate_exps[e], h, bias(L.gate_exps_b, e));
        Vec up = project(L.up_exps[e], h, bias(L.up_exps_b, e));
        Vec act(m.n_ff_exp);
        for (uint32_t i = 0; i < m.n_ff_exp; ++i)
            act[i] = m.swiglu_oai ? swiglu_oai(gate[i], up[i]) : silu(gate[i]) * up[i];
        Vec down = project(L.down_exps[e], act, bias(L.down_exps_b, e));
        for (uint32_t i = 0; i < m.n_embd; ++i)
            out[i] += weights[k] * down[i];
    }
    if (!L.shexp_gate.empty()) {
        double g = 0;
        for (uint32_t i = 0; i < m.n_embd; ++i)
            g += L.shexp_gate[i] * h[i];
        Vec gate = project(L.gate_shexp, h), up = project(L.up_shexp, h);
        Vec act(m.n_ff_shexp);
        for (uint32_t i = 0; i < m.n_ff_shexp; ++i)
            act[i] = silu(gate[i]) * up[i];
        Vec down = project(L.down_shexp, act);
        for (uint32_t i = 0; i < m.n_embd; ++i)
            out[i] += sigmoid(g) * down[i];
    }
    return out;
}

void feed_forward(const ModelRef &m, const LayerRef &L, std::vector<Vec> &x) {
    for (Vec &xt : x) {
        Vec h = normed(m, xt, L.ffn_norm, L.ffn_norm_b);
        if (m.routing != Routing::none) {
            Vec out = moe(m, L, h);
            for (uint32_t i = 0; i < m.n_embd; ++i)
                xt[i] += out[i];
            continue;
        }
        Vec act(m.n_ff);
        if (m.gpt2) {
            Vec up = project(L.up, h, L.b_up);
            for (uint32_t i = 0; i < m.n_ff; ++i)
                act[i] = gelu_tanh(up[i]);
        } else {
            Vec gate = project(L.gate, h), up = project(L.up, h);
            for (uint32_t i = 0; i < m.n_ff; ++i)
                act[i] = (m.gemma3 || m.gemma2 ? gelu_tanh(gate[i]) : silu(gate[i])) * up[i];
        }
        Vec down = project(L.down, act, L.b_down);
        if (!L.post_ffn_norm.empty()) down = rms_normed(down, L.post_ffn_norm, m.norm_eps);
        for (uint32_t i = 0; i < m.n_embd; ++i)
            xt[i] += m.residual_scale * down[i];
    }
}

// Rows [first, first + n) of m.
Matrix row_block(const Matrix &m, uint32_t first, uint32_t n) {
    auto at = [&](uint32_t r) { return m.w.begin() + std::ptrdiff_t(size_t(r) * m.cols); };
    return Matrix{n, m.cols, Vec(at(first), at(first + n))};
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
    const std::vector<std::string> known = {"llama",    "qwen2",   "qwen3",  "gpt2",  "qwen2moe",
                                            "gpt-oss",  "gemma2",  "gemma3", "olmo2", "phi3",
                                            "qwen3moe", "smollm3", "granite"};
    if (std::find(known.begin(), known.end(), m->arch) == known.end())
        bad(f, "architecture \"" + m->arch +
                   "\" (llama, qwen2, qwen3, gpt2, qwen2moe, gpt-oss, gemma2, gemma3, olmo2, phi3, "
                   "qwen3moe, smollm3 and granite are supported)");
    m->gpt2 = m->arch == "gpt2";
    m->gemma2 = m->arch == "gemma2";
    m->gemma3 = m->arch == "gemma3";
    m->phi3 = m->arch == "phi3";
    m->olmo2 = m->arch == "olmo2";
    const bool qwen2moe = m->arch == "qwen2moe", gpt_oss = m->arch == "gpt-oss";
    const bool qwen3moe = m->arch == "qwen3moe";
    const std::string a = m->arch + ".";
    m->n_embd = key_u32(f, a + "embedding_length", std::nullopt);
    m->n_layer = key_u32(f, a + "block_count", std::nullopt);
    m->n_head = key_u32(f, a + "attention.head_count", std::nullopt);
    m->n_head_kv = key_u32(f, a + "attention.head_count_kv", m->n_head);
    m->head_dim = key_u32(f, a + "attention.key_length", m->n_embd / m->n_head);
    m->rot_dim = m->gpt2 ? 0 : key_u32(f, a + "rope.dimension_count", m->head_dim);
    m->n_ff = key_u32(f, a + "feed_forward_length", std::nullopt);
    if (qwen2moe || gpt_oss || qwen3moe) {
        m->routing = gpt_oss ? Routing::top_k_then_softmax : Routing::softmax_then_top_k;
        m->norm_topk = qwen3moe;
        m->n_expert = key_u32(f, a + "expert_count", std::nullopt);
        m->n_expert_used = key_u32(f, a + "expert_used_count", std::nullopt);
        m->n_ff_exp = key_u32(f, a + "expert_feed_forward_length", std::nullopt);
        if (qwen2moe)
            m->n_ff_shexp = key_u32(f, a + "expert_shared_feed_forward_length", std::nullopt);
        m->swiglu_oai = gpt_oss;
        if (m->n_expert_used > m->n_expert) bad(f, "expert_used_count > expert_count");
    }
    m->rope_base = f.get_float(a + "rope.freq_base").value_or(10000.0);
    m->n_ctx_train = key_u32(f, a + "context_length", 4096);
    if (m->phi3) {
        // llama.cpp's n_ctx_orig_yarn: rope.scaling.original_context_length, else the
        // training context.
        m->rope_orig_ctx = key_u32(f, a + "rope.scaling.original_context_length", m->n_ctx_train);
        m->rope_attn_factor = f.get_float(a + "rope.scaling.attn_factor").value_or(1.0);
        if (f.find_tensor("rope_factors_long.weight") ||
            f.find_tensor("rope_factors_short.weight")) {
            m->rope_long = read_vector(f, "rope_factors_long.weight", m->rot_dim / 2);
            m->rope_short = read_vector(f, "rope_factors_short.weight", m->rot_dim / 2);
        }
    }
    if (f.find_tensor("rope_freqs.weight"))
        m->rope_freqs = read_vector(f, "rope_freqs.weight", m->rot_dim / 2);
    std::string eps_key =
        a + (m->gpt2 ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon");
    std::optional<double> eps = f.get_float(eps_key);
    if (!eps) bad(f, "no key " + eps_key);
    m->norm_eps = *eps;
    // Llama's converter (llama, smollm3, granite) permutes q/k rows for llama.cpp's
    // adjacent-pair RoPE.
    m->neox_rope = m->arch != "llama" && m->arch != "smollm3" && m->arch != "granite";
    const bool granite = m->arch == "granite";
    bool granite_rope = true;  // granite.rope.scaling.finetuned: false turns RoPE off
    if (granite) {
        // llama.cpp reads the multipliers as optional, 0 meaning none, except logit_scale.
        auto scale = [&](const std::string &key, bool required) {
            std::optional<double> v = f.get_float(a + key);
            if (!v && required) bad(f, "no key " + a + key);
            if (v && !(*v >= 0)) bad(f, a + key + " is negative");
            return v.value_or(0.0);
        };
        if (double s = scale("embedding_scale", false); s != 0) m->embd_scale = s;
        if (double s = scale("residual_scale", false); s != 0) m->residual_scale = s;
        m->attn_scale = scale("attention.scale", false);
        m->logit_scale = scale("logit_scale", true);
        if (m->logit_scale == 0) bad(f, "granite.logit_scale is 0");
        granite_rope = f.get_bool(a + "rope.scaling.finetuned").value_or(true);
    }
    if (m->n_head % m->n_head_kv != 0) bad(f, "head_count is not a multiple of head_count_kv");
    if (m->rot_dim % 2 != 0 || m->rot_dim > m->head_dim)
        bad(f, "rope.dimension_count " + std::to_string(m->rot_dim) + " for head_dim " +
                   std::to_string(m->head_dim));
    std::string scaling(f.get_string(a + "rope.scaling.type").value_or("none"));
    double global_linear = 1.0;  // gemma3's global layers' linear RoPE factor
    if (scaling == "yarn") {
        // llama.cpp's defaults (ext_factor 1 for YaRN, attn_factor 1, beta_fast 32,
        // beta_slow 1) unless the file sets them.
        m->yarn = true;
        std::optional<double> factor = f.get_float(a + "rope.scaling.factor");
        if (!factor || *factor <= 0) bad(f, "YaRN without a positive rope.scaling.factor");
        m->yarn_factor = *factor;
        m->yarn_orig_ctx = key_u32(f, a + "rope.scaling.original_context_length", std::nullopt);
        m->yarn_ext_factor = f.get_float(a + "rope.scaling.yarn_ext_factor").value_or(1.0);
        m->yarn_attn_factor = f.get_float(a + "rope.scaling.yarn_attn_factor").value_or(1.0);
        m->yarn_beta_fast = f.get_float(a + "rope.scaling.yarn_beta_fast").value_or(32.0);
        m->yarn_beta_slow = f.get_float(a + "rope.scaling.yarn_beta_slow").value_or(1.0);
        // (rope_freqs below applies to YaRN models too, as in ggml.)
        // ggml_rope_yarn_corr_dims: floor of the fast end, ceil of the slow end, clamped to
        // [0, rot_dim - 1].
        double n_dims = m->rot_dim;
        double start =
            std::floor(yarn_corr_dim(n_dims, m->yarn_orig_ctx, m->yarn_beta_fast, m->rope_base));
        double end =
            std::ceil(yarn_corr_dim(n_dims, m->yarn_orig_ctx, m->yarn_beta_slow, m->rope_base));
        m->yarn_corr_dims[0] = std::max(0.0, start);
        m->yarn_corr_dims[1] = std::min(n_dims - 1, end);
    } else if (m->gemma3 && scaling == "linear") {
        std::optional<double> factor = f.get_float(a + "rope.scaling.factor");
        if (!factor || *factor <= 0) bad(f, "linear RoPE scaling without a positive factor");
        global_linear = *factor;
    } else if (scaling != "none") {
        bad(f, "rope.scaling.type \"" + scaling + "\" (none and yarn are supported)");
    }
    // gpt-oss: sliding-window attention on even layers, full on odd ones (llama.cpp's
    // swa pattern 2: layer il slides when il % 2 < 1). gemma3: five local layers, then a
    // global one (pattern 6: il % 6 < 5 slides), when the file has a window.
    uint32_t window = gpt_oss ? key_u32(f, a + "attention.sliding_window", std::nullopt) : 0;
    if (m->gemma3) window = key_u32(f, a + "attention.sliding_window", 0);
    // gemma2: Gemma2Config's defaults where the file is silent (window 4096, caps 50 and 30);
    // layer i slides when i is even (HF: is_sliding = not layer_idx % 2).
    if (m->gemma2) {
        window = key_u32(f, a + "attention.sliding_window", 4096);
        m->attn_softcap = f.get_float(a + "attn_logit_softcapping").value_or(50.0);
        m->final_softcap = f.get_float(a + "final_logit_softcapping").value_or(30.0);
        if (m->attn_softcap <= 0 || m->final_softcap <= 0)
            bad(f, "a soft cap that is not positive");
    }
    if (m->gemma3) m->final_softcap = f.get_float(a + "final_logit_softcapping").value_or(0.0);
    if (m->gemma2 || m->gemma3) m->embd_scale = std::sqrt(double(m->n_embd));
    // query_pre_attn_scalar: head_dim, but n_embd / n_head for Gemma 2 27B (46 layers); Granite's
    // attention.scale where its file has one (read above).
    if (!(m->attn_scale > 0))
        m->attn_scale = 1.0 / std::sqrt(double(m->gemma2 && m->n_layer == 46 ? m->n_embd / m->n_head
                                                                             : m->head_dim));

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
        if (!m->olmo2) L.attn_norm = read_vector(f, b + "attn_norm.weight", m->n_embd);
        if (m->phi3) {
            if (f.find_tensor(b + "attn_qkv.weight")) {
                // Phi3Attention's qkv_proj: rows [0, q_dim) are Q, then K, then V.
                Matrix qkv = read_matrix(f, b + "attn_qkv.weight", m->n_embd, q_dim + 2 * kv_dim);
                L.wq = row_block(qkv, 0, q_dim);
                L.wk = row_block(qkv, q_dim, kv_dim);
                L.wv = row_block(qkv, q_dim + kv_dim, kv_dim);
            } else {  // llama.cpp also takes them apart
                L.wq = read_matrix(f, b + "attn_q.weight", m->n_embd, q_dim);
                L.wk = read_matrix(f, b + "attn_k.weight", m->n_embd, kv_dim);
                L.wv = read_matrix(f, b + "attn_v.weight", m->n_embd, kv_dim);
            }
            L.wo = read_matrix(f, b + "attn_output.weight", q_dim, m->n_embd);
            L.ffn_norm = read_vector(f, b + "ffn_norm.weight", m->n_embd);
            // Phi3MLP: gate_up_proj's output chunked in two, gate first.
            Matrix gate_up = read_matrix(f, b + "ffn_up.weight", m->n_embd, 2 * m->n_ff);
            L.gate = row_block(gate_up, 0, m->n_ff);
            L.up = row_block(gate_up, m->n_ff, m->n_ff);
            L.down = read_matrix(f, b + "ffn_down.weight", m->n_ff, m->n_embd);
            m->layers.push_back(std::move(L));
            continue;
        }
        L.wq = read_matrix(f, b + "attn_q.weight", m->n_embd, q_dim);
        L.wk = read_matrix(f, b + "attn_k.weight", m->n_embd, kv_dim);
        L.wv = read_matrix(f, b + "attn_v.weight", m->n_embd, kv_dim);
        L.bq = read_optional_vector(f, b + "attn_q.bias", q_dim);
        L.bk = read_optional_vector(f, b + "attn_k.bias", kv_dim);
        L.bv = read_optional_vector(f, b + "attn_v.bias", kv_dim);
        L.wo = read_matrix(f, b + "attn_output.weight", q_dim, m->n_embd);
        if (m->arch == "qwen3" || m->gemma3 || qwen3moe) {
            L.q_norm = read_vector(f, b + "attn_q_norm.weight", m->head_dim);
            L.k_norm = read_vector(f, b + "attn_k_norm.weight", m->head_dim);
        }
        if (m->olmo2) {
            L.q_norm = read_vector(f, b + "attn_q_norm.weight", q_dim);
            L.k_norm = read_vector(f, b + "attn_k_norm.weight", kv_dim);
        }
        if (m->gemma2 || m->olmo2) {
            L.window = m->gemma2 && i % 2 == 0 ? window : 0;
            L.post_attn_norm = read_vector(f, b + "post_attention_norm.weight", m->n_embd);
            L.post_ffn_norm = read_vector(f, b + "post_ffw_norm.weight", m->n_embd);
        }
        if (m->gemma3) {
            bool local = window > 0 && i % 6 < 5;
            L.window = local ? window : 0;
            L.rope_base = local ? 10000.0 : m->rope_base;
            L.rope_linear = local ? 1.0 : global_linear;
            L.post_attn_norm = read_vector(f, b + "post_attention_norm.weight", m->n_embd);
            L.post_ffn_norm = read_vector(f, b + "post_ffw_norm.weight", m->n_embd);
        }
        if (m->arch == "smollm3") L.rope = (i + 1) % 4 != 0;
        if (granite) {
            L.rope = granite_rope;
            L.bo = read_optional_vector(f, b + "attn_output.bias", m->n_embd);
        }
        if (gpt_oss) {
            L.bo = read_vector(f, b + "attn_output.bias", m->n_embd);
            L.sinks = read_vector(f, b + "attn_sinks.weight", m->n_head);
            L.window = i % 2 == 0 ? window : 0;
        }
        if (m->routing == Routing::none) {
            if (!m->olmo2) L.ffn_norm = read_vector(f, b + "ffn_norm.weight", m->n_embd);
            L.gate = read_matrix(f, b + "ffn_gate.weight", m->n_embd, m->n_ff);
            L.up = read_matrix(f, b + "ffn_up.weight", m->n_embd, m->n_ff);
            L.down = read_matrix(f, b + "ffn_down.weight", m->n_ff, m->n_embd);
            m->layers.push_back(std::move(L));
            continue;
        }
        // gpt-oss calls its pre-FFN norm post_attention_norm.
        L.ffn_norm = read_vector(
            f, b + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"), m->n_embd);
        uint32_t d = m->n_embd, ne = m->n_expert, ff = m->n_ff_exp;
        L.router = read_matrix(f, b + "ffn_gate_inp.weight", d, ne);
        L.gate_exps = read_experts(f, b + "ffn_gate_exps.weight", d, ff, ne);
        L.up_exps = read_experts(f, b + "ffn_up_exps.weight", d, ff, ne);
        L.down_exps = read_experts(f, b + "ffn_down_exps.weight", ff, d, ne);
        if (gpt_oss) {
            L.router_b = read_vector(f, b + "ffn_gate_inp.bias", ne);
            L.gate_exps_b = read_expert_biases(f, b + "ffn_gate_exps.bias", ff, ne);
            L.up_exps_b = read_expert_biases(f, b + "ffn_up_exps.bias", ff, ne);
            L.down_exps_b = read_expert_biases(f, b + "ffn_down_exps.bias", d, ne);
        }
        if (qwen2moe) {
            L.shexp_gate = read_vector(f, b + "ffn_gate_inp_shexp.weight", d);
            L.gate_shexp = read_matrix(f, b + "ffn_gate_shexp.weight", d, m->n_ff_shexp);
            L.up_shexp = read_matrix(f, b + "ffn_up_shexp.weight", d, m->n_ff_shexp);
            L.down_shexp = read_matrix(f, b + "ffn_down_shexp.weight", m->n_ff_shexp, d);
        }
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
        for (double &v : x.back())
            v *= m.embd_scale;
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
    for (const Vec &xt : x) {
        logits.push_back(project(m.output, normed(m, xt, m.output_norm, m.output_norm_b)));
        for (double &l : logits.back())
            l /= m.logit_scale;
        if (m.final_softcap > 0)
            for (double &z : logits.back())
                z = m.final_softcap * std::tanh(z / m.final_softcap);
    }
    return logits;
}

std::vector<std::vector<float>> forward_logits(const ModelRef &m,
                                               const std::vector<int32_t> &tokens) {
    std::vector<std::vector<float>> out;
    for (const Vec &l : forward_logits_f64(m, tokens))
        out.emplace_back(l.begin(), l.end());
    return out;
}

void route(const ModelRef &m, const std::vector<double> &logits, std::vector<int> *experts,
           std::vector<double> *weights) {
    if (m.routing == Routing::none) throw std::invalid_argument("route: a dense model");
    if (logits.size() != m.n_expert)
        throw std::invalid_argument("route: " + std::to_string(logits.size()) + " logits for " +
                                    std::to_string(m.n_expert) + " experts");
    // softmax(v) over all of v.
    auto softmax = [](Vec v) {
        double max_v = *std::max_element(v.begin(), v.end()), sum = 0;
        for (double &x : v) {
            x = std::exp(x - max_v);
            sum += x;
        }
        for (double &x : v)
            x /= sum;
        return v;
    };
    // The k largest of v by index, largest first, the lower index first on ties.
    auto top_k = [](const Vec &v, uint32_t k) {
        std::vector<int> order(v.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return v[a] > v[b]; });
        order.resize(k);
        return order;
    };
    experts->clear();
    weights->clear();
    if (m.routing == Routing::softmax_then_top_k) {
        Vec probs = softmax(logits);
        *experts = top_k(probs, m.n_expert_used);
        double sum = 0;
        for (int e : *experts)
            sum += probs[e];
        for (int e : *experts)
            weights->push_back(m.norm_topk ? probs[e] / sum : probs[e]);
    } else {
        *experts = top_k(logits, m.n_expert_used);
        Vec chosen;
        for (int e : *experts)
            chosen.push_back(logits[e]);
        *weights = softmax(chosen);
    }
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
