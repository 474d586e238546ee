// The special cases of architectures.def's rows: what a row's column values cannot say, each a
// function read_config runs last, after the row's columns and the query scale 1 / sqrt(head_dim)
// are in the configuration. Each says why it is not a column.
#pragma once

#include "models/config.h"
#include "models/hparams.h"

namespace vkllm::models {

// Gemma 2 27B scales queries by n_embd / n_head, the other sizes by head_dim.
void gemma2_query_scale(const HParams &keys, ModelConfig &c);
// Gemma 3 27B, whose query scale neither is, is refused.
void gemma3_refuse_27b(const HParams &keys, ModelConfig &c);
// OLMo 3 files (olmo2 with a sliding window) are refused.
void olmo2_refuse_window(const HParams &keys, ModelConfig &c);
// Phi-3's LongRoPE: factor tensors, their original context and the attention factor.
void phi3_longrope(const HParams &keys, ModelConfig &c);
// Granite's embedding, residual, attention and logit multipliers, and its RoPE switch.
void granite_multipliers(const HParams &keys, ModelConfig &c);

}  // namespace vkllm::models
