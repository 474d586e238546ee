#include "model_presets.h"

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

}  // namespace vkllm_tool
