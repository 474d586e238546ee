// A plain C++ forward pass of Llama, Qwen2, Qwen3, GPT-2, Qwen2-MoE and gpt-oss GGUF models, in
// double precision: the reference the GPU engine's logits are tested against. It is written to
// be checked line by line against the model definitions, not to be fast: weights are held as
// doubles, nothing is cached between calls and every position is recomputed from the tokens.
//
// The mixture-of-experts models replace the dense FFN by a router and n_expert experts, of
// which n_expert_used run per token (see route()):
//   qwen2moe: probs = softmax(W_router x) over all experts; the top-k probs, not renormalised,
//             weight silu(gate_e x) * up_e x through down_e; plus a shared expert scaled by
//             sigmoid(w_shexp . x).
//   qwen3moe: as qwen2moe with no shared expert, the k probabilities renormalised to sum to 1
//             (norm_topk_prob; llama.cpp's qwen3moe build_moe_ffn with norm_w), and qwen3's
//             per-head q/k RMSNorm before RoPE (NEOX).
//   gpt-oss:  logits = W_router x + b; the top-k logits, softmaxed over those k, weight
//             down_e(swiglu_oai(gate_e x + bg, up_e x + bu)) + bd. Attention has biases
//             (output included), a learned sink logit per head in every softmax's denominator,
//             and a sliding window on even layers; RoPE may be YaRN-scaled as ggml does it.
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
    std::vector<double> bq, bk, bv;  // empty when the file has no such bias (llama, qwen3)
    // qwen3, gemma3: RMSNorm weights over each head's head_dim; olmo2: over the whole rows.
    std::vector<double> q_norm, k_norm;
    std::vector<double> ffn_norm;
    Matrix gate, up, down;
    // gpt2 (empty otherwise): LayerNorm biases and the projection biases; wq/wk/wv/bq/bk/bv
    // are the row blocks of its fused attn_qkv. gpt-oss also has bo (attn_output.bias).
    std::vector<double> attn_norm_b, ffn_norm_b, bo, b_up, b_down;

    // Attention window: 0 for full causal attention, else a query at position p sees only the
    // keys at p-window+1..p (gpt-oss's even layers, gemma3's local ones).
    uint32_t window = 0;
    // gemma3: this layer's RoPE base (local layers 10000, global ones the file's) and linear
    // scaling factor (positions divided by it: the global layers' rope.scaling.factor, else 1).
    double rope_base = 10000.0, rope_linear = 1.0;
    // smollm3: false on its NoPE layers (il + 1 a multiple of 4: HF's no_rope_layers), whose
    // queries and keys are not rotated.
    bool rope = true;
    // gemma3: RMSNorm weights of the attention's and the FFN's outputs, applied before each is
    // added to the residual stream (empty otherwise).
    std::vector<double> post_attn_norm, post_ffn_norm;
    // bert: the LayerNorm biases of attn_output_norm and layer_output_norm (post_attn_norm,
    // post_ffn_norm), which BERT applies after each residual add rather than before it.
    std::vector<double> post_attn_norm_b, post_ffn_norm_b;
    // gpt-oss: attn_sinks.weight, one logit per query head that joins each softmax's
    // denominator and contributes no value. Empty otherwise.
    std::vector<double> sinks;

    // Mixture of experts (gate/up/down above are then empty; ffn_norm is the pre-FFN norm,
    // gpt-oss's post_attention_norm). router: ffn_gate_inp, n_expert rows of n_embd;
    // router_b its bias (gpt-oss). Expert e's matrices are slab e of the [cols, rows, n_expert]
    // tensors ffn_{gate,up,down}_exps; their biases (gpt-oss) are column e of [rows, n_expert].
    Matrix router;
    std::vector<double> router_b;
    std::vector<Matrix> gate_exps, up_exps, down_exps;
    std::vector<std::vector<double>> gate_exps_b, up_exps_b, down_exps_b;
    // qwen2moe's shared expert, run for every token: its output is scaled by
    // sigmoid(shexp_gate . x) (ffn_gate_inp_shexp, n_embd values).
    std::vector<double> shexp_gate;
    Matrix gate_shexp, up_shexp, down_shexp;
};

// How router logits become the chosen experts' weights.
enum class Routing {
    none,                // a dense FFN
    softmax_then_top_k,  // qwen2moe, qwen3moe: softmax over all experts, the top k probabilities
                         // (qwen3moe: divided by their sum, norm_topk)
    top_k_then_softmax,  // gpt-oss: the top k logits, softmaxed over those k
};

