// Embeddings: a model's final hidden states (after its last norm, before any output head), one
// row per token or pooled into one vector per input, as llama.cpp's pooling types define them.
// Encoders (bert) attend both ways over each whole input; decoders (Qwen3-Embedding's last-token
// pooling) attend causally as they generate.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/session.h"

namespace vkllm::engine {

// llama.cpp's enum llama_pooling_type, as GGUF's <arch>.pooling_type stores it.
enum class Pooling : int32_t {
    None = 0,  // every token's row
    Mean = 1,  // the mean of the rows, every token counted ([CLS] and [SEP] included)
    Cls = 2,   // the first row
    Last = 3,  // the last row
};

// The model's own pooling: <arch>.pooling_type, None where the file states none.
Pooling model_pooling(const Model &model);

struct EmbedRequest {
    Pooling pooling = Pooling::Mean;
    bool normalize = false;  // each output vector scaled to unit L2 norm (a zero vector stays)
};

// Floats embed() writes for inputs of these lengths: n_embd per input, or per token with
// Pooling::None.
uint64_t embed_size(const Model &model, const std::vector<std::vector<int32_t>> &inputs,
                    Pooling pooling);

// Runs each input (token ids, at least one, at most the session's context and the model's
// positions) through the model on the session's sequences, which it empties first and leaves
// empty, and writes embed_size() floats to `out`, input by input in order. Everything is checked
// before anything runs: VKLLM_ERR_INVALID_ARGUMENT for an empty input or an id outside the
// embedding, VKLLM_ERR_CONTEXT_FULL for an input longer than the session's context or the
// model's positions.
void embed(Session &session, const std::vector<std::vector<int32_t>> &inputs,
           const EmbedRequest &request, float *out);

}  // namespace vkllm::engine
