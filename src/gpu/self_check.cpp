#include "gpu/self_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "common/half.h"
#include "gpu/pattern.h"

namespace vkllm::gpu {

namespace {

std::vector<uint16_t> to_half(const std::vector<float> &v) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i)
        h[i] = float_to_half(v[i]);
    return h;
}

struct Checker {
    Context &ctx;
    vkllm_self_check_result &result;
    Recording rec{ctx.device()};

    template <typename T>
    Buffer upload(const std::vector<T> &data) {
        Buffer b = ctx.allocator().allocate(data.size() * sizeof(T), MemoryKind::Device);
        ctx.transfer().upload(b, data.data(), data.size() * sizeof(T));
        return b;
    }

    // Runs `record` writing `out`, compares with `expected` within abs+rel tolerance `tol`.
    void run(const char *name, size_t n_out, const std::function<void(const BufferRange &)> &record,
             const std::vector<float> &expected, float tol) {
        Buffer out = ctx.allocator().allocate(n_out * 4, MemoryKind::Device);
        rec.begin();
        record(out.range());
        rec.end();
        rec.submit();
        std::vector<float> got(n_out);
        ctx.transfer().download(out, got.data(), n_out * 4);
        double worst = 0;
        for (size_t i = 0; i < n_out; ++i) {
            double err =
                std::fabs(double(got[i]) - expected[i]) / (tol * (1.0 + std::fabs(expected[i])));
            if (!(err <= worst)) worst = err;  // NaN counts as a failure
        }
        record_outcome(name, worst);
    }

    // `worst`: the largest error relative to the tolerance (<= 1 passes; NaN fails).
    void record_outcome(const char *name, double worst) {
        ++result.kernels_checked;
        if (!(worst <= 1.0)) {
            if (result.kernels_failed++ == 0) {
                std::snprintf(result.first_failure, sizeof result.first_failure, "%s", name);
            }
        }
        if (!(worst <= result.max_error)) result.max_error = std::isnan(worst) ? INFINITY : worst;
    }
};

}  // namespace

