// What `vkllm embed` and `vkllm similarity` share: their common options, read from the command
// line, and the runtime, model and session that embed texts with them through the public API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vkllm.h"

namespace vkllm_tool {

struct EmbedderOptions {
    const char *model = nullptr;
    vkllm_pooling pooling = VKLLM_POOLING_MODEL;
    bool normalize = false;
    bool truncate = false;
    uint32_t max_tokens = 0;
    uint32_t batch = 16;  // inputs per call (and the session's sequences)
    vkllm_runtime_params runtime;
    EmbedderOptions() { vkllm_runtime_params_init(&runtime); }
};

// Consumes argv[i] (and its value, advancing i) when it is one of the shared options: -m,
// --pooling, --normalize, --truncate, --max-tokens, -b, --device, --validate,
// --pipeline-cache. Throws ArgError for a missing or bad value.
bool embedder_option(int argc, char **argv, int &i, EmbedderOptions &o);

// The lines of `text`: each line one input (an empty line too); a final newline ends the last
// line rather than starting an empty one; "\r\n" counts as "\n".
std::vector<std::string> split_lines(const std::string &text);

class Embedder {
  public:
    Embedder() = default;
    Embedder(const Embedder &) = delete;
    Embedder &operator=(const Embedder &) = delete;
    ~Embedder();

    // Loads the model and a session fit for these texts (their longest tokenized length).
    vkllm_status open(const EmbedderOptions &o, const std::vector<std::string> &texts);
    // Each text's vectors, `batch` texts per call: one of n_embd floats, or with pooling none
    // one per token, all in one flat array per text.
    vkllm_status embed(const std::vector<std::string> &texts, std::vector<std::vector<float>> &out);
    uint32_t n_embd() const { return n_embd_; }
    // The pooling the calls use: the option, else the model's own.
    vkllm_pooling pooling() const { return pooling_; }

  private:
    std::vector<int32_t> tokenize(const std::string &text) const;

    EmbedderOptions o_;
    vkllm_runtime *rt_ = nullptr;
    vkllm_model *model_ = nullptr;
    vkllm_session *session_ = nullptr;
    uint32_t n_embd_ = 0, n_ctx_ = 0;
    vkllm_pooling pooling_ = VKLLM_POOLING_MEAN;
};

}  // namespace vkllm_tool
