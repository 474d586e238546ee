#include "models/config.h"

#include <cmath>

#include "common/error.h"

namespace vkllm::models {

ModelConfig read_config(const format::GgufFile &f) {
    const char *path = f.path().c_str();
    ModelConfig c;
    auto arch = f.get_string("general.architecture");
    if (!arch) fail(VKLLM_ERR_FORMAT, "%s: general.architecture is missing", path);
    c.arch_name = std::string(*arch);
    if (c.arch_name == "llama")
        c.arch = Arch::Llama;
    else if (c.arch_name == "qwen2")
        c.arch = Arch::Qwen2;
    else if (c.arch_name == "qwen3")
        c.arch = Arch::Qwen3;
    else if (c.arch_name == "gpt2")
        c.arch = Arch::Gpt2;
    else if (c.arch_name == "qwen2moe")
        c.arch = Arch::Qwen2Moe;
    else if (c.arch_name == "gpt-oss")
        c.arch = Arch::GptOss;
    else if (c.arch_name == "gemma2")
        c.arch = Arch::Gemma2;
    else if (c.arch_name == "gemma3")
        c.arch = Arch::Gemma3;
    else if (c.arch_name == "olmo2")
        c.arch = Arch::Olmo2;
    else if (c.arch_name == "phi3")
        c.arch = Arch::Phi3;
    else if (c.arch_name == "qwen3moe")
        c.arch = Arch::Qwen3Moe;
    else if (c.arch_name == "smollm3")
        c.arch = Arch::SmolLM3;
    else if (c.arch_name == "granite")
        c.arch = Arch::Granite;
    else
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: architecture \"%s\" is not supported (llama, qwen2, qwen3, gpt2, qwen2moe, "
             "gpt-oss, gemma2, gemma3, olmo2, phi3, qwen3moe, smollm3, granite are)",
             path, c.arch_name.c_str());

