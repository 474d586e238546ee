// A plain C++ forward pass of Llama, Qwen2 and Qwen3 GGUF models, in double precision: the
// reference the GPU engine's logits are tested against. It is written to be checked line by
// line against the model definitions, not to be fast: weights are held as doubles, nothing is
// cached between calls and every position is recomputed from the tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ref {

// `rows` outputs of `cols` inputs each, row-major: a GGUF tensor with dims [cols, rows].
struct Matrix {
    uint32_t rows = 0, cols = 0;
    std::vector<double> w;
};

struct LayerRef {
    std::vector<double> attn_norm;
    Matrix wq, wk, wv, wo;
    std::vector<double> bq, bk, bv;      // empty when the file has no such bias (llama, qwen3)
    std::vector<double> q_norm, k_norm;  // qwen3: RMSNorm weights over each head's head_dim
    std::vector<double> ffn_norm;
    Matrix gate, up, down;
    // gpt2 (empty otherwise): LayerNorm biases and the projection biases; wq/wk/wv/bq/bk/bv
    // are the row blocks of its fused attn_qkv.
    std::vector<double> attn_norm_b, ffn_norm_b, bo, b_up, b_down;
};

struct ModelRef {
    std::string arch;
    uint32_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
    uint32_t rot_dim = 0;  // leading dims of each head that RoPE rotates
    uint32_t n_ff = 0;
    double rope_base = 10000.0, norm_eps = 1e-5;
    bool neox_rope = false;    // pairs (i, i + rot_dim/2) rather than (2i, 2i+1)
    bool tied_output = false;  // the file has no output.weight; `output` is token_embd's copy
    bool gpt2 = false;         // LayerNorm with bias, learned positions, GELU MLP, no RoPE
    Matrix token_embd;         // row t: the embedding of token t
    Matrix position_embd;      // gpt2: row p is added at position p
    std::vector<double> output_norm_b;
    std::vector<double> output_norm;
    Matrix output;
    std::vector<LayerRef> layers;
};

// Loads architecture "llama", "qwen2", "qwen3" or "gpt2" with tensors of any type
// format::can_dequantize() reads. Throws
// std::runtime_error naming what is missing or malformed (vkllm::Error for an unreadable file).
std::unique_ptr<ModelRef> load_model_ref(const std::string &gguf_path);

// result[i]: the n_vocab logits after tokens[0..i] at positions 0..i, predicting token i+1.
std::vector<std::vector<float>> forward_logits(const ModelRef &m,
                                               const std::vector<int32_t> &tokens);

// Which earlier positions a query position may attend to (besides causality): a KV cache
// that keeps only some positions, such as a streaming window, is this mask.
using Visibility = std::function<bool(uint32_t query, uint32_t key)>;

// forward_logits with attention restricted to the keys `visible` allows.
std::vector<std::vector<float>> forward_logits_masked(const ModelRef &m,
                                                      const std::vector<int32_t> &tokens,
                                                      const Visibility &visible);
std::vector<std::vector<double>> forward_logits_masked_f64(const ModelRef &m,
                                                           const std::vector<int32_t> &tokens,
                                                           const Visibility &visible);

// The same in double, before rounding to float.
std::vector<std::vector<double>> forward_logits_f64(const ModelRef &m,
                                                    const std::vector<int32_t> &tokens);

// `n` ids continuing a non-empty `prompt`, each the argmax (lowest id on ties) of the double
// logits after the sequence so far, which is recomputed from scratch for every id.
std::vector<int32_t> greedy(const ModelRef &m, std::vector<int32_t> prompt, int n);

}  // namespace ref
