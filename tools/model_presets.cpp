#include "model_presets.h"

#include <cmath>

namespace vkllm_tool {

namespace {

// Hyperparameters from each model's Hugging Face config.json. Special tokens of the built-in
// vocabularies mirror the real ones (Qwen2.5 ends a turn with <|im_end|>, Llama 3 asks for a
// BOS) so chat and stop handling behave as with the real tokenizer.
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
    const uint64_t d = p.n_embd, head_dim = p.n_embd / p.n_head;
    const uint64_t q_dim = p.n_head * head_dim, kv_dim = p.n_head_kv * head_dim;
    const bool gpt2 = std::string(p.arch) == "gpt2";
    std::vector<TensorSpec> t;
    auto add = [&](const std::string &name, std::vector<uint64_t> dims, Fill fill) {
        t.push_back(TensorSpec{name, std::move(dims), fill});
    };
    // Llama 3.1+ files begin with it: the converter emits it before the checkpoint's tensors.
    if (p.llama3_rope_factor > 0) add("rope_freqs.weight", {head_dim / 2}, Fill::RopeFactors);
    add("token_embd.weight", {d, p.n_vocab}, Fill::Matrix);
    if (gpt2) add("position_embd.weight", {d, p.n_ctx}, Fill::Matrix);
    for (uint32_t i = 0; i < n_layers; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        add(b + "attn_norm.weight", {d}, Fill::NormWeight);
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
        add(b + "attn_q.weight", {d, q_dim}, Fill::Matrix);
        if (p.qkv_bias) add(b + "attn_q.bias", {q_dim}, Fill::Bias);
        add(b + "attn_k.weight", {d, kv_dim}, Fill::Matrix);
        if (p.qkv_bias) add(b + "attn_k.bias", {kv_dim}, Fill::Bias);
        add(b + "attn_v.weight", {d, kv_dim}, Fill::Matrix);
        if (p.qkv_bias) add(b + "attn_v.bias", {kv_dim}, Fill::Bias);
        add(b + "attn_output.weight", {q_dim, d}, Fill::Matrix);
        add(b + "ffn_norm.weight", {d}, Fill::NormWeight);
        add(b + "ffn_gate.weight", {d, p.n_ff}, Fill::Matrix);
        add(b + "ffn_up.weight", {d, p.n_ff}, Fill::Matrix);
        add(b + "ffn_down.weight", {p.n_ff, d}, Fill::Matrix);
    }
    add("output_norm.weight", {d}, Fill::NormWeight);
    if (gpt2) add("output_norm.bias", {d}, Fill::Bias);
    return t;
}

void write_hparams(const Preset &p, uint32_t n_layers, vkllm::format::GgufWriter &w) {
    const std::string a = std::string(p.arch) + ".";
    w.set_string("general.architecture", p.arch);
    w.set_string("general.type", "model");
    w.set_string("general.name", p.display_name);
    w.set_u32(a + "block_count", n_layers);
    w.set_u32(a + "context_length", p.n_ctx);
    w.set_u32(a + "embedding_length", p.n_embd);
    w.set_u32(a + "feed_forward_length", p.n_ff);
    w.set_u32(a + "attention.head_count", p.n_head);
    if (p.rope_base == 0) {
        // GPT-2's converter writes neither KV heads nor RoPE, and a LayerNorm epsilon.
        w.set_f32(a + "attention.layer_norm_epsilon", float(p.norm_eps));
        return;
    }
    w.set_u32(a + "attention.head_count_kv", p.n_head_kv);
    w.set_f32(a + "rope.freq_base", float(p.rope_base));
    w.set_f32(a + "attention.layer_norm_rms_epsilon", float(p.norm_eps));
    if (std::string(p.arch) == "llama") {
        w.set_u32(a + "vocab_size", p.n_vocab);
        w.set_u32(a + "rope.dimension_count", p.n_embd / p.n_head);
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
