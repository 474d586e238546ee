// A loaded model: configuration, weights on the device, tokenizer and the RoPE table. Immutable
// after load, so any number of sessions (on any threads) can share it.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "gpu/context.h"
#include "models/config.h"
#include "models/weights.h"
#include "tokenizer/tokenizer.h"

namespace vkllm::engine {

class Model {
  public:
    Model(gpu::Context &ctx, const std::string &path, const models::LoadProgress &progress);

    gpu::Context &context() const { return ctx_; }
    const models::ModelConfig &config() const { return config_; }
    const models::ModelWeights &weights() const { return weights_; }
    const std::shared_ptr<const tokenizer::Tokenizer> &tokenizer() const { return tokenizer_; }
    const std::string &chat_template() const { return tokenizer_->vocab().chat_template; }
    // Ids the tokenizer knows, the only ones generation may choose. The embedding may have more
    // rows (config().n_vocab, the logits of a step): padding, as in Qwen's files, whose logits
    // are computed but never chosen, since the tokenizer has no text for them.
    uint32_t n_tokens() const { return uint32_t(tokenizer_->vocab().size()); }

    // cos/sin for positions [0, max_positions()), computed once at load (none for learned
    // positions). Layer `layer`'s, for a session of `n_ctx` positions per sequence: Gemma 3's
    // sliding-window layers have a base of their own; Phi-3's LongRoPE takes its long factors
    // where n_ctx exceeds the original context (llama.cpp's choice by n_ctx_seq), else its
    // short ones.
    gpu::BufferRange rope_table(uint32_t layer, uint32_t n_ctx) const {
        if (config_.rope_base_swa > 0 && config_.swa_layer(layer)) return rope_table_swa_.range();
        if (config_.longrope && n_ctx > config_.rope_orig_ctx) return rope_table_long_.range();
        return rope_table_.range();
    }
    // Positions the model can encode: its RoPE table's, or its learned position table's rows.
    uint32_t max_positions() const { return max_positions_; }
    // How many times the tables were computed (stays 1: sessions never recompute them).
    uint64_t rope_table_builds() const { return rope_table_builds_; }
    uint64_t file_bytes() const { return file_bytes_; }
    uint64_t tensor_bytes() const { return tensor_bytes_; }  // tensor data in the file
    // engine::model_fingerprint of the file: saved session states carry it.
    uint64_t fingerprint() const { return fingerprint_; }
    // The file's key-values, copied at load (GgufFile::metadata_copy).
    const std::shared_ptr<const format::GgufFile> &metadata() const { return metadata_; }

  private:
    gpu::Context &ctx_;
    models::ModelConfig config_;
    models::ModelWeights weights_;
    std::vector<gpu::Buffer> weight_arenas_;  // the device memory holding weights_' ranges
    std::shared_ptr<const tokenizer::Tokenizer> tokenizer_;
    gpu::Buffer rope_table_, rope_table_swa_, rope_table_long_;
    uint32_t max_positions_ = 0;
    uint64_t rope_table_builds_ = 0;
    uint64_t file_bytes_ = 0;
    uint64_t tensor_bytes_ = 0;
    uint64_t fingerprint_ = 0;
    std::shared_ptr<const format::GgufFile> metadata_;
};

}  // namespace vkllm::engine