struct ModelRef {
    std::string arch;
    uint32_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
    uint32_t rot_dim = 0;  // leading dims of each head that RoPE rotates
    uint32_t n_ff = 0;     // feed_forward_length (dense FFN width)
    double rope_base = 10000.0, norm_eps = 1e-5;
    // YaRN RoPE scaling (rope.scaling.type "yarn"), as ggml's rope_yarn: rotated pair i keeps
    // the unscaled angle pos * base^(-2i/rot_dim) for i <= corr_dims[0], takes that angle /
    // yarn_factor for i >= corr_dims[1] and mixes the two linearly between (the mix scaled by
    // yarn_ext_factor); cos and sin are multiplied by yarn_attn_factor * (1 + 0.1 ln
    // yarn_factor). llama.cpp's defaults: ext_factor 1, attn_factor 1, betas 32 and 1.
    // Llama 3.1+'s rope_freqs.weight: pair i's angle is divided by rope_freqs[i] (empty: none).
    std::vector<double> rope_freqs;
    bool yarn = false;
    double yarn_factor = 1.0, yarn_ext_factor = 0.0, yarn_attn_factor = 1.0;
    double yarn_beta_fast = 32.0, yarn_beta_slow = 1.0;
    uint32_t yarn_orig_ctx = 0;
    double yarn_corr_dims[2] = {0.0, 0.0};  // ggml_rope_yarn_corr_dims of the above
    // Mixture of experts (0 and Routing::none for dense models).
    Routing routing = Routing::none;
    uint32_t n_expert = 0, n_expert_used = 0;
    uint32_t n_ff_exp = 0, n_ff_shexp = 0;  // each expert's and the shared expert's width
    bool norm_topk = false;   // qwen3moe: the chosen probabilities renormalised to sum to 1
    bool swiglu_oai = false;  // gpt-oss experts: (clamp(u,-7,7)+1) * g*sigmoid(1.702 g), g=min(g,7)
    bool neox_rope = false;   // pairs (i, i + rot_dim/2) rather than (2i, 2i+1)
    bool tied_output = false;  // the file has no output.weight; `output` is token_embd's copy
    bool gpt2 = false;         // LayerNorm with bias, learned positions, GELU MLP, no RoPE
    // gemma3 (Gemma3ForCausalLM; llama.cpp's gemma3): embeddings times sqrt(n_embd), a
    // GELU-tanh gate (gelu(gate x) * up x), post-norms (LayerRef), per-layer RoPE, QK-norm, and
    // queries scaled by 1/sqrt(query_pre_attn_scalar) = 1/sqrt(head_dim) for the sizes read.
    bool gemma3 = false;
    double embd_scale = 1.0;
    // phi3 (Phi3ForCausalLM; llama.cpp's phi3): Q, K, V from one attn_qkv (no biases), gate and
    // up from one ffn_up of 2 n_ff rows (gate first: Phi3MLP's chunk(2)), NEOX RoPE over the
    // first rot_dim dims of each head, untied or tied output. LongRoPE (rope_factors_long /
    // rope_factors_short.weight): pair i's angle divided by factor i of the long table when the
    // run's context exceeds rope_orig_ctx (rope.scaling.original_context_length), of the short
    // one otherwise, and cos and sin times rope_attn_factor (rope.scaling.attn_factor, HF's
    // attention_factor) with either. The file's attention.sliding_window is ignored, as
    // llama.cpp does (it turns Phi's sliding window off; HF would apply it).
    bool phi3 = false;
    std::vector<double> rope_long, rope_short;
    uint32_t rope_orig_ctx = 0;
    double rope_attn_factor = 1.0;
    uint32_t n_ctx_train = 0;  // context_length
    // The context per sequence the logits are for (what chooses a LongRoPE table, as a
    // llama.cpp context or a vkllm session of that size would); 0: n_ctx_train.
    uint32_t n_ctx = 0;
    // gemma2 (Gemma2ForCausalLM; llama.cpp's gemma2-iswa): gemma3's embedding scale, GELU gate
    // and post-norms, no QK-norm, one RoPE base, sliding-window attention on even layers
    // (LayerRef::window), and soft-capping: each scaled attention score s becomes
    // attn_softcap * tanh(s / attn_softcap) before the mask and softmax, each final logit z
    // final_softcap * tanh(z / final_softcap) (0: none; gemma3 files may set the final one).
    bool gemma2 = false;
    double attn_softcap = 0.0, final_softcap = 0.0;
    // The attention's score scale: 1/sqrt(query_pre_attn_scalar), which is 1/sqrt(head_dim)
    // except for Gemma 2 27B (n_embd / n_head).
    double attn_scale = 0.0;
    // olmo2 (Olmo2ForCausalLM; llama.cpp's olmo2): no norm before the attention or the MLP
    // (attn_norm, ffn_norm empty), post-norms on both outputs before the residual add, and
    // q_norm / k_norm RMSNorms over q's and k's whole rows (n_head * head_dim, n_head_kv *
    // head_dim) before RoPE rather than per head; an output head of its own.
    bool olmo2 = false;
    // granite (GraniteForCausalLM; llama.cpp's granite): embeddings times embedding_multiplier
    // (embd_scale above, granite.embedding_scale), each attention and MLP output times
    // residual_multiplier before it is added (residual_scale), attention_multiplier as the
    // attention's logit scale (attn_scale; 0: 1/sqrt(head_dim)), the logits divided by
    // logits_scaling (logit_scale); adjacent-pair RoPE on the converter's permuted q/k.
    // (attn_scale is gemma2's, above.)
    double residual_scale = 1.0, logit_scale = 1.0;
    // bert (BertModel; llama.cpp's bert): an encoder, run by reference/bert_forward.h, not by
    // forward_logits. Token, position (position_embd) and token-type embeddings summed, then
    // LayerNorm (embd_norm) with norm_eps (attention.layer_norm_epsilon); attention and FFN
    // with biases (LayerRef's bq, bk, bv, bo, b_up, b_down), each followed by a residual add and
    // a LayerNorm (post_attn_norm, post_ffn_norm with their biases).
    bool bert = false;
    Matrix token_types;  // token_types.weight: row t is added for token type t
    std::vector<double> embd_norm, embd_norm_b;
    uint32_t pooling_type = 0;  // <arch>.pooling_type, llama.cpp's enum; 0 (none) when absent
    Matrix token_embd;          // row t: the embedding of token t
    Matrix position_embd;       // gpt2: row p is added at position p
    std::vector<double> output_norm_b;
    std::vector<double> output_norm;
    Matrix output;
    std::vector<LayerRef> layers;
};