void self_check(Context &ctx, vkllm_self_check_result &result) {
    auto t0 = std::chrono::steady_clock::now();
    size_t keep = result.struct_size;
    std::memset(&result, 0, sizeof result);
    result.struct_size = keep;
    Checker c{ctx, result};
    Kernels &k = ctx.kernels();
    const uint32_t rows = 37, cols = 70, n = 5;

    std::vector<float> w = pattern(size_t(rows) * cols, 1), x = pattern(size_t(n) * cols, 2);
    // x holds F16 values: the cooperative-matrix matmul rounds its activations to F16 (and may
    // round toward zero), so only then does each kernel's result have one expected value.
    for (float &v : x)
        v = half_to_float(float_to_half(v));
    std::vector<uint16_t> wh = to_half(w);
    std::vector<float> w16(w.size());
    for (size_t i = 0; i < w.size(); ++i)
        w16[i] = half_to_float(wh[i]);
    Buffer bw = c.upload(w), bwh = c.upload(wh), bx = c.upload(x);
    auto dot = [&](const std::vector<float> &m, uint32_t r, uint32_t t) {
        double s = 0;
        for (uint32_t j = 0; j < cols; ++j)
            s += double(m[size_t(r) * cols + j]) * x[size_t(t) * cols + j];
        return float(s);
    };
    std::vector<float> mv(rows), mv16(rows), mm(size_t(n) * rows);
    for (uint32_t r = 0; r < rows; ++r)
        mv[r] = dot(w, r, 0), mv16[r] = dot(w16, r, 0);
    for (uint32_t t = 0; t < n; ++t)
        for (uint32_t r = 0; r < rows; ++r)
            mm[size_t(t) * rows + r] = dot(w16, r, t);
    Matrix mf{bw.range(), WeightType::F32, rows, cols},
        mh{bwh.range(), WeightType::F16, rows, cols};
    c.run(
        "matvec_f32", rows, [&](const BufferRange &o) { k.matvec(c.rec, mf, bx.range(), o); }, mv,
        1e-5f);
    c.run(
        "matvec_f16", rows, [&](const BufferRange &o) { k.matvec(c.rec, mh, bx.range(), o); }, mv16,
        1e-5f);
    c.run(
        "matmul_f16", mm.size(),
        [&](const BufferRange &o) { k.matmul(c.rec, mh, bx.range(), o, n); }, mm, 1e-5f);

    std::vector<float> g = pattern(cols, 3), b = pattern(cols, 4);
    Buffer bg = c.upload(g), bb = c.upload(b);
    std::vector<float> rms(x.size()), ln(x.size()), sm(x.size());
    for (uint32_t t = 0; t < n; ++t) {
        const float *row = &x[size_t(t) * cols];
        double ss = 0, mean = 0, var = 0, mx = -1e30, sum = 0;
        for (uint32_t j = 0; j < cols; ++j)
            ss += double(row[j]) * row[j], mean += row[j], mx = std::fmax(mx, row[j]);
        mean /= cols;
        for (uint32_t j = 0; j < cols; ++j)
            var += (row[j] - mean) * (row[j] - mean), sum += std::exp(row[j] - mx);
        for (uint32_t j = 0; j < cols; ++j) {
            size_t i = size_t(t) * cols + j;
            rms[i] = float(row[j] / std::sqrt(ss / cols + 1e-5) * g[j]);
            ln[i] = float((row[j] - mean) / std::sqrt(var / cols + 1e-5) * g[j] + b[j]);
            sm[i] = float(std::exp(row[j] - mx) / sum);
        }
    }
    c.run(
        "rms_norm", x.size(),
        [&](const BufferRange &o) { k.rms_norm(c.rec, bx.range(), bg.range(), o, n, cols, 1e-5f); },
        rms, 1e-5f);
    c.run(
        "layer_norm", x.size(),
        [&](const BufferRange &o) {
            k.layer_norm(c.rec, bx.range(), bg.range(), bb.range(), o, n, cols, 1e-5f);
        },
        ln, 1e-5f);
    c.run(
        "softmax", x.size(),
        [&](const BufferRange &o) { k.softmax(c.rec, bx.range(), o, n, cols, 1.0f); }, sm, 1e-5f);

    std::vector<float> sw(x.size()), ge(x.size()), ad(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        float a = x[i], bv = g[i % cols];
        sw[i] = float(a / (1.0 + std::exp(-double(a))) * bv);
        double t = std::tanh(0.7978845608028654 * (a + 0.044715 * double(a) * a * a));
        ge[i] = float(0.5 * a * (1 + t) * bv);
        ad[i] = a + bv;
    }
    c.run(
        "add", x.size(),
        [&](const BufferRange &o) {
            k.binary(c.rec, Binary::Add, bx.range(), bg.range(), o, uint32_t(x.size()), cols);
        },
        ad, 1e-6f);
    c.run(
        "swiglu", x.size(),
        [&](const BufferRange &o) {
            k.binary(c.rec, Binary::SwiGLU, bx.range(), bg.range(), o, uint32_t(x.size()), cols);
        },
        sw, 1e-5f);
    c.run(
        "geglu", x.size(),
        [&](const BufferRange &o) {
            k.binary(c.rec, Binary::GeGLU, bx.range(), bg.range(), o, uint32_t(x.size()), cols);
        },
        ge, 1e-5f);

    // RoPE on 5 tokens x 2 heads x 35 (= cols / 2) dims, NEOX pairs, positions 0, 3, 6, ...
    const uint32_t heads = 2, hd = cols / 2, rot = 34, npos = 16;
    std::vector<float> table = rope_table(npos, rot, 10000.0);
    std::vector<int32_t> pos(n);
    for (uint32_t t = 0; t < n; ++t)
        pos[t] = int32_t(3 * t);
    Buffer bt = c.upload(table), bp = c.upload(pos);
    std::vector<float> rope = x;
    for (uint32_t t = 0; t < n; ++t)
        for (uint32_t h = 0; h < heads; ++h)
            for (uint32_t i = 0; i < rot / 2; ++i) {
                double a = pos[t] * std::pow(10000.0, -2.0 * i / rot);
                size_t base = (size_t(t) * heads + h) * hd, i0 = base + i, i1 = base + i + rot / 2;
                rope[i0] = float(x[i0] * std::cos(a) - x[i1] * std::sin(a));
                rope[i1] = float(x[i0] * std::sin(a) + x[i1] * std::cos(a));
            }
    c.run(
        "rope_neox", x.size(),
        [&](const BufferRange &o) {
            c.rec.copy(bx.range(), o);
            k.rope(c.rec, RopeLayout::Neox, o, bt.range(), bp.range(), n, heads, hd, rot, npos);
        },
        rope, 1e-5f);

    std::vector<int32_t> ids = {3, 0, 36, 3};
    std::vector<float> rows_out;
    for (int32_t id : ids)
        rows_out.insert(rows_out.end(), &w16[size_t(id) * cols], &w16[size_t(id + 1) * cols]);
    Buffer bi = c.upload(ids);
    c.run(
        "get_rows_f16", rows_out.size(),
        [&](const BufferRange &o) { k.get_rows(c.rec, mh, bi.range(), o, uint32_t(ids.size())); },
        rows_out, 1e-7f);

    // Argmax of each of the 5 rows of x: exact, the ids compared as integers.
    {
        Buffer picks = ctx.allocator().allocate(n * 4, MemoryKind::Device);
        c.rec.begin();
        k.argmax(c.rec, bx.range(), picks.range(), n, cols, cols);
        c.rec.end();
        c.rec.submit();
        std::vector<int32_t> got(n);
        ctx.transfer().download(picks, got.data(), n * 4);
        bool ok = true;
        for (uint32_t t = 0; t < n; ++t) {
            const float *row = &x[size_t(t) * cols];
            ok = ok && got[t] == int32_t(std::max_element(row, row + cols) - row);
        }
        c.record_outcome("argmax", ok ? 0.0 : INFINITY);
    }

    // Log-probabilities of the same rows: each row's log-sum-exp (within 1e-5, relative) and its
    // 3 most likely ids, exact.
    {
        const uint32_t top = 3, words = ArgmaxKernels::logprobs_row_words(top);
        Buffer out = ctx.allocator().allocate(uint64_t(n) * words * 4, MemoryKind::Device);
        c.rec.begin();
        k.logprobs(c.rec, bx.range(), out.range(), n, cols, cols, top);
        c.rec.end();
        c.rec.submit();
        std::vector<uint32_t> got(size_t(n) * words);
        ctx.transfer().download(out, got.data(), got.size() * 4);
        double worst = 0;
        for (uint32_t t = 0; t < n; ++t) {
            const float *row = &x[size_t(t) * cols];
            double mx = *std::max_element(row, row + cols), sum = 0;
            for (uint32_t i = 0; i < cols; ++i)
                sum += std::exp(double(row[i]) - mx);
            float lse;
            std::memcpy(&lse, &got[size_t(t) * words + 1], 4);
            double want = mx + std::log(sum);
            worst =
                std::max(worst, std::fabs(lse - want) / (1e-5 * std::max(1.0, std::fabs(want))));
            std::vector<uint32_t> order(cols);
            for (uint32_t i = 0; i < cols; ++i)
                order[i] = i;
            std::stable_sort(order.begin(), order.end(),
                             [row](uint32_t i, uint32_t j) { return row[i] > row[j]; });
            for (uint32_t j = 0; j < top; ++j)
                if (got[size_t(t) * words + 2 + 2 * j] != order[j]) worst = INFINITY;
        }
        c.record_outcome("logprobs", worst);
    }

    // Attention (2 heads over 1 KV head of 32) of `n_tok` tokens at positions 0.. after
    // kv_store wrote their K and V: a step's path through the KV ring. 5 tokens: the decode
    // kernels; 12 as a prefill: the cooperative-matrix kernel where the device takes it (f16
    // operands: scores and weights within a few 2^-11 of the F32 ones).
    auto attention = [&](const char *name, uint32_t n_tok, bool prefill, float tol) {
        const uint32_t dim = 32, capacity = 16;
        AttentionShape shape{n_tok,    2, 1,           dim,
                             capacity, 0, KvType::F32, 1.0f / std::sqrt(float(dim))};
        shape.prefill = prefill;
        if (prefill && !k.attention_coopmat(shape)) return;
        std::vector<float> kv = pattern(size_t(n_tok) * dim, 5),
                           vv = pattern(size_t(n_tok) * dim, 6);
        std::vector<float> q = pattern(size_t(n_tok) * 2 * dim, 7);
        std::vector<int32_t> positions(n_tok), seqs(n_tok, 0), begin(n_tok, 0);
        for (uint32_t i = 0; i < n_tok; ++i)
            positions[i] = int32_t(i);
        Buffer bk = c.upload(kv), bv = c.upload(vv), bq = c.upload(q), bpos = c.upload(positions),
               bseq = c.upload(seqs), bbeg = c.upload(begin);
        Buffer kc = ctx.allocator().allocate(capacity * dim * 4, MemoryKind::Device);
        Buffer vc = ctx.allocator().allocate(capacity * dim * 4, MemoryKind::Device);
        StepView view{bpos.range(), bseq.range(), bbeg.range()};
        std::vector<float> attn(size_t(n_tok) * 2 * dim, 0.0f);
        for (uint32_t t = 0; t < n_tok; ++t)
            for (uint32_t h = 0; h < 2; ++h) {
                std::vector<double> p(t + 1);
                double mx = -1e30, sum = 0;
                for (uint32_t j = 0; j <= t; ++j) {
                    double d = 0;
                    for (uint32_t i = 0; i < dim; ++i)
                        d += double(q[(t * 2 + h) * dim + i]) * kv[j * dim + i];
                    p[j] = d * shape.scale;
                    mx = std::max(mx, p[j]);
                }
                for (double &v : p)
                    sum += v = std::exp(v - mx);
                for (uint32_t j = 0; j <= t; ++j)
                    for (uint32_t i = 0; i < dim; ++i)
                        attn[(t * 2 + h) * dim + i] += float(p[j] / sum * vv[j * dim + i]);
            }
        c.run(
            name, attn.size(),
            [&](const BufferRange &o) {
                k.kv_store(c.rec, bk.range(), bv.range(), kc.range(), vc.range(), view, shape);
                k.attention(c.rec, bq.range(), kc.range(), vc.range(), o, view, shape);
            },
            attn, tol);
    };
    attention("kv_store_attention", 5, false, 1e-5f);
    attention("attention_coopmat", 12, true, 1e-2f);

    result.elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace vkllm::gpu
