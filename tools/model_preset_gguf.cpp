// What a preset writes into its GGUF file: each architecture's metadata keys as llama.cpp's
// converters write them, and every tensor with its shape and fill.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "model_presets.h"

namespace vkllm_tool {

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
