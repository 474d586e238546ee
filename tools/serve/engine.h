// The server's generation engine: one thread that owns the session and runs every request's
// sequences together, one vkllm_session_decode step for all of them (continuous batching).
// Requests join at step boundaries and leave when done; a request's prompt is prefilled in
// chunks between decode steps, so a long prompt does not stall the others' streams. Uses only
// the public C API (include/vkllm.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vkllm.h"

namespace serve {

// Sampling as OpenAI's fields set it (already validated by the HTTP layer).
struct Sampling {
    float temperature = 1.0f;  // <= 0: greedy
    float top_p = 1.0f;
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;
    bool has_seed = false;  // else a random seed per choice
    uint64_t seed = 0;      // choice i draws from seed + i
    std::vector<vkllm_logit_bias> logit_bias;
    // Shared by every choice's sampler (a grammar is read-only once compiled); null: none.
    std::shared_ptr<const vkllm_grammar> grammar;
};

struct GenerationRequest {
    std::vector<int32_t> prompt;  // at least one token
    uint32_t n_choices = 1;       // OpenAI's n: one prefill, forked n - 1 times
    uint32_t max_tokens = 0;      // 0: until an end token or the context's end
    std::vector<std::string> stop;
    Sampling sampling;
    int32_t top_logprobs = -1;     // -1: no logprobs; 0 to VKLLM_MAX_TOP_LOGPROBS
    bool prompt_logprobs = false;  // the completions endpoint's echo with logprobs
    bool ignore_eog = false;
};

struct TopLogprob {
    int32_t token;
    float logprob;
};

struct TokenLogprob {
    int32_t token;
    std::string bytes;  // the token's piece (may be part of a UTF-8 character)
    float logprob;
    std::vector<TopLogprob> top;  // most likely first
};

// What a choice did since the consumer's last call: text that became certain (never half a
// UTF-8 character; text that could begin a stop string is held back), the tokens it came from
// with their logprobs when asked, and whether the choice has ended.
struct ChoiceDelta {
    uint32_t index = 0;
    std::string text;
    std::vector<TokenLogprob> logprobs;
    bool finished = false;
    std::string finish_reason;  // "stop" (end token or stop string) or "length"
};

struct Usage {
    size_t prompt_tokens = 0;
    size_t cached_tokens = 0;  // of the prompt, those a slot's cache already held
    size_t completion_tokens = 0;
};

// The consumer's side of a submitted request (an HTTP handler thread).
class RequestHandle {
  public:
    virtual ~RequestHandle() = default;
    // Waits up to `wait` for news; appends the deltas that arrived to `out`. Returns false once
    // every choice has finished and everything was handed out (or on error()), true otherwise.
    virtual bool next(std::vector<ChoiceDelta> &out, std::chrono::milliseconds wait) = 0;
    // The client went away or gave up: the engine frees the request's slots within one step.
    virtual void cancel() = 0;
    // Set when the engine failed the request (a device error): the message for a 500.
    virtual std::string error() const = 0;
    virtual Usage usage() const = 0;
    // Echo with logprobs: the logprob of each prompt token after the first (the first has none),
    // filled before the first delta arrives.
    virtual std::vector<TokenLogprob> prompt_logprobs() const = 0;
};

// Fixed-bucket histogram, Prometheus' shape: counts[i] counts observations <= bounds[i]
// (cumulative counts are computed when printed).
struct Histogram {
    std::vector<double> bounds;
    std::vector<uint64_t> counts;  // bounds.size() + 1 entries, the last for +Inf
    double sum = 0;
    uint64_t count = 0;
};

struct EngineStats {
    uint64_t requests_started = 0;
    uint64_t requests_finished = 0;
    uint64_t requests_cancelled = 0;
    uint64_t prompt_tokens = 0;     // prompt tokens of the admitted requests
    uint64_t prefilled_tokens = 0;  // of them, those prefilled (the rest were in a cache)
    uint64_t generated_tokens = 0;
    uint32_t queue_length = 0;
    uint32_t slots_busy = 0;
    uint32_t slots_total = 0;
    Histogram time_to_first_token;  // seconds, from submit to the first token
    Histogram time_per_token;       // seconds between a choice's tokens
};

struct EngineOptions {
    uint32_t parallel = 4;     // slots: sequences decoded together
    uint32_t ctx = 0;          // per slot; 0: the model's, at most 4096
    uint32_t queue_limit = 0;  // requests waiting beyond the slots; 0: 4 x parallel
    uint32_t n_batch = 256;    // prefill chunk between decode steps
};

enum class SubmitResult { Accepted, QueueFull, TooLong, Invalid };

class Engine {
  public:
    virtual ~Engine() = default;
    // Starts the engine thread on a session it creates for `model` (which must outlive it).
    // Null with *error set when the session cannot be made.
    static std::unique_ptr<Engine> create(vkllm_model *model, const EngineOptions &options,
                                          std::string *error);
    // Queues a request. QueueFull: the queue is at its limit (429 with Retry-After); TooLong:
    // the prompt and max_tokens do not fit a slot's context, or n_choices exceeds the slots
    // (400); Invalid: a prompt id outside the vocabulary or bad sampling (400). *message says
    // which. The handle is set only for Accepted.
    virtual SubmitResult submit(GenerationRequest request, std::shared_ptr<RequestHandle> *handle,
                                std::string *message) = 0;
    virtual EngineStats stats() const = 0;
    virtual uint32_t context_size() const = 0;  // per slot
    // Cancels everything, finishes the thread. Called by the destructor too.
    virtual void shutdown() = 0;
};

}  // namespace serve
