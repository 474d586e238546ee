#include "model_presets.h"

#include <cmath>

namespace vkllm_tool {

namespace {

// Hyperparameters from each model's Hugging Face config.json. Special tokens of the built-in
// vocabularies mirror the real ones (Qwen2.5 ends a turn with <|im_end|>, Llama 3 asks for a
// BOS) so chat and stop handling behave as with the real tokenizer.
// Phi-4-mini-instruct's rope_scaling (config.json): LongRoPE over 48 of the 64 pairs of its
// heads (partial_rotary_factor 0.75 of 128 dims), long factors for contexts past 4096, short
// ones (all 1) up to it.
const float kPhi4MiniLongFactors[48] = {
    1.0f,         1.118320672f, 1.250641126f, 1.398617824f, 1.564103225f, 1.74916897f,
    1.956131817f, 2.187582649f, 2.446418898f, 2.735880826f, 3.059592084f, 3.421605075f,
    3.826451687f, 4.279200023f, 4.785517845f, 5.351743533f, 5.984965424f, 6.693110555f,
    7.485043894f, 8.370679318f, 9.36110372f,  10.4687158f,  11.70738129f, 13.09260651f,
    14.64173252f, 16.37415215f, 18.31155283f, 20.47818807f, 22.90118105f, 25.61086418f,
    28.64115884f, 32.03f,       32.1f,        32.13f,       32.23f,       32.6f,
    32.61f,       32.64f,       32.66f,       32.7f,        32.71f,       32.93f,
    32.97f,       33.28f,       33.49f,       33.5f,        44.16f,       47.77f};
const float kPhi4MiniShortFactors[48] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

const Preset kPresets[] = {
    {"gpt2-124m",
     "gpt2",
     "GPT-2 124M (random weights)",
     768,
     12,
     12,
     12,
     3072,
     50257,
     1024,
     0.0,
     1e-5,
     false,
     0.0,
     {"gpt-2", {"<|endoftext|>"}, 0, 0, -1, -1}},
    {"qwen2.5-0.5b",
     "qwen2",
     "Qwen2.5 0.5B (random weights)",
     896,
     24,
     14,
     2,
     4864,
     151936,
     32768,
     1e6,
     1e-6,
     true,
     0.0,
     {"qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, 0, 2, 0, 0}},
    {"qwen2.5-1.5b",
     "qwen2",
     "Qwen2.5 1.5B (random weights)",
     1536,
     28,
     12,
     2,
     8960,
     151936,
     32768,
     1e6,
     1e-6,
     true,
     0.0,
     {"qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, 0, 2, 0, 0}},
    {"llama-3.2-1b",
     "llama",
     "Llama 3.2 1B (random weights)",
     2048,
     16,
     32,
     8,
     8192,
     128256,
     131072,
     500000.0,
     1e-5,
     false,
     32.0,
     {"llama-bpe",
      {"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
       "<|eot_id|>"},
      0,
      1,
      -1,
      1}},
    // GPT-OSS-20B (llama.cpp's GptOssModel): 64 query heads of 64 over a 2880-wide stream, 32
    // experts of 2880 with biases, 4 per token, attention sinks, a 128-token window on the
    // even layers, YaRN x32 over 4096 trained positions; harmony's special tokens.
    {"gpt-oss-20b",
     "gpt-oss",
     "GPT-OSS 20B (random weights)",
     2880,
     24,
     64,
     8,
     2880,
     201088,
     131072,
     150000.0,
     1e-5,
     true,
     0.0,
     {"gpt-4o",
      {"<|startoftext|>", "<|endoftext|>", "<|return|>", "<|constrain|>", "<|channel|>",
       "<|start|>", "<|end|>", "<|message|>", "<|call|>"},
      0,
      2,
      1,
      0},
     true,   // output.weight
     64,     // head_dim
     32,     // experts
     4,      // used per token
     2880,   // expert FFN width
     0,      // shared expert
     128,    // sliding window
     32.0,   // YaRN factor
     4096},  // YaRN original context
    // Qwen1.5-MoE-A2.7B (Qwen2MoeModel): 60 experts of 1408, 4 per token, plus a shared
    // expert of 5632 behind a sigmoid gate; Qwen's ChatML tokens.
    {"qwen2moe-a2.7b",
     "qwen2moe",
     "Qwen1.5-MoE-A2.7B (random weights)",
     2048,
     24,
     16,
     16,
     5632,
     151936,
     8192,
     1e6,
     1e-6,
     true,
     0.0,
     {"qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, 0, 2, 0, 0},
     true,   // output.weight
     0,      // head_dim: n_embd / n_head
     60,     // experts
     4,      // used per token
     1408,   // expert FFN width
     5632},  // shared expert FFN width
    // Qwen3-30B-A3B (Qwen3MoeModel): 128 experts of 768, 8 per token, their weights
    // renormalised; 32 query heads of 128 (not 2048 / 32) with per-head q/k norms, 4 KV heads;
    // no shared expert; an output head of its own.
    {"qwen3-30b-a3b",
     "qwen3moe",
     "Qwen3-30B-A3B (random weights)",
     2048,
     48,
     32,
     4,
     6144,
     151936,
     40960,
     1e6,
     1e-6,
     false,
     0.0,
     {"qwen2", {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}, 0, 2, 0, 0},
     true,  // output.weight
     128,   // head_dim
     128,   // experts
     8,     // used per token
     768},  // expert FFN width
    // SmolLM3-3B (SmolLM3Model, Llama's converter): Llama 3's vocabulary, no RoPE on every
    // fourth layer (fixed by the architecture: no key), a tied output; ChatML's tokens.
    {"smollm3-3b",
     "smollm3",
     "SmolLM3 3B (random weights)",
     2048,
     36,
     16,
     4,
     11008,
     128256,
     65536,
     5e6,
     1e-6,
     false,
     0.0,
     {"llama-bpe",
      {"<|begin_of_text|>", "<|end_of_text|>", "<|im_start|>", "<|im_end|>"},
      0,
      3,
      -1,
      0}},
    // Granite 3.3 2B Instruct (GraniteModel, Llama's converter): embeddings times 12, each
    // block's output times 0.22, an attention logit scale of 1/64, logits divided by 8; a tied
    // output; Granite's role tokens.
    {"granite-3.3-2b",
     "granite",
     "Granite 3.3 2B Instruct (random weights)",
     2048,
     40,
     32,
     8,
     8192,
     49159,
     131072,
     1e7,
     1e-5,
     false,
     0.0,
     {"refact",
      {"<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>", "<|tool_call|>"},
      0,
      0,
      0,
      0},
     false,  // tied output
     0,      // head_dim: n_embd / n_head
     0,
     0,
     0,
     0,
     0,
     0.0,
     0,
     0,        // all dims rotated
     nullptr,  // no LongRoPE
     nullptr,
     0,
     0.0,  // no soft caps
     0.0,
     12.0,      // embedding_multiplier
     0.22,      // residual_multiplier
     0.015625,  // attention_multiplier
     8.0},      // logits_scaling
    // Not a real model: GPT-OSS-20B's attention, vocabulary and parameter count with the 32
    // experts of each layer merged into one dense SwiGLU FFN of 32 x 2880 (the same FFN
    // weights, all of them read for every token), as a qwen2 file. Against gpt-oss-20b it shows
    // what routing saves: decode reads 4 of 32 experts there, the whole FFN here.
    {"gpt-oss-20b-dense",
     "qwen2",
     "GPT-OSS 20B dense equivalent (random weights)",
     2880,
     24,
     64,
     8,
     32 * 2880,
     201088,
     131072,
     150000.0,
     1e-5,
     true,
     0.0,
     {"gpt-4o",
      {"<|startoftext|>", "<|endoftext|>", "<|return|>", "<|constrain|>", "<|channel|>",
       "<|start|>", "<|end|>", "<|message|>", "<|call|>"},
      0,
      2,
      1,
      0},
     true,  // output.weight
     64},   // head_dim
    // Phi-4-mini-instruct (Phi3MiniModel): 24 query heads of 128 sharing 8 KV heads, fused
    // qkv_proj and gate_up_proj, RoPE on 96 of each head's 128 dims with LongRoPE factors
    // (original context 4096 of 131072), a 262144-token sliding_window key (which llama.cpp
    // and vkllm ignore), tied embeddings; its o200k vocabulary's chat tokens.
    {"phi-4-mini",
     "phi3",
     "Phi 4 Mini Instruct (random weights)",
     3072,
     32,
     24,
     8,
     8192,
     200064,
     131072,
     10000.0,
     1e-5,
     false,
     0.0,
     {"gpt-4o",
      {"<|endoftext|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"},
      0,
      0,
      0,
      -1},
     false,   // tied output
     0,       // head_dim: n_embd / n_head
     0,       // experts
     0,       // used per token
     0,       // expert FFN width
     0,       // shared expert
     262144,  // sliding_window (written, ignored)
     0.0,     // no YaRN
     0,       //
     96,      // rotated dims of 128
     kPhi4MiniLongFactors,
     kPhi4MiniShortFactors,
     4096},  // original context
    // Gemma 2 2B (google/gemma-2-2b, Gemma2Model): heads of 256 over a 2304-wide stream, even
    // layers local over 4096 positions, attention scores capped at 50 and logits at 30, a tied
    // output; Gemma's special tokens.
    {"gemma2-2b",
     "gemma2",
     "Gemma 2 2B (random weights)",
     2304,
     26,
     8,
     4,
     9216,
     256000,
     8192,
     10000.0,  // not written: the converter writes no RoPE base for gemma2
     1e-6,
     false,
     0.0,
     {"default", {"<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"}, 2, 1, 0, 1},
     false,  // tied output
     256,    // head_dim
     0,
     0,
     0,
     0,
     4096,  // sliding window
     0.0,
     0,
     0,        // all dims rotated
     nullptr,  // no LongRoPE
     nullptr,
     0,
     50.0,   // attention-logit soft cap
     30.0},  // final-logit soft cap
    // Gemma 3 270M (google/gemma-3-270m, Gemma3Model): 4 query heads of 256 sharing one KV
    // head over a 640-wide stream, five local layers (window 512, RoPE base 10^4) then a
    // global one (base 10^6), a tied output; the metadata keys of the real GGUF file.
    {"gemma3-270m",
     "gemma3",
     "Gemma 3 270M (random weights)",
     640,
     18,
     4,
     1,
     2048,
     262144,
     32768,
     1e6,
     1e-6,
     false,
     0.0,
     {"default", {"<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"}, 2, 1, 0, 1},
     false,  // tied output
     256,    // head_dim
     0,
     0,
     0,
     0,
     512},  // sliding window
    // Gemma 3 1B (google/gemma-3-1b-it): as 270M, 1152 wide, 26 layers, FFN 6912.
    {"gemma3-1b",
     "gemma3",
     "Gemma 3 1B (random weights)",
     1152,
     26,
     4,
     1,
     6912,
     262144,
     32768,
     1e6,
     1e-6,
     false,
     0.0,
     {"default", {"<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>"}, 2, 1, 0, 1},
     false,  // tied output
     256,    // head_dim
     0,
     0,
     0,
     0,
     512},  // sliding window
    // OLMo 2 1B (allenai/OLMo-2-0425-1B, Olmo2Model): 16 heads of 128, no pre-norms, QK-norm
    // over whole rows, post-norms, an output head of its own; the cl100k-style vocabulary.
    {"olmo2-1b",
     "olmo2",
     "OLMo 2 1B (random weights)",
     2048,
     16,
     16,
     16,
     8192,
     100352,
     4096,
     500000.0,
     1e-6,
     false,
     0.0,
     {"dbrx", {"<|endoftext|>", "<|pad|>"}, 0, 0, 1, -1},
     true},  // output.weight
};

}  // namespace

const Preset *find_preset(const std::string &name) {
    for (const Preset &p : kPresets)
        if (name == p.name) return &p;
    return nullptr;
}

std::string preset_names() {
    std::string s;
    for (const Preset &p : kPresets)
        s += (s.empty() ? "" : " ") + std::string(p.name);
    return s;
}

std::vector<TensorSpec> preset_tensors(const Preset &p, uint32_t n_layers) {
    const uint64_t d = p.n_embd, head_dim = p.head_dim ? p.head_dim : p.n_embd / p.n_head;
    const uint64_t q_dim = p.n_head * head_dim, kv_dim = p.n_head_kv * head_dim;
    const bool gpt2 = std::string(p.arch) == "gpt2";
    const bool oss = std::string(p.arch) == "gpt-oss";
    const bool phi3 = std::string(p.arch) == "phi3";
    const bool gemma = std::string(p.arch) == "gemma2" || std::string(p.arch) == "gemma3";
    const bool olmo2 = std::string(p.arch) == "olmo2";
    // Qwen3's per-head RMS norms of q and k.
    const bool qk_norm = std::string(p.arch) == "qwen3" || std::string(p.arch) == "qwen3moe";
    std::vector<TensorSpec> t;
    auto add = [&](const std::string &name, std::vector<uint64_t> dims, Fill fill) {
        t.push_back(TensorSpec{name, std::move(dims), fill});
    };
    // Phi3MiniModel yields the LongRoPE factors before the checkpoint's tensors.
    if (p.longrope_long) {
        add("rope_factors_long.weight", {p.rot_dim / 2}, Fill::LongRopeLong);
        add("rope_factors_short.weight", {p.rot_dim / 2}, Fill::LongRopeShort);
    }
    // Llama 3.1+ files begin with it: the converter emits it before the checkpoint's tensors.
    if (p.llama3_rope_factor > 0) add("rope_freqs.weight", {head_dim / 2}, Fill::RopeFactors);
    add("token_embd.weight", {d, p.n_vocab}, Fill::Matrix);
    if (gpt2) add("position_embd.weight", {d, p.n_ctx}, Fill::Matrix);
    for (uint32_t i = 0; i < n_layers; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        if (!olmo2) add(b + "attn_norm.weight", {d}, Fill::NormWeight);
        if (gpt2) {
            add(b + "attn_norm.bias", {d}, Fill::Bias);
            add(b + "attn_qkv.weight", {d, q_dim + 2 * kv_dim}, Fill::Matrix);
            add(b + "attn_qkv.bias", {q_dim + 2 * kv_dim}, Fill::Bias);
            add(b + "attn_output.weight", {q_dim, d}, Fill::Matrix);
            add(b + "attn_output.bias", {d}, Fill::Bias);
            add(b + "ffn_norm.weight", {d}, Fill::NormWeight);
            add(b + "ffn_norm.bias", {d}, Fill::Bias);
            add(b + "ffn_up.weight", {d, p.n_ff}, Fill::Matrix);
            add(b + "ffn_up.bias", {p.n_ff}, Fill::Bias);
            add(b + "ffn_down.weight", {p.n_ff, d}, Fill::Matrix);
            add(b + "ffn_down.bias", {d}, Fill::Bias);
            continue;
        }
        if (phi3) {  // qkv_proj and gate_up_proj, no biases
            add(b + "attn_qkv.weight", {d, q_dim + 2 * kv_dim}, Fill::Matrix);
            add(b + "attn_output.weight", {q_dim, d}, Fill::Matrix);
            add(b + "ffn_norm.weight", {d}, Fill::NormWeight);
            add(b + "ffn_up.weight", {d, 2 * uint64_t(p.n_ff)}, Fill::Matrix);
            add(b + "ffn_down.weight", {p.n_ff, d}, Fill::Matrix);
            continue;
        }
        add(b + "attn_q.weight", {d, q_dim}, Fill::Matrix);
        if (p.qkv_bias) add(b + "attn_q.bias", {q_dim}, Fill::Bias);
        add(b + "attn_k.weight", {d, kv_dim}, Fill::Matrix);
        if (p.qkv_bias) add(b + "attn_k.bias", {kv_dim}, Fill::Bias);
        add(b + "attn_v.weight", {d, kv_dim}, Fill::Matrix);
        if (p.qkv_bias) add(b + "attn_v.bias", {kv_dim}, Fill::Bias);
        // Qwen3 and Gemma 3: RMSNorm of each head of q and k; OLMo 2: of their whole rows.
        if (qk_norm || std::string(p.arch) == "gemma3" || olmo2) {
            add(b + "attn_q_norm.weight", {olmo2 ? q_dim : head_dim}, Fill::NormWeight);
            add(b + "attn_k_norm.weight", {olmo2 ? kv_dim : head_dim}, Fill::NormWeight);
        }
        add(b + "attn_output.weight", {q_dim, d}, Fill::Matrix);
        if (gemma || olmo2) {
            add(b + "post_attention_norm.weight", {d}, Fill::NormWeight);
            if (!olmo2) add(b + "ffn_norm.weight", {d}, Fill::NormWeight);
            add(b + "ffn_gate.weight", {d, p.n_ff}, Fill::Matrix);
            add(b + "ffn_up.weight", {d, p.n_ff}, Fill::Matrix);
            add(b + "ffn_down.weight", {p.n_ff, d}, Fill::Matrix);
            add(b + "post_ffw_norm.weight", {d}, Fill::NormWeight);
            continue;
        }
        if (oss) {
            add(b + "attn_output.bias", {d}, Fill::Bias);
            add(b + "attn_sinks.weight", {p.n_head}, Fill::Bias);  // a logit per head
            add(b + "post_attention_norm.weight", {d}, Fill::NormWeight);
        } else {
            add(b + "ffn_norm.weight", {d}, Fill::NormWeight);
        }
        if (p.n_expert) {
            // Expert tensors stack the experts' matrices: [columns, rows, experts]; GPT-OSS's
            // biases are [rows, experts].
            const uint64_t e = p.n_expert, f = p.n_ff_exp;
            add(b + "ffn_gate_inp.weight", {d, e}, Fill::Router);
            if (oss) add(b + "ffn_gate_inp.bias", {e}, Fill::Bias);
            add(b + "ffn_gate_exps.weight", {d, f, e}, Fill::Matrix);
            if (oss) add(b + "ffn_gate_exps.bias", {f, e}, Fill::Bias);
            add(b + "ffn_up_exps.weight", {d, f, e}, Fill::Matrix);
            if (oss) add(b + "ffn_up_exps.bias", {f, e}, Fill::Bias);
            add(b + "ffn_down_exps.weight", {f, d, e}, Fill::Matrix);
            if (oss) add(b + "ffn_down_exps.bias", {d, e}, Fill::Bias);
            if (p.n_ff_shexp) {
                // The shared expert's gate is one row, stored as a vector as the converter
                // writes it.
                add(b + "ffn_gate_inp_shexp.weight", {d}, Fill::Router);
                add(b + "ffn_gate_shexp.weight", {d, p.n_ff_shexp}, Fill::Matrix);
                add(b + "ffn_up_shexp.weight", {d, p.n_ff_shexp}, Fill::Matrix);
                add(b + "ffn_down_shexp.weight", {p.n_ff_shexp, d}, Fill::Matrix);
            }
            continue;
        }
        add(b + "ffn_gate.weight", {d, p.n_ff}, Fill::Matrix);
        add(b + "ffn_up.weight", {d, p.n_ff}, Fill::Matrix);
        add(b + "ffn_down.weight", {p.n_ff, d}, Fill::Matrix);
    }
    add("output_norm.weight", {d}, Fill::NormWeight);
    if (gpt2) add("output_norm.bias", {d}, Fill::Bias);
    if (p.output) add("output.weight", {d, p.n_vocab}, Fill::Matrix);
    return t;
}

void write_hparams(const Preset &p, uint32_t n_layers, vkllm::format::GgufWriter &w) {
    const std::string a = std::string(p.arch) + ".";
    w.set_string("general.architecture", p.arch);
    w.set_string("general.type", "model");
    w.set_string("general.name", p.display_name);
    if (std::string(p.arch) == "phi3") {
        // Phi3MiniModel.set_gguf_parameters's keys in its order (the file type is the
        // writer's), then generate_extra_tensors's attention factor: sqrt(1 + ln(scale) /
        // ln(original)) for LongRoPE, scale = context / original.
        w.set_u32(a + "context_length", p.n_ctx);
        w.set_u32(a + "rope.scaling.original_context_length", p.longrope_orig_ctx);
        w.set_u32(a + "embedding_length", p.n_embd);
        w.set_u32(a + "feed_forward_length", p.n_ff);
        w.set_u32(a + "block_count", n_layers);
        w.set_u32(a + "attention.head_count", p.n_head);
        w.set_u32(a + "attention.head_count_kv", p.n_head_kv);
        w.set_f32(a + "attention.layer_norm_rms_epsilon", float(p.norm_eps));
        w.set_u32(a + "rope.dimension_count", p.rot_dim ? p.rot_dim : p.n_embd / p.n_head);
        w.set_f32(a + "rope.freq_base", float(p.rope_base));
        w.set_u32(a + "attention.sliding_window", p.sliding_window);
        if (p.longrope_long) {
            double scale = double(p.n_ctx) / p.longrope_orig_ctx;
            double attn_factor =
                scale > 1 ? std::sqrt(1 + std::log(scale) / std::log(double(p.longrope_orig_ctx)))
                          : 1.0;
            w.set_f32(a + "rope.scaling.attn_factor", float(attn_factor));
        }
        return;
    }
    if (std::string(p.arch) == "gemma2" || std::string(p.arch) == "gemma3") {
        // The Gemma converters write the context first.
        w.set_u32(a + "context_length", p.n_ctx);
        w.set_u32(a + "embedding_length", p.n_embd);
        w.set_u32(a + "block_count", n_layers);
    } else {
        w.set_u32(a + "block_count", n_layers);
        w.set_u32(a + "context_length", p.n_ctx);
        w.set_u32(a + "embedding_length", p.n_embd);
    }
    w.set_u32(a + "feed_forward_length", p.n_ff);
    w.set_u32(a + "attention.head_count", p.n_head);
    if (std::string(p.arch) == "gemma2") {
        // Gemma2Model.set_gguf_parameters: no RoPE keys; the soft caps and the window.
        w.set_u32(a + "attention.head_count_kv", p.n_head_kv);
        w.set_f32(a + "attention.layer_norm_rms_epsilon", float(p.norm_eps));
        w.set_u32(a + "attention.key_length", p.head_dim);
        w.set_u32(a + "attention.value_length", p.head_dim);
        w.set_f32(a + "attn_logit_softcapping", float(p.attn_softcap));
        w.set_f32(a + "final_logit_softcapping", float(p.final_softcap));
        w.set_u32(a + "attention.sliding_window", p.sliding_window);
        return;
    }
    if (std::string(p.arch) == "gemma3") {
        // As the real Gemma 3 270M file has them (Gemma3Model; no final_logit_softcapping
        // where the config has none).
        w.set_f32(a + "attention.layer_norm_rms_epsilon", float(p.norm_eps));
        w.set_u32(a + "attention.key_length", p.head_dim);
        w.set_u32(a + "attention.value_length", p.head_dim);
        w.set_f32(a + "rope.freq_base", float(p.rope_base));
        w.set_u32(a + "attention.sliding_window", p.sliding_window);
        w.set_u32(a + "attention.head_count_kv", p.n_head_kv);
        return;
    }
    if (p.rope_base == 0) {
        // GPT-2's converter writes neither KV heads nor RoPE, and a LayerNorm epsilon.
        w.set_f32(a + "attention.layer_norm_epsilon", float(p.norm_eps));
        return;
    }
    w.set_u32(a + "attention.head_count_kv", p.n_head_kv);
    w.set_f32(a + "rope.freq_base", float(p.rope_base));
    w.set_f32(a + "attention.layer_norm_rms_epsilon", float(p.norm_eps));
    if (p.head_dim) {
        w.set_u32(a + "attention.key_length", p.head_dim);
        w.set_u32(a + "attention.value_length", p.head_dim);
    }
    // Llama's converter (and SmolLM3's and Granite's, built on it) writes these two.
    const std::string arch = p.arch;
    if (arch == "llama" || arch == "smollm3" || arch == "granite") {
        w.set_u32(a + "vocab_size", p.n_vocab);
        w.set_u32(a + "rope.dimension_count", p.n_embd / p.n_head);
    }
    if (p.n_expert) {
        w.set_u32(a + "expert_count", p.n_expert);
        w.set_u32(a + "expert_used_count", p.n_expert_used);
        w.set_u32(a + "expert_feed_forward_length", p.n_ff_exp);
        if (p.n_ff_shexp) w.set_u32(a + "expert_shared_feed_forward_length", p.n_ff_shexp);
    }
    if (p.sliding_window) w.set_u32(a + "attention.sliding_window", p.sliding_window);
    if (p.embedding_scale > 0) w.set_f32(a + "embedding_scale", float(p.embedding_scale));
    if (p.residual_scale > 0) w.set_f32(a + "residual_scale", float(p.residual_scale));
    if (p.attention_scale > 0) w.set_f32(a + "attention.scale", float(p.attention_scale));
    if (p.logit_scale > 0) w.set_f32(a + "logit_scale", float(p.logit_scale));
    if (p.yarn_factor > 0) {
        w.set_string(a + "rope.scaling.type", "yarn");
        w.set_f32(a + "rope.scaling.factor", float(p.yarn_factor));
        w.set_u32(a + "rope.scaling.original_context_length", p.yarn_orig_ctx);
    }
}

std::vector<float> llama3_rope_factors(const Preset &p) {
    // Llama 3's rope_scaling (low_freq_factor 1, high_freq_factor 4, trained on 8192
    // positions); only the factor differs between 3.1 (8) and 3.2 (32).
    const double pi = 3.14159265358979323846;
    const double low = 1.0, high = 4.0, old_context = 8192.0, factor = p.llama3_rope_factor;
    const uint32_t dim = p.n_embd / p.n_head;
    std::vector<float> out;
    for (uint32_t i = 0; i < dim; i += 2) {
        // The converter computes the frequencies in float32, as here.
        float freq = 1.0f / std::pow(float(p.rope_base), float(i) / float(dim));
        double wavelen = 2 * pi / freq;
        if (wavelen < old_context / high) {
            out.push_back(1.0f);
        } else if (wavelen > old_context / low) {
            out.push_back(float(factor));
        } else {
            double smooth = (old_context / wavelen - low) / (high - low);
            out.push_back(float(1 / ((1 - smooth) / factor + smooth)));
        }
    }
    return out;
}

}  // namespace vkllm_tool