    const std::string p = c.arch_name + ".";
    auto need = [&](const std::string &key) -> uint32_t {
        auto v = f.get_int(p + key);
        if (!v) fail(VKLLM_ERR_FORMAT, "%s: %s%s is missing", path, p.c_str(), key.c_str());
        if (*v <= 0 || *v > int64_t(1) << 24)
            fail(VKLLM_ERR_FORMAT, "%s: %s%s = %lld is out of range", path, p.c_str(), key.c_str(),
                 (long long)*v);
        return uint32_t(*v);
    };
    auto opt = [&](const std::string &key, uint32_t def) -> uint32_t {
        return f.find(p + key) ? need(key) : def;
    };
    // A float the model cannot work with (NaN, infinite, zero or negative) is a broken file,
    // not something to compute with.
    auto positive = [&](const std::string &key, double def) -> float {
        double v = f.get_float(p + key).value_or(def);
        if (!(v > 0) || !std::isfinite(float(v)))
            fail(VKLLM_ERR_FORMAT, "%s: %s%s = %g must be a positive finite number", path,
                 p.c_str(), key.c_str(), v);
        return float(v);
    };
    c.n_embd = need("embedding_length");
    c.n_layer = need("block_count");
    c.n_head = need("attention.head_count");
    c.n_head_kv = opt("attention.head_count_kv", c.n_head);
    c.head_dim = opt("attention.key_length", c.n_embd / c.n_head);
    c.n_ff = need("feed_forward_length");
    c.learned_positions = c.arch == Arch::Gpt2;
    // Learned positions: the position table's rows are the context, so it must be stated.
    c.n_ctx_train = c.learned_positions ? need("context_length") : opt("context_length", 4096);
    c.rot_dim = c.learned_positions ? 0 : opt("rope.dimension_count", c.head_dim);
    c.rope_base = positive("rope.freq_base", 10000.0);
    c.norm_eps = positive(
        c.learned_positions ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon",
        1e-5);
    if (c.n_head % c.n_head_kv != 0)
        fail(VKLLM_ERR_FORMAT, "%s: %u heads cannot share %u key/value heads evenly", path,
             c.n_head, c.n_head_kv);
    if (c.rot_dim > c.head_dim || c.rot_dim % 2)
        fail(VKLLM_ERR_FORMAT, "%s: rotary dimension %u does not fit head dimension %u", path,
             c.rot_dim, c.head_dim);
    if (auto v = f.get_int(p + "attention.value_length"); v && *v != int64_t(c.head_dim))
        fail(VKLLM_ERR_UNSUPPORTED, "%s: value heads of %lld differ from key heads of %u", path,
             (long long)*v, c.head_dim);
    if (c.arch == Arch::Qwen2Moe || c.arch == Arch::GptOss || c.arch == Arch::Qwen3Moe) {
        c.n_expert = need("expert_count");
        c.n_expert_used = need("expert_used_count");
        c.n_ff_exp = need("expert_feed_forward_length");
        if (c.arch == Arch::Qwen2Moe) {
            c.n_ff_shexp = need("expert_shared_feed_forward_length");
            c.norm_topk = f.get_int(p + "expert_weights_norm").value_or(0) != 0;
        }
        // llama.cpp's qwen3moe graph always renormalises the top-k weights (its norm_w is
        // fixed, expert_weights_norm is not read): Qwen3-MoE's norm_topk_prob.
        if (c.arch == Arch::Qwen3Moe) c.norm_topk = true;
        if (c.n_expert > 256 || c.n_expert_used > 8 || c.n_expert_used > c.n_expert)
            fail(VKLLM_ERR_UNSUPPORTED, "%s: %u of %u experts per token (at most 8 of 256)", path,
                 c.n_expert_used, c.n_expert);
    }
    if (c.arch == Arch::GptOss) {
        c.attn_sinks = true;
        c.sliding_window = opt("attention.sliding_window", 0);
        c.swa_pattern = 2;
        if (auto type = f.get_string(p + "rope.scaling.type"); type && *type == "yarn") {
            c.yarn_factor = positive("rope.scaling.factor", 1.0);
            c.yarn_orig_ctx = need("rope.scaling.original_context_length");
            auto knob = [&](const char *key, float def) {
                double v = f.get_float(p + "rope.scaling." + key).value_or(def);
                if (!std::isfinite(float(v)))
                    fail(VKLLM_ERR_FORMAT, "%s: %srope.scaling.%s = %g is not finite", path,
                         p.c_str(), key, v);
                return float(v);
            };
            c.yarn_ext_factor = knob("yarn_ext_factor", 1);
            c.yarn_attn_factor = knob("yarn_attn_factor", 1);
            c.yarn_beta_fast = knob("yarn_beta_fast", 32);
            c.yarn_beta_slow = knob("yarn_beta_slow", 1);
            if (!(c.yarn_factor >= 1.0f))
                fail(VKLLM_ERR_FORMAT, "%s: rope.scaling.factor %g is below 1", path,
                     double(c.yarn_factor));
        } else if (type && *type != "none") {
            fail(VKLLM_ERR_UNSUPPORTED, "%s: RoPE scaling \"%s\" is not supported", path,
                 std::string(*type).c_str());
        }
    }
    if (c.arch == Arch::Gemma3) {
        // llama.cpp: with a window, five local layers (RoPE base 10000, unscaled) then a global
        // one (the file's base, and its linear scaling where it has one); queries scaled by
        // 1/sqrt(head_dim) (query_pre_attn_scalar for every size but 27B, which is refused
        // below since its scalar is n_embd / n_head instead); final logits soft-capped where
        // the file says.
        c.sliding_window = opt("attention.sliding_window", 0);
        c.swa_pattern = 6;
        c.rope_base_swa = 10000.0f;
        if (auto type = f.get_string(p + "rope.scaling.type"); type && *type == "linear") {
            c.rope_linear_factor = positive("rope.scaling.factor", 1.0);
        } else if (type && *type != "none") {
            fail(VKLLM_ERR_UNSUPPORTED, "%s: RoPE scaling \"%s\" is not supported", path,
                 std::string(*type).c_str());
        }
        if (c.n_layer == 62)
            fail(VKLLM_ERR_UNSUPPORTED,
                 "%s: Gemma 3 27B scales queries by n_embd / n_head, which is not supported", path);
        // The converter writes final_logit_softcapping only where the config has one; 0: none.
        if (f.get_float(p + "final_logit_softcapping").value_or(0) != 0)
            c.final_softcap = positive("final_logit_softcapping", 0);
    }
    if (c.arch == Arch::Gemma2) {
        // llama.cpp: every other layer local (set_swa_pattern(2): layers 0, 2, 4, ...; HF's
        // is_sliding = not layer_idx % 2), its window 4096 unless the file says; one RoPE base
        // for all layers; scores and final logits soft-capped (50 and 30 unless the file says).
        c.sliding_window = opt("attention.sliding_window", 4096);
        c.swa_pattern = 2;
        c.attn_softcap = positive("attn_logit_softcapping", 50.0);
        c.final_softcap = positive("final_logit_softcapping", 30.0);
        if (auto type = f.get_string(p + "rope.scaling.type"); type && *type != "none")
            fail(VKLLM_ERR_UNSUPPORTED, "%s: RoPE scaling \"%s\" is not supported for gemma2", path,
                 std::string(*type).c_str());
    }
    if (c.arch == Arch::Gemma2 || c.arch == Arch::Gemma3) {
        c.embd_scale = std::sqrt(float(c.n_embd));
        c.post_norms = true;
        c.gelu_gate = true;
    }
    if (c.arch == Arch::Phi3) {
        // llama.cpp (src/models/phi3.cpp) turns Phi's sliding window off ("Phi SWA is currently
        // disabled", PR 13676): every layer attends over the whole context, whatever
        // attention.sliding_window says, and so does vkllm. The converter writes no
        // rope.scaling.type: the angles are unscaled but for the LongRoPE factors.
        if (auto type = f.get_string(p + "rope.scaling.type"); type && *type != "none")
            fail(VKLLM_ERR_UNSUPPORTED, "%s: RoPE scaling \"%s\" is not supported for phi3", path,
                 std::string(*type).c_str());
        const format::TensorInfo *lf = f.find_tensor("rope_factors_long.weight");
        const format::TensorInfo *sf = f.find_tensor("rope_factors_short.weight");
        if (bool(lf) != bool(sf))
            fail(VKLLM_ERR_FORMAT, "%s: %s without %s", path,
                 lf ? "rope_factors_long.weight" : "rope_factors_short.weight",
                 lf ? "rope_factors_short.weight" : "rope_factors_long.weight");
        c.longrope = lf != nullptr;
        c.rope_orig_ctx = opt("rope.scaling.original_context_length", c.n_ctx_train);
        // sqrt(1 + ln(context / original) / ln(original)) from the converter; llama.cpp
        // multiplies it into the attn_factor its RoPE scales cos and sin by (ext_factor is 0
        // without YaRN, so nothing else changes their magnitude).
        c.rope_attn_factor = positive("rope.scaling.attn_factor", 1.0);
    }
    if (c.arch == Arch::Olmo2) {
        // llama.cpp's olmo2 (and HF's Olmo2): no pre-norms, the sublayers' outputs RMS-normed
        // before the residual add, q and k RMS-normed over their whole rows before RoPE.
        // OLMo 3 files (olmo2 with a sliding window) are not supported.
        if (f.find(p + "attention.sliding_window"))
            fail(VKLLM_ERR_UNSUPPORTED,
                 "%s: olmo2 with attention.sliding_window (OLMo 3) is not supported", path);
        if (auto type = f.get_string(p + "rope.scaling.type"); type && *type != "none")
            fail(VKLLM_ERR_UNSUPPORTED, "%s: RoPE scaling \"%s\" is not supported for olmo2", path,
                 std::string(*type).c_str());
        c.pre_norms = false;
        c.post_norms = true;
        c.qk_norm_whole = true;
    }
    c.attn_scale = 1.0f / std::sqrt(float(c.head_dim));
    // Gemma 2 27B (46 layers) scales queries by query_pre_attn_scalar = n_embd / n_head, the
    // others by head_dim (llama.cpp's f_attention_scale).
    if (c.arch == Arch::Gemma2 && c.n_layer == 46)
        c.attn_scale = 1.0f / std::sqrt(float(c.n_embd / c.n_head));
    // SmolLM3: every fourth layer has no RoPE (NoPE; HF's no_rope_layers, llama.cpp's
    // n_no_rope_layer_step = 4).
    if (c.arch == Arch::SmolLM3) c.no_rope_step = 4;
    if (c.arch == Arch::Granite) {
        // llama.cpp's granite: embeddings times embedding_scale, each block's output times
        // residual_scale, attention.scale as the attention's logit scale (each optional, 0 or
        // absent: not applied), the logits divided by logit_scale (required); RoPE unless
        // rope.scaling.finetuned is false.
        auto scale = [&](const char *key) -> float {
            double v = f.get_float(p + key).value_or(0);
            if (!std::isfinite(float(v)) || v < 0)
                fail(VKLLM_ERR_FORMAT, "%s: %s%s = %g must be a finite number >= 0", path,
                     p.c_str(), key, v);
            return float(v);
        };
        if (float s = scale("embedding_scale"); s != 0) c.embd_scale = s;
        if (float s = scale("residual_scale"); s != 0) c.residual_scale = s;
        if (float s = scale("attention.scale"); s != 0) c.attn_scale = s;
        if (!f.find(p + "logit_scale"))
            fail(VKLLM_ERR_FORMAT, "%s: %slogit_scale is missing", path, p.c_str());
        c.logit_scale = positive("logit_scale", 1.0);
        if (!f.get_bool(p + "rope.scaling.finetuned").value_or(true)) c.no_rope_step = 1;
    }
    // GGUF files of Llama's converter (llama, smollm3, granite) carry q/k rows permuted for
    // adjacent-pair RoPE (llama.cpp's LLAMA_ROPE_TYPE_NORM); Qwen, Gemma and GPT-OSS are NEOX.
    c.neox = c.arch != Arch::Llama && c.arch != Arch::SmolLM3 && c.arch != Arch::Granite;
    c.qk_norm = c.arch == Arch::Qwen3 || c.arch == Arch::Gemma3 || c.arch == Arch::Olmo2 ||
                c.arch == Arch::Qwen3Moe;
    const format::TensorInfo *embd = f.find_tensor("token_embd.weight");
    if (!embd) fail(VKLLM_ERR_FORMAT, "%s: token_embd.weight is missing", path);
    if (embd->n_dims != 2 || embd->dims[0] != c.n_embd || embd->dims[1] > (1u << 24))
        fail(VKLLM_ERR_FORMAT,
             "%s: token_embd.weight has shape [%llu, %llu], expected [%u, n_vocab]", path,
             (unsigned long long)embd->dims[0], (unsigned long long)embd->dims[1], c.n_embd);
    c.n_vocab = uint32_t(embd->dims[1]);
    c.tied_output = f.find_tensor("output.weight") == nullptr;
    return c;
}

}  // namespace vkllm::models
