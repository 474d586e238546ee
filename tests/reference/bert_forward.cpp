#include "reference/bert_forward.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "common/half.h"

namespace ref {

namespace {

using Vec = std::vector<double>;

Vec affine(const Matrix &w, const Vec &x, const Vec &b) {
    Vec y(w.rows);
    for (uint32_t r = 0; r < w.rows; ++r) {
        const double *row = &w.w[size_t(r) * w.cols];
        double s = b.empty() ? 0.0 : b[r];
        for (uint32_t c = 0; c < w.cols; ++c)
            s += row[c] * x[c];
        y[r] = s;
    }
    return y;
}

double to_f16(double v) {
    return double(vkllm::half_to_float(vkllm::float_to_half(float(v))));
}

double gelu(double v, Gelu form) {
    if (form == Gelu::erf) return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    if (form == Gelu::tanh_f16_table) {
        if (v <= -10.0) return 0.0;
        if (v >= 10.0) return v;
        return to_f16(gelu(to_f16(v), Gelu::tanh));
    }
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
}

// The batch packed into one run of rows: row i is token tokens[i] of sequence seq[i] at
// position pos[i]; padding rows (real[i] false) are never attended to.
struct Packed {
    std::vector<int32_t> tokens;
    std::vector<size_t> seq;
    std::vector<uint32_t> pos;
    std::vector<bool> real;
};

// Multi-head attention of every row over the real rows of its own sequence.
Rows attend(const ModelRef &m, const LayerRef &L, const Packed &p, const Rows &x) {
    const size_t n = x.size();
    const uint32_t hd = m.head_dim;
    Rows q(n), k(n), v(n), out(n, Vec(m.n_embd));
    for (size_t i = 0; i < n; ++i) {
        q[i] = affine(L.wq, x[i], L.bq);
        k[i] = affine(L.wk, x[i], L.bk);
        v[i] = affine(L.wv, x[i], L.bv);
    }
    const double scale = 1.0 / std::sqrt(double(hd));
    Vec score(n);
    for (uint32_t h = 0; h < m.n_head; ++h) {
        const size_t o = size_t(h) * hd;
        for (size_t i = 0; i < n; ++i) {
            double top = -INFINITY;
            for (size_t j = 0; j < n; ++j) {
                score[j] = -INFINITY;
                if (!p.real[j] || p.seq[j] != p.seq[i]) continue;
                double s = 0;
                for (uint32_t c = 0; c < hd; ++c)
                    s += q[i][o + c] * k[j][o + c];
                score[j] = s * scale;
                top = std::max(top, score[j]);
            }
            double sum = 0;
            for (size_t j = 0; j < n; ++j)
                sum += score[j] = std::exp(score[j] - top);
            for (size_t j = 0; j < n; ++j)
                for (uint32_t c = 0; c < hd; ++c)
                    out[i][o + c] += score[j] / sum * v[j][o + c];
        }
    }
    for (size_t i = 0; i < n; ++i)
        out[i] = affine(L.wo, out[i], L.bo);
    return out;
}

Rows encode(const ModelRef &m, const Packed &p, Gelu form) {
    Rows x;
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        const size_t t = size_t(p.tokens[i]), pos = p.pos[i];
        Vec e(m.n_embd);
        for (uint32_t c = 0; c < m.n_embd; ++c)
            e[c] = m.token_embd.w[t * m.n_embd + c] + m.position_embd.w[pos * m.n_embd + c] +
                   m.token_types.w[c];
        e = layer_normed(e, m.embd_norm, m.embd_norm_b, m.norm_eps);
        x.push_back(std::move(e));
    }
    for (const LayerRef &L : m.layers) {
        Rows a = attend(m, L, p, x);
        for (size_t i = 0; i < x.size(); ++i) {
            for (uint32_t c = 0; c < m.n_embd; ++c)
                x[i][c] += a[i][c];
            x[i] = layer_normed(x[i], L.post_attn_norm, L.post_attn_norm_b, m.norm_eps);
            Vec u = affine(L.up, x[i], L.b_up);
            for (double &z : u)
                z = gelu(z, form);
            Vec h = affine(L.down, u, L.b_down);
            for (uint32_t c = 0; c < m.n_embd; ++c)
                x[i][c] += h[c];
            x[i] = layer_normed(x[i], L.post_ffn_norm, L.post_ffn_norm_b, m.norm_eps);
        }
    }
    return x;
}

}  // namespace

