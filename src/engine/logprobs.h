// Log-probabilities of rows of logits as the device summarises them (gpu::ArgmaxKernels::
// logprobs): what eval's log-softmax output and generation's per-token logprobs are made of.
// The distribution is the model's own: the log-softmax of the raw logits over the tokenizer's
// ids, before temperature, penalties or filtering.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vkllm.h"

namespace vkllm::engine {

// The most likely ids a row reports at most.
constexpr uint32_t kMaxTopLogprobs = VKLLM_MAX_TOP_LOGPROBS;

struct TokenLogprob {
    int32_t token;
    float logprob;
};

struct RowLogprobs {
    float max = 0;                  // the largest logit among the tokenizer's ids
    float lse = 0;                  // log of the sum of exp of the logits of the tokenizer's ids
    std::vector<TokenLogprob> top;  // most likely first, lowest id first on ties
};

// Reads `rows` rows of the kernel's output words, each with `top` pairs; the padding pairs of a
// vocabulary smaller than `top` (id -1) are left out.
std::vector<RowLogprobs> read_logprob_rows(const void *words, uint32_t rows, uint32_t top);

// What a step computes besides the logits: each row's RowLogprobs with `top` (0 to
// kMaxTopLogprobs) most likely ids, into `rows`.
struct LogprobRequest {
    uint32_t top = 0;
    std::vector<RowLogprobs> *rows = nullptr;
};

// Generation's log-probabilities: the request each step makes, and each chosen token's report
// from the rows it returned.
class TokenLogprobs {
  public:
    // `top`: the alternatives reported per token; `on`: whether anyone listens.
    TokenLogprobs(uint32_t top, bool on)
        : top_(top), on_(on), request_{std::max(top, 1u), &rows_} {}

    // What a step computes: at least one id, the greedy choice being the most likely. Null
    // when nobody listens.
    const LogprobRequest *request() { return on_ ? &request_ : nullptr; }
    // Before sampling from logits on the host: the raw logits, which the sampler may change.
    void keep_raw(const float *logits, size_t n);
    // Token `token`'s log-probability from the last step's row `row`: among the row's most
    // likely ids, else from the raw logits kept for it.
    float logprob(int32_t token, size_t row) const;
    // The `top` most likely ids of row `row`.
    std::vector<TokenLogprob> top(size_t row) const;

  private:
    uint32_t top_;
    bool on_;
    std::vector<RowLogprobs> rows_;
    LogprobRequest request_;
    std::vector<float> raw_;
};

}  // namespace vkllm::engine
