#include "models/quirks.h"

#include <cmath>

#include "common/error.h"

namespace vkllm::models {

// A size of one model, told apart by its layer count: a column would be a fact of every row
// for one file of one of them.
void gemma2_query_scale(const HParams &, ModelConfig &c) {
    // Gemma 2 27B (46 layers) scales queries by query_pre_attn_scalar = n_embd / n_head, the
    // others by head_dim (llama.cpp's f_attention_scale).
    if (c.n_layer == 46) c.attn_scale = 1.0f / std::sqrt(float(c.n_embd / c.n_head));
}

// As gemma2_query_scale: one size of the model, by its layer count.
void gemma3_refuse_27b(const HParams &keys, ModelConfig &c) {
    // llama.cpp scales Gemma 3's queries by 1/sqrt(head_dim) (query_pre_attn_scalar for every
    // size but 27B, whose scalar is n_embd / n_head instead).
    if (c.n_layer == 62)
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: Gemma 3 27B scales queries by n_embd / n_head, which is not supported",
             keys.path());
}

// Another model under this name, told apart by a key: a refusal, not a value.
void olmo2_refuse_window(const HParams &keys, ModelConfig &) {
    // llama.cpp's olmo2 (and HF's Olmo2): no pre-norms, the sublayers' outputs RMS-normed
    // before the residual add, q and k RMS-normed over their whole rows before RoPE (the row's
    // columns). OLMo 3 files (olmo2 with a sliding window) are not supported.
    if (keys.has("attention.sliding_window"))
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: olmo2 with attention.sliding_window (OLMo 3) is not supported", keys.path());
}

// Reads tensors, and keys whose defaults are other keys: no column's kind of value.
void phi3_longrope(const HParams &keys, ModelConfig &c) {
    // llama.cpp (src/models/phi3.cpp) turns Phi's sliding window off ("Phi SWA is currently
    // disabled", PR 13676): every layer attends over the whole context, whatever
    // attention.sliding_window says, and so does vkllm (the row reads no window). The converter
    // writes no rope.scaling.type: the angles are unscaled but for the LongRoPE factors.
    const format::GgufFile &f = keys.file();
    const format::TensorInfo *lf = f.find_tensor("rope_factors_long.weight");
    const format::TensorInfo *sf = f.find_tensor("rope_factors_short.weight");
    if (bool(lf) != bool(sf))
        fail(VKLLM_ERR_FORMAT, "%s: %s without %s", keys.path(),
             lf ? "rope_factors_long.weight" : "rope_factors_short.weight",
             lf ? "rope_factors_short.weight" : "rope_factors_long.weight");
    c.longrope = lf != nullptr;
    c.rope_orig_ctx = keys.opt("rope.scaling.original_context_length", c.n_ctx_train);
    // sqrt(1 + ln(context / original) / ln(original)) from the converter; llama.cpp
    // multiplies it into the attn_factor its RoPE scales cos and sin by (ext_factor is 0
    // without YaRN, so nothing else changes their magnitude).
    c.rope_attn_factor = keys.positive("rope.scaling.attn_factor", 1.0);
}

// Four optional multipliers whose absence or 0 means "not applied", one required key, and a
// boolean that turns RoPE off: values of the file, not of the architecture.
void granite_multipliers(const HParams &keys, ModelConfig &c) {
    // llama.cpp's granite: embeddings times embedding_scale, each block's output times
    // residual_scale, attention.scale as the attention's logit scale (each optional, 0 or
    // absent: not applied), the logits divided by logit_scale (required); RoPE unless
    // rope.scaling.finetuned is false.
    if (float s = keys.non_negative("embedding_scale"); s != 0) c.embd_scale = s;
    if (float s = keys.non_negative("residual_scale"); s != 0) c.residual_scale = s;
    if (float s = keys.non_negative("attention.scale"); s != 0) c.attn_scale = s;
    if (!keys.has("logit_scale"))
        fail(VKLLM_ERR_FORMAT, "%s: %slogit_scale is missing", keys.path(), keys.prefix().c_str());
    c.logit_scale = keys.positive("logit_scale", 1.0);
    if (!keys.flag("rope.scaling.finetuned").value_or(true)) c.no_rope_step = 1;
}

}  // namespace vkllm::models
