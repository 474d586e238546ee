#include "engine/model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/fingerprint.h"

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
    fingerprint_ = model_fingerprint(file);
    metadata_ = file.metadata_copy();
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
    scaling.attn_factor *= config_.rope_attn_factor;
    // Per-pair frequency factors: Llama 3.1+'s rope_freqs, Phi-3's LongRoPE short ones.
    auto factors = [&](const char *name) {
        const format::TensorInfo *t = file.find_tensor(name);
        if (!t) return std::vector<float>();
        if (t->type->id != 0 || t->n_dims != 1 || t->dims[0] != config_.rot_dim / 2)
            fail(VKLLM_ERR_FORMAT, "%s: %s must be %u F32 values, one per pair", path.c_str(), name,
                 config_.rot_dim / 2);
        std::vector<float> v(config_.rot_dim / 2);
        std::memcpy(v.data(), file.tensor_data(*t), v.size() * 4);
        for (float x : v)
            if (!(x > 0) || !std::isfinite(x))
                fail(VKLLM_ERR_FORMAT, "%s: %s holds %g", path.c_str(), name, double(x));
        return v;
    };
    scaling.freq_factors =
        factors(config_.longrope ? "rope_factors_short.weight" : "rope_freqs.weight");
    auto upload = [&](const gpu::RopeScaling &s, double base) {
        std::vector<float> table = gpu::rope_table(max_positions_, config_.rot_dim, base, s);
        gpu::Buffer b =
            ctx.allocator().allocate(table.size() * sizeof(float), gpu::MemoryKind::Device, true);
        ctx.transfer().upload(b, table.data(), table.size() * sizeof(float));
        return b;
    };
    rope_table_ = upload(scaling, config_.rope_base);
    if (config_.longrope) {
        // Both LongRoPE tables, so that sessions of any context share the model: a session
        // picks one by its context (rope_table()). Each covers every position, since a
        // streaming session runs past its context with the table its context chose.
        scaling.freq_factors = factors("rope_factors_long.weight");
        rope_table_long_ = upload(scaling, config_.rope_base);
    }
    if (config_.rope_base_swa > 0) {  // the sliding-window layers' own base, unscaled
        rope_table_swa_ = upload({}, config_.rope_base_swa);
    }
    ++rope_table_builds_;
}

}  // namespace vkllm::engine
