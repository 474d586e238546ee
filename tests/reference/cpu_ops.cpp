#include "reference/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/half.h"

namespace ref {

std::vector<float> matmul(const std::vector<float> &w, const std::vector<float> &x, uint32_t rows,
                          uint32_t cols, uint32_t n, std::vector<double> *scale) {
    std::vector<float> y(size_t(n) * rows);
    if (scale) scale->assign(y.size(), 0.0);
    for (uint32_t t = 0; t < n; ++t) {
        for (uint32_t r = 0; r < rows; ++r) {
            double s = 0, a = 0;
            for (uint32_t k = 0; k < cols; ++k) {
                double p = double(w[size_t(r) * cols + k]) * x[size_t(t) * cols + k];
                s += p;
                a += std::fabs(p);
            }
            y[size_t(t) * rows + r] = float(s);
            if (scale) (*scale)[size_t(t) * rows + r] = a;
        }
    }
    return y;
}

std::vector<float> rms_norm(const std::vector<float> &x, const std::vector<float> &w, uint32_t rows,
                            uint32_t cols, double eps) {
    std::vector<float> y(x.size());
    for (uint32_t r = 0; r < rows; ++r) {
        const float *row = &x[size_t(r) * cols];
        double ss = 0;
        for (uint32_t c = 0; c < cols; ++c)
            ss += double(row[c]) * row[c];
        double inv = 1.0 / std::sqrt(ss / cols + eps);
        for (uint32_t c = 0; c < cols; ++c)
            y[size_t(r) * cols + c] = float(row[c] * inv * w[c]);
    }
    return y;
}

std::vector<float> layer_norm(const std::vector<float> &x, const std::vector<float> &w,
                              const std::vector<float> &b, uint32_t rows, uint32_t cols,
                              double eps) {
    std::vector<float> y(x.size());
    for (uint32_t r = 0; r < rows; ++r) {
        const float *row = &x[size_t(r) * cols];
        double mean = 0, var = 0;
        for (uint32_t c = 0; c < cols; ++c)
            mean += row[c];
        mean /= cols;
        for (uint32_t c = 0; c < cols; ++c)
            var += (row[c] - mean) * (row[c] - mean);
        double inv = 1.0 / std::sqrt(var / cols + eps);
        for (uint32_t c = 0; c < cols; ++c)
            y[size_t(r) * cols + c] = float((row[c] - mean) * inv * w[c] + b[c]);
    }
    return y;
}

std::vector<float> softmax(const std::vector<float> &x, uint32_t rows, uint32_t cols,
                           double scale) {
    std::vector<float> y(x.size());
    for (uint32_t r = 0; r < rows; ++r) {
        const float *row = &x[size_t(r) * cols];
        double m = -INFINITY, sum = 0;
        // std::max, not std::fmax: GCC 12's aarch64 vectorizer fails with an internal error on
        // an fmax reduction. Both skip a NaN element, since m starts as -inf and stays a number.
        for (uint32_t c = 0; c < cols; ++c)
            m = std::max(m, row[c] * scale);
        for (uint32_t c = 0; c < cols; ++c)
            sum += std::exp(row[c] * scale - m);
        for (uint32_t c = 0; c < cols; ++c)
            y[size_t(r) * cols + c] = float(std::exp(row[c] * scale - m) / sum);
    }
    return y;
}

std::vector<float> rope(const std::vector<float> &x, const std::vector<int32_t> &positions,
                        uint32_t n_heads, uint32_t head_dim, uint32_t rot_dim, double base,
                        bool neox) {
    std::vector<float> y = x;
    uint32_t half = rot_dim / 2;
    for (size_t t = 0; t < positions.size(); ++t) {
        for (uint32_t h = 0; h < n_heads; ++h) {
            size_t row = (t * n_heads + h) * head_dim;
            for (uint32_t i = 0; i < half; ++i) {
                double angle = positions[t] * std::pow(base, -2.0 * i / rot_dim);
                size_t a = neox ? row + i : row + 2 * i;
                size_t b = neox ? row + i + half : row + 2 * i + 1;
                y[a] = float(x[a] * std::cos(angle) - x[b] * std::sin(angle));
                y[b] = float(x[a] * std::sin(angle) + x[b] * std::cos(angle));
            }
        }
    }
    return y;
}

double silu(double v) {
    return v / (1.0 + std::exp(-v));
}

double gelu_tanh(double v) {
    const double k = std::sqrt(2.0 / 3.14159265358979323846);
    return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
}

std::vector<float> get_rows(const std::vector<float> &table, uint32_t rows, uint32_t cols,
                            const std::vector<int32_t> &ids) {
    std::vector<float> out(ids.size() * cols, 0.0f);
    for (size_t t = 0; t < ids.size(); ++t)
        if (ids[t] >= 0 && uint32_t(ids[t]) < rows)
            for (uint32_t c = 0; c < cols; ++c)
                out[t * cols + c] = table[size_t(ids[t]) * cols + c];
    return out;
}

std::vector<float> random(size_t n, uint32_t seed, float lo, float hi) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float &f : v)
        f = dist(gen);
    return v;
}

std::vector<uint16_t> to_f16(const std::vector<float> &v, std::vector<float> *rounded) {
    std::vector<uint16_t> h(v.size());
    if (rounded) rounded->resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        h[i] = vkllm::float_to_half(v[i]);
        if (rounded) (*rounded)[i] = vkllm::half_to_float(h[i]);
    }
    return h;
}

std::vector<uint8_t> to_q8_0(const std::vector<float> &v, std::vector<float> *dequantized) {
    std::vector<uint8_t> out;
    if (dequantized) dequantized->resize(v.size());
    for (size_t b = 0; b < v.size() / 32; ++b) {
        float amax = 0;
        for (size_t i = 0; i < 32; ++i)
            amax = std::max(amax, std::fabs(v[b * 32 + i]));
        uint16_t dh = vkllm::float_to_half(amax / 127.0f);
        float d = vkllm::half_to_float(dh);
        out.push_back(uint8_t(dh & 0xff));
        out.push_back(uint8_t(dh >> 8));
        for (size_t i = 0; i < 32; ++i) {
            int q = d > 0 ? int(std::lround(v[b * 32 + i] / d)) : 0;
            q = std::max(-127, std::min(127, q));
            out.push_back(uint8_t(int8_t(q)));
            if (dequantized) (*dequantized)[b * 32 + i] = float(q) * d;
        }
    }
    return out;
}

}  // namespace ref