// Loads architecture "llama", "qwen2", "qwen3", "gpt2", "qwen2moe", "gpt-oss", "gemma2", "gemma3",
// "olmo2", "phi3", "qwen3moe", "smollm3", "granite" or "bert" with tensors of any type
// format::can_dequantize() reads (MXFP4 experts included). Throws std::runtime_error naming what is
// missing or malformed (vkllm::Error for an unreadable file).
std::unique_ptr<ModelRef> load_model_ref(const std::string &gguf_path);

// LayerNorm in double: (x - mean) / sqrt(var + eps) * w + b.
std::vector<double> layer_normed(std::vector<double> x, const std::vector<double> &w,
                                 const std::vector<double> &b, double eps);

// result[i]: the n_vocab logits after tokens[0..i] at positions 0..i, predicting token i+1.
std::vector<std::vector<float>> forward_logits(const ModelRef &m,
                                               const std::vector<int32_t> &tokens);

// Which earlier positions a query position may attend to (besides causality): a KV cache
// that keeps only some positions, such as a streaming window, is this mask.
using Visibility = std::function<bool(uint32_t query, uint32_t key)>;

// forward_logits with attention restricted to the keys `visible` allows (on sliding-window
// layers, to those the window also allows).
std::vector<std::vector<float>> forward_logits_masked(const ModelRef &m,
                                                      const std::vector<int32_t> &tokens,
                                                      const Visibility &visible);
std::vector<std::vector<double>> forward_logits_masked_f64(const ModelRef &m,
                                                           const std::vector<int32_t> &tokens,
                                                           const Visibility &visible);

// The same in double, before rounding to float.
std::vector<std::vector<double>> forward_logits_f64(const ModelRef &m,
                                                    const std::vector<int32_t> &tokens);

// The experts chosen for one token's router logits and their weights, in the architecture's
// order (qwen2moe, qwen3moe: softmax then top-k, qwen3moe renormalised; gpt-oss: top-k then softmax
// over the chosen). Experts come in decreasing order of logit, the lower index first on ties;
// `logits` has n_expert values (bias included). Throws std::invalid_argument for a dense model or a
// wrong size.
void route(const ModelRef &m, const std::vector<double> &logits, std::vector<int> *experts,
           std::vector<double> *weights);

// `n` ids continuing a non-empty `prompt`, each the argmax (lowest id on ties) of the double
// logits after the sequence so far, which is recomputed from scratch for every id.
std::vector<int32_t> greedy(const ModelRef &m, std::vector<int32_t> prompt, int n);

}  // namespace ref
