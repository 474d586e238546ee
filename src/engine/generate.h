// The generation loop: prefill, then sample, stream and decode token by token until an end
// token (unless ignored), a stop string, the token limit or the caller says stop.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/logprobs.h"
#include "engine/sampler.h"
#include "engine/session.h"

namespace vkllm::engine {

enum class StopReason { EndOfGeneration = 0, MaxTokens = 1, StopString = 2, Cancelled = 3 };

constexpr uint32_t kDefaultStepsPerSubmit = 8;

struct GenerateOptions {
    uint32_t seq = 0;
    uint32_t max_tokens = 256;      // 0: prefill the prompt only, sample nothing
    std::vector<std::string> stop;  // generation ends before any of these texts
    SamplingOptions sampling;
    bool render_special = false;  // control tokens as text in the stream
    // End-of-generation tokens are streamed and decoded like any other instead of ending it.
    bool ignore_eog = false;
    // Greedy decoding without a repetition penalty chains up to this many decode steps in one
    // submission (Session::decode_greedy); tokens stream when it completes. A stop inside a
    // chain rewinds the cache to where step-by-step decoding would have left it. 0: on GPUs
    // kDefaultStepsPerSubmit, on CPU devices 1.
    uint32_t steps_per_submit = 0;
    // Receives each token and the text it completes (never half a UTF-8 character; held back
    // while it could be the start of a stop string). At the end, text still held comes with
    // token -1. Returning false cancels.
    std::function<bool(int32_t token, std::string_view text)> on_token;
    // Between prefill chunks, with the prompt tokens done; returning false cancels.
    std::function<bool(size_t done, size_t total)> on_prefill;
    // Just before on_token, each token's log-probability in the model's distribution (the
    // log-softmax of the raw logits over the tokenizer's ids, before temperature and
    // penalties) and the `top_logprobs` most likely ids at its position, computed on the
    // device; returning false cancels.
    std::function<bool(int32_t token, float logprob, const std::vector<TokenLogprob> &top)>
        on_logprobs;
    uint32_t top_logprobs = 0;  // 0 to kMaxTopLogprobs
};

struct GenerateResult {
    size_t n_prompt = 0;
    size_t n_generated = 0;
    StopReason reason = StopReason::MaxTokens;
    double prefill_ms = 0;
    double decode_ms = 0;
    uint64_t seed = 0;  // the sampler's, a random one for kSeedRandom
    // Whether the text on_token received is a finished string of the grammar (Complete
    // without one): Incomplete when a cap, a stop string or a cancel cut it short.
    grammar::Progress grammar_progress = grammar::Progress::Complete;
};

// Throws VKLLM_ERR_CANCELLED (with `result` filled in) when a callback or Session::cancel stops
// it; the session stays consistent: what was prefilled or decoded stays in the cache.
void generate(Session &session, const std::vector<int32_t> &prompt, const GenerateOptions &options,
              GenerateResult &result);

}  // namespace vkllm::engine
