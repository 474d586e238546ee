// The hyper-parameters of a supported architecture, read and checked from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>

#include "format/gguf.h"
#include "models/architecture.h"

namespace vkllm::models {

struct ModelConfig {
    Arch arch = Arch::Llama;
    std::string arch_name;
    // The row's norm and FFN family (models/architectures.def).
    Norm norm = Norm::Rms;
    Ffn ffn = Ffn::SwiGlu;
    uint32_t n_vocab = 0;
    uint32_t n_embd = 0;
    uint32_t n_layer = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t head_dim = 0;
    uint32_t n_ff = 0;
    uint32_t n_ctx_train = 0;
    uint32_t rot_dim = 0;  // rotary dimensions of each head (0: learned positions)
    float rope_base = 10000.0f;
    float norm_eps = 1e-5f;
    // GPT-2: learned position embeddings (n_ctx_train rows), LayerNorm with bias, a fused QKV
    // projection and a GELU MLP, biases everywhere; the others: RoPE, RMSNorm, SwiGLU.
    bool learned_positions = false;
    // Mixture of experts (Qwen2-MoE, GPT-OSS, Qwen3-MoE): n_expert experts of n_ff_exp,
    // n_expert_used per token; Qwen2-MoE adds a shared expert of n_ff_shexp behind a sigmoid
    // gate.
    uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0;
    // Renormalise the chosen experts' probabilities to sum to 1 (Qwen2-MoE's option; always
    // for Qwen3-MoE).
    bool norm_topk = false;
    // GPT-OSS: attention sinks, sliding-window attention on even layers, YaRN RoPE scaling.
    bool attn_sinks = false;
    uint32_t sliding_window = 0;  // 0: none
    float yarn_factor = 0;        // 0: no YaRN; else the context extension factor
    uint32_t yarn_orig_ctx = 0;   // the context the model was trained at before extension
    // ggml's YaRN knobs, when the file sets them (rope.scaling.yarn_*).
    float yarn_ext_factor = 1, yarn_attn_factor = 1, yarn_beta_fast = 32, yarn_beta_slow = 1;

    // Sliding-window layers in a pattern of swa_pattern layers: all of a group but its last
    // (llama.cpp's set_swa_pattern; GPT-OSS and Gemma 2: 2, every even layer; Gemma 3: 6, five
    // local layers then a global one).
    uint32_t swa_pattern = 0;
    // Gemma 3: the sliding-window layers' RoPE base (0: rope_base, as every layer's), and the
    // global layers' linear RoPE scaling factor (0: none; positions divided by it).
    float rope_base_swa = 0;
    float rope_linear_factor = 0;
    // The attention's logit scale (1 / sqrt(head_dim), Gemma's query_pre_attn_scalar, or
    // Granite's attention.scale).
    float attn_scale = 0;
    // Gemma 2: soft-capping of the attention's scores and of the final logits, x -> cap *
    // tanh(x / cap) (0: none; Gemma 3 files may carry the final one too).
    float attn_softcap = 0, final_softcap = 0;
    // Gemma 2 and 3: the embeddings times sqrt(n_embd); norms of the attention's and the FFN's
    // output before the residual add (post_attention_norm, post_ffw_norm; OLMo 2 too).
    float embd_scale = 1;  // Granite: granite.embedding_scale
    bool post_norms = false;
    // Granite: each block's output (attention and FFN) times residual_scale before it is added
    // to the residual stream; the logits divided by logit_scale.
    float residual_scale = 1, logit_scale = 1;

    // Layers without RoPE: those il with (il + 1) % no_rope_step == 0 (SmolLM3: 4, llama.cpp's
    // n_no_rope_layer_step, set by the architecture, no GGUF key; Granite files whose
    // rope.scaling.finetuned is false: 1, none rotates). 0: every layer rotates.
    uint32_t no_rope_step = 0;
    // Phi-3 LongRoPE (Phi-3.5-mini, Phi-4-mini): the file's rope_factors_long / rope_factors_short
    // (per-pair divisors of the angle, as Llama 3.1's rope_freqs). As llama.cpp chooses them, a
    // session whose context (per sequence) exceeds rope_orig_ctx
    // (rope.scaling.original_context_length, else context_length) takes the long ones, any
    // other the short ones; cos and sin are times rope_attn_factor (rope.scaling.attn_factor,
    // any model; 1 when absent) whichever table a session takes.
    bool longrope = false;
    uint32_t rope_orig_ctx = 0;
    float rope_attn_factor = 1;
    // OLMo 2: no norm before the attention or the FFN (attn_norm, ffn_norm): only post-norms.
    bool pre_norms = true;
    // BERT (architectures.def's Encoder place): LayerNorms of the embeddings and of the residual
    // stream after each add, attention both ways over each whole input, and no output head:
    // the last norm's output is the model's output (engine/embed.h).
    bool encoder = false;
    // <arch>.pooling_type, llama.cpp's enum (0 none, 1 mean, 2 cls, 3 last, 4 rank); 0 where the
    // file states none. What embeddings pool by default.
    uint32_t pooling = 0;

    bool moe() const { return n_expert > 0; }
    // Whether layer `il` rotates its queries and keys.
    bool rope_layer(uint32_t il) const {
        return rot_dim > 0 && !(no_rope_step > 0 && (il + 1) % no_rope_step == 0);
    }
    // Whether layer `il` attends over a sliding window.
    bool swa_layer(uint32_t il) const {
        return sliding_window > 0 && swa_pattern > 0 && il % swa_pattern < swa_pattern - 1;
    }
    bool neox = false;           // RoPE pairs (i, i + rot/2) rather than (2i, 2i+1)
    bool qk_norm = false;        // RMSNorm of q and k (Qwen3, Gemma 3: per head; OLMo 2: whole)
    bool qk_norm_whole = false;  // OLMo 2: over q's and k's whole rows, not per head
    bool tied_output = false;    // no output.weight: the embedding is the output head
    // Phi-3: attn_qkv.weight (where the file has it) holds Q, K and V, ffn_up.weight the gate
    // and up rows.
    bool fused_projections = false;

    uint32_t q_dim() const { return n_head * head_dim; }
    uint32_t kv_dim() const { return n_head_kv * head_dim; }
    // The width of the q and k norms' weights (and of the rows they normalise).
    uint32_t q_norm_dim() const { return qk_norm_whole ? q_dim() : head_dim; }
    uint32_t k_norm_dim() const { return qk_norm_whole ? kv_dim() : head_dim; }
};

// The file's row of models/architectures.def, and the hyper-parameters it says to read, then
// the row's special case. VKLLM_ERR_UNSUPPORTED names an architecture no row has (and every
// one a row has) or a variant of one that is refused; VKLLM_ERR_FORMAT names a missing or
// inconsistent hyper-parameter.
ModelConfig read_config(const format::GgufFile &file);

}  // namespace vkllm::models
