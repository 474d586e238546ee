#include "reference/forward.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "reference/cpu_ops.h"

namespace ref {

namespace {

using Vec = std::vector<double>;

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

// The model's pre-norm: LayerNorm with bias for gpt2, RMSNorm otherwise; none for olmo2 (no
// weight).
Vec normed(const ModelRef &m, const Vec &x, const Vec &w, const Vec &b) {
    if (w.empty()) return x;
    return m.gpt2 ? layer_normed(x, w, b, m.norm_eps) : rms_normed(x, w, m.norm_eps);
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

}  // namespace

std::vector<double> layer_normed(std::vector<double> x, const std::vector<double> &w,
                                 const std::vector<double> &b, double eps) {
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
