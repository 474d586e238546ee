#include "models/config.h"

#include <cmath>

#include "common/error.h"
#include "models/hparams.h"

namespace vkllm::models {

namespace {

// Mixture of experts: how many, how wide, and how their weights are combined.
void read_experts(const Architecture &a, const HParams &keys, ModelConfig &c) {
    c.n_expert = keys.need("expert_count");
    c.n_expert_used = keys.need("expert_used_count");
    c.n_ff_exp = keys.need("expert_feed_forward_length");
    if (a.ffn == Ffn::SharedExperts) c.n_ff_shexp = keys.need("expert_shared_feed_forward_length");
    if (a.topk == TopK::FileSays)
        c.norm_topk = keys.integer("expert_weights_norm").value_or(0) != 0;
    if (a.topk == TopK::Renormalized) c.norm_topk = true;
    if (c.n_expert > 256 || c.n_expert_used > 8 || c.n_expert_used > c.n_expert)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: %u of %u experts per token (at most 8 of 256)",
             keys.path(), c.n_expert_used, c.n_expert);
}

// rope.scaling.type where the row reads it: absent or "none", or a kind it takes.
void read_rope_scaling(const Architecture &a, const HParams &keys, ModelConfig &c) {
    if (a.scaling == RopeScalingKey::Unread) return;
    auto type = keys.string("rope.scaling.type");
    bool yarn = a.scaling == RopeScalingKey::Yarn || a.scaling == RopeScalingKey::LinearOrYarn;
    bool linear = a.scaling == RopeScalingKey::Linear || a.scaling == RopeScalingKey::LinearOrYarn;
    if (yarn && type && *type == "yarn") {
        c.yarn_factor = keys.positive("rope.scaling.factor", 1.0);
        c.yarn_orig_ctx = keys.need("rope.scaling.original_context_length");
        c.yarn_ext_factor = keys.finite("rope.scaling.yarn_ext_factor", 1);
        c.yarn_attn_factor = keys.finite("rope.scaling.yarn_attn_factor", 1);
        c.yarn_beta_fast = keys.finite("rope.scaling.yarn_beta_fast", 32);
        c.yarn_beta_slow = keys.finite("rope.scaling.yarn_beta_slow", 1);
        if (!(c.yarn_factor >= 1.0f))
            fail(VKLLM_ERR_FORMAT, "%s: rope.scaling.factor %g is below 1", keys.path(),
                 double(c.yarn_factor));
    } else if (linear && type && *type == "linear") {
        c.rope_linear_factor = keys.positive("rope.scaling.factor", 1.0);
    } else if (type && *type != "none") {
        fail(VKLLM_ERR_UNSUPPORTED, "%s: RoPE scaling \"%s\" is not supported for %s", keys.path(),
             std::string(*type).c_str(), a.name);
    }
}

// A soft cap of its column (architectures.def): not read, read where non-zero, or a default.
float read_cap(float column, const HParams &keys, const char *key) {
    if (column == NoCap) return 0;
    if (column == FileCap) return keys.number(key).value_or(0) != 0 ? keys.positive(key, 0) : 0;
    return keys.positive(key, column);
}

}  // namespace

ModelConfig read_config(const format::GgufFile &f) {
    const char *path = f.path().c_str();
    auto name = f.get_string("general.architecture");
    if (!name) fail(VKLLM_ERR_FORMAT, "%s: general.architecture is missing", path);
    const Architecture *row = find_architecture(*name);
    if (!row)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: architecture \"%s\" is not supported (%s are)", path,
             std::string(*name).c_str(), architecture_names().c_str());
    const Architecture &a = *row;
    ModelConfig c;
    c.arch = a.arch;
    c.arch_name = a.name;
    c.norm = a.norm;
    c.ffn = a.ffn;
    const HParams keys(f, c.arch_name);

    c.n_embd = keys.need("embedding_length");
    c.n_layer = keys.need("block_count");
    c.n_head = keys.need("attention.head_count");
    c.n_head_kv = keys.opt("attention.head_count_kv", c.n_head);
    c.head_dim = keys.opt("attention.key_length", c.n_embd / c.n_head);
    c.n_ff = keys.need("feed_forward_length");
    c.learned_positions = a.positions == Positions::Learned;
    // Learned positions: the position table's rows are the context, so it must be stated.
    c.n_ctx_train =
        c.learned_positions ? keys.need("context_length") : keys.opt("context_length", 4096);
    c.rot_dim = c.learned_positions ? 0 : keys.opt("rope.dimension_count", c.head_dim);
    c.rope_base = keys.positive("rope.freq_base", 10000.0);
    c.norm_eps = keys.positive(
        a.norm == Norm::Layer ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon",
        1e-5);
    if (c.n_head % c.n_head_kv != 0)
        fail(VKLLM_ERR_FORMAT, "%s: %u heads cannot share %u key/value heads evenly", path,
             c.n_head, c.n_head_kv);
    if (c.rot_dim > c.head_dim || c.rot_dim % 2)
        fail(VKLLM_ERR_FORMAT, "%s: rotary dimension %u does not fit head dimension %u", path,
             c.rot_dim, c.head_dim);
    if (auto v = keys.integer("attention.value_length"); v && *v != int64_t(c.head_dim))
        fail(VKLLM_ERR_UNSUPPORTED, "%s: value heads of %lld differ from key heads of %u", path,
             (long long)*v, c.head_dim);
    if (a.experts()) read_experts(a, keys, c);

    c.attn_sinks = a.sinks;
    if (a.swa_pattern) {
        c.sliding_window = keys.opt("attention.sliding_window", a.default_window);
        c.swa_pattern = a.swa_pattern;
    }
    c.rope_base_swa = a.rope_base_swa;
    read_rope_scaling(a, keys, c);
    c.attn_softcap = read_cap(a.attn_cap, keys, "attn_logit_softcapping");
    c.final_softcap = read_cap(a.final_cap, keys, "final_logit_softcapping");
    if (a.embd_scale == EmbdScale::SqrtEmbd) c.embd_scale = std::sqrt(float(c.n_embd));
    c.pre_norms = a.place == NormPlace::Pre || a.place == NormPlace::PrePost;
    c.post_norms = a.place == NormPlace::PrePost || a.place == NormPlace::Post;
    c.encoder = a.place == NormPlace::Encoder;
    int64_t pooling = keys.integer("pooling_type").value_or(0);
    if (pooling < 0 || pooling > 4)
        fail(VKLLM_ERR_FORMAT, "%s: pooling_type %lld is none of llama.cpp's (0 to 4)", path,
             (long long)pooling);
    c.pooling = uint32_t(pooling);
    c.neox = a.positions == Positions::RopeNeox;
    c.qk_norm = a.qk_norm != QkNorm::NoQk;
    c.qk_norm_whole = a.qk_norm == QkNorm::WholeRow;
    c.no_rope_step = a.no_rope_step;
    c.fused_projections = a.fused_projections;
    c.attn_scale = 1.0f / std::sqrt(float(c.head_dim));
    if (a.special) a.special(keys, c);

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
