#include "engine/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace vkllm::engine {

// Positions beyond this are refused even if the model claims more: the table grows with it
// (a million positions of 64 pairs is 512 MiB).
static const uint32_t kMaxRopePositions = 1u << 17;

Model::Model(gpu::Context &ctx, const std::string &path, const models::LoadProgress &progress)
    : ctx_(ctx) {
    format::GgufFile file(path);
    file_bytes_ = file.file_size();
    for (const auto &t : file.tensors())
        tensor_bytes_ += t.n_bytes;
    config_ = models::read_config(file);
    // The tokenizer first: a model that cannot be tokenized is refused before any upload.
    tokenizer_ = std::make_shared<tokenizer::Tokenizer>(tokenizer::load_vocab(file));
    if (!tokenizer_->warning().empty())
        ctx.device().log()(VKLLM_LOG_WARNING, path + ": " + tokenizer_->warning());
    // More tokens than rows cannot be served: the tokenizer would produce ids the model has no
    // embedding for. More rows than tokens can: the extra ids are padding that generation never
    // chooses (n_tokens()).
    if (n_tokens() > config_.n_vocab)
        fail(VKLLM_ERR_FORMAT,
             "%s: the tokenizer has %u tokens but the embedding only %u rows; every token needs "
             "one",
             path.c_str(), n_tokens(), config_.n_vocab);
    // Refused before any upload when the runtime's memory budget cannot hold the weights.
    ctx.allocator().require_budget(tensor_bytes_, "the model's weights");
    weights_ = models::load_weights(ctx, file, config_, progress, weight_arenas_);
    if (config_.learned_positions) {  // positions are the rows of the table the file has
        max_positions_ = config_.n_ctx_train;
        return;
    }
    // The whole table is one binding, so it must also fit the device's binding limit.
    uint64_t per_position = uint64_t(config_.rot_dim) * sizeof(float);
    uint64_t fit =
        ctx.device().info().max_storage_buffer_range / std::max<uint64_t>(per_position, 1);
    max_positions_ = uint32_t(std::min<uint64_t>({config_.n_ctx_train, kMaxRopePositions, fit}));
    gpu::RopeScaling scaling;
    if (config_.rope_linear_factor > 0) {
        // Linear scaling: every angle divided by the factor (YaRN's form with no extrapolated
        // share and no change of magnitude).
        scaling.factor = config_.rope_linear_factor;
        scaling.orig_ctx = config_.n_ctx_train;
        scaling.ext_factor = 0;
        scaling.attn_factor = 1;
    } else {
        scaling.factor = config_.yarn_factor;
        scaling.orig_ctx = config_.yarn_orig_ctx;
        scaling.ext_factor = config_.yarn_ext_factor;
        scaling.attn_factor = config_.yarn_attn_factor;
        scaling.beta_fast = config_.yarn_beta_fast;
        scaling.beta_slow = config_.yarn_beta_slow;
    }
    // Llama 3.1+ files carry per-pair frequency factors for their long-context scaling.
    if (const format::TensorInfo *t = file.find_tensor("rope_freqs.weight")) {
        if (t->type->id != 0 || t->n_dims != 1 || t->dims[0] != config_.rot_dim / 2)
            fail(VKLLM_ERR_FORMAT, "%s: rope_freqs.weight must be %u F32 values, one per pair",
                 path.c_str(), config_.rot_dim / 2);
        scaling.freq_factors.resize(config_.rot_dim / 2);
        std::memcpy(scaling.freq_factors.data(), file.tensor_data(*t),
                    scaling.freq_factors.size() * 4);
        for (float v : scaling.freq_factors)
            if (!(v > 0) || !std::isfinite(v))
                fail(VKLLM_ERR_FORMAT, "%s: rope_freqs.weight holds %g", path.c_str(), double(v));
    }
    std::vector<float> table =
        gpu::rope_table(max_positions_, config_.rot_dim, config_.rope_base, scaling);
    rope_table_ =
        ctx.allocator().allocate(table.size() * sizeof(float), gpu::MemoryKind::Device, true);
    ctx.transfer().upload(rope_table_, table.data(), table.size() * sizeof(float));
    if (config_.rope_base_swa > 0) {  // the sliding-window layers' own base, unscaled
        table = gpu::rope_table(max_positions_, config_.rot_dim, config_.rope_base_swa, {});
        rope_table_swa_ =
            ctx.allocator().allocate(table.size() * sizeof(float), gpu::MemoryKind::Device, true);
        ctx.transfer().upload(rope_table_swa_, table.data(), table.size() * sizeof(float));
    }
    ++rope_table_builds_;
}

}  // namespace vkllm::engine