std::vector<Rows> bert_hidden_states(const ModelRef &m,
                                     const std::vector<std::vector<int32_t>> &seqs, Gelu gelu,
                                     uint32_t pad_to, int32_t pad_token) {
    if (!m.bert) throw std::invalid_argument("bert: architecture " + m.arch);
    Packed p;
    for (size_t s = 0; s < seqs.size(); ++s) {
        const std::vector<int32_t> &tokens = seqs[s];
        if (tokens.empty()) throw std::invalid_argument("bert: an empty sequence");
        const size_t rows = std::max<size_t>(tokens.size(), pad_to);
        if (rows > m.n_ctx_train)
            throw std::invalid_argument("bert: " + std::to_string(rows) +
                                        " rows, more than context_length " +
                                        std::to_string(m.n_ctx_train));
        for (size_t i = 0; i < rows; ++i) {
            const bool real = i < tokens.size();
            const int32_t t = real ? tokens[i] : pad_token;
            if (t < 0 || uint32_t(t) >= m.n_vocab)
                throw std::invalid_argument("bert: token " + std::to_string(t) + " out of range");
            p.tokens.push_back(t);
            p.seq.push_back(s);
            p.pos.push_back(uint32_t(i));
            p.real.push_back(real);
        }
    }
    Rows x = encode(m, p, gelu);
    std::vector<Rows> out(seqs.size());
    for (size_t i = 0; i < x.size(); ++i)
        if (p.real[i]) out[p.seq[i]].push_back(std::move(x[i]));
    return out;
}

Rows pool(const Rows &hidden, Pooling pooling, bool normalize) {
    if (hidden.empty()) throw std::invalid_argument("pool: no hidden states");
    Rows out;
    switch (pooling) {
        case Pooling::none:
            out = hidden;
            break;
        case Pooling::mean: {
            Vec mean(hidden[0].size());
            for (const Vec &h : hidden)
                for (size_t c = 0; c < mean.size(); ++c)
                    mean[c] += h[c];
            for (double &v : mean)
                v /= double(hidden.size());
            out.push_back(std::move(mean));
            break;
        }
        case Pooling::cls:
            out.push_back(hidden.front());
            break;
        case Pooling::last:
            out.push_back(hidden.back());
            break;
        default:
            throw std::invalid_argument("pool: pooling type " + std::to_string(uint32_t(pooling)));
    }
    if (normalize)
        for (Vec &r : out) {
            double ss = 0;
            for (double v : r)
                ss += v * v;
            if (ss > 0)
                for (double &v : r)
                    v /= std::sqrt(ss);
        }
    return out;
}

std::vector<Rows> bert_embed(const ModelRef &m, const std::vector<std::vector<int32_t>> &seqs,
                             Pooling pooling, bool normalize, Gelu gelu) {
    std::vector<Rows> out;
    for (const Rows &h : bert_hidden_states(m, seqs, gelu, 0, 0))
        out.push_back(pool(h, pooling, normalize));
    return out;
}

double cosine(const std::vector<double> &a, const std::vector<double> &b) {
    if (a.size() != b.size()) throw std::invalid_argument("cosine: lengths differ");
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        ab += a[i] * b[i];
        aa += a[i] * a[i];
        bb += b[i] * b[i];
    }
    if (aa == 0 && bb == 0) return 1.0;
    return ab / std::sqrt(aa * bb);
}

}  // namespace ref
