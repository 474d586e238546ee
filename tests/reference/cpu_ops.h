// Plain C++ reference implementations of the kernels, computed in double. Every GPU kernel
// test compares against these. They are written for clarity, not speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ref {

// y[t][r] = sum_k w[r][k] * x[t][k]; `scale` gets sum_k |w[r][k] * x[t][k]| (error bound).
std::vector<float> matmul(const std::vector<float> &w, const std::vector<float> &x, uint32_t rows,
                          uint32_t cols, uint32_t n, std::vector<double> *scale = nullptr);
std::vector<float> rms_norm(const std::vector<float> &x, const std::vector<float> &w, uint32_t rows,
                            uint32_t cols, double eps);
std::vector<float> layer_norm(const std::vector<float> &x, const std::vector<float> &w,
                              const std::vector<float> &b, uint32_t rows, uint32_t cols,
                              double eps);
std::vector<float> softmax(const std::vector<float> &x, uint32_t rows, uint32_t cols, double scale);
// Rotary embedding with angle pos * base^(-2i/rot_dim) on pairs (2i, 2i+1) or, for neox,
// (i, i + rot_dim/2), of x[token][head][head_dim].
std::vector<float> rope(const std::vector<float> &x, const std::vector<int32_t> &positions,
                        uint32_t n_heads, uint32_t head_dim, uint32_t rot_dim, double base,
                        bool neox);
double silu(double v);
double gelu_tanh(double v);
std::vector<float> get_rows(const std::vector<float> &table, uint32_t rows, uint32_t cols,
                            const std::vector<int32_t> &ids);

// Test data: uniform in [lo, hi), reproducible from the seed.
std::vector<float> random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
// Quantizes to GGUF Q8_0 blocks (n a multiple of 32): per block d = max|x| / 127 stored as F16,
// q = round(x / d). `dequantized` gets the values the blocks stand for.
std::vector<uint8_t> to_q8_0(const std::vector<float> &v, std::vector<float> *dequantized);

// Rounds each value to F16 (returns the F16 bits; `rounded` gets the values they stand for).
std::vector<uint16_t> to_f16(const std::vector<float> &v, std::vector<float> *rounded);

}  // namespace ref
