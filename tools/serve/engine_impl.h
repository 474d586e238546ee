// The engine's state, shared by its two files: engine.cpp (the thread, admission, prefill and
// the decode step) and engine_tokens.cpp (what becomes of each sampled token).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine.h"
#include "request_state.h"
#include "stop_strings.h"

namespace serve {
namespace engine_detail {

using Clock = std::chrono::steady_clock;

struct SamplerDeleter {
    void operator()(vkllm_sampler *s) const { vkllm_sampler_destroy(s); }
};
struct DetokenizerDeleter {
    void operator()(vkllm_detokenizer *d) const { vkllm_detokenizer_destroy(d); }
};

inline std::string describe(vkllm_status status) {
    std::string message = vkllm_last_error();
    return message.empty() ? std::string(vkllm_status_string(status)) : message;
}

struct Choice {
    uint32_t index = 0;
    uint32_t slot = 0;
    std::unique_ptr<vkllm_sampler, SamplerDeleter> sampler;
    std::unique_ptr<vkllm_detokenizer, DetokenizerDeleter> detokenizer;
    StopStrings stops;
    int32_t next_token = -1;  // sampled, not yet in the cache: the next decode step's input
    size_t n_generated = 0;
    bool finished = false;
    Clock::time_point last_token;

    explicit Choice(std::vector<std::string> stop) : stops(std::move(stop)) {}
};

struct Job {
    GenerationRequest request;
    std::weak_ptr<RequestState> state;
    std::shared_ptr<const std::atomic<bool>> cancel;
    Clock::time_point submitted;
    std::vector<Choice> choices;
    size_t prefilled = 0;  // prompt tokens in the first choice's slot
    size_t cached = 0;
    bool prefilling = true;
    bool first_token_seen = false;
    bool done = false;  // finished, failed or cancelled: its slots are free
    std::string error;  // why it failed, told to the consumer at the end of the step
    std::vector<TokenLogprob> prompt_logprobs;
    std::vector<ChoiceDelta> deltas;  // this step's news

    ChoiceDelta &delta(uint32_t index) {
        for (auto &d : deltas)
            if (d.index == index) return d;
        deltas.emplace_back();
        deltas.back().index = index;
        return deltas.back();
    }
    bool gone() const { return state.expired() || cancel->load(std::memory_order_relaxed); }
    Usage usage() const {
        Usage u;
        u.prompt_tokens = request.prompt.size();
        u.cached_tokens = cached;
        for (const auto &c : choices)
            u.completion_tokens += c.n_generated;
        return u;
    }
};

struct Slot {
    std::vector<int32_t> cache;  // the token ids in the slot's sequence, as the session has them
    Job *job = nullptr;
};

class EngineImpl final : public Engine {
  public:
    EngineImpl(vkllm_model *model, vkllm_session *session, const EngineOptions &options);
    ~EngineImpl() override;

    SubmitResult submit(GenerationRequest request, std::shared_ptr<RequestHandle> *handle,
                        std::string *message) override;
    EngineStats stats() const override;
    uint32_t context_size() const override { return n_ctx_; }
    void shutdown() override;

  private:
    void run();
    void start(Job &job);
    void drop_cancelled();
    void prefill_one();
    void finish_prefill(Job &job);
    void decode_step();
    void sample(Job &job, Choice &choice, const float *row);
    void finish(Job &job, Choice &choice, const char *reason, bool flush);
    void fail(Job &job, const std::string &message);
    void publish();
    uint32_t free_slots() const;

    vkllm_session *session_;
    const vkllm_tokenizer *tokenizer_;
    size_t n_vocab_ = 0;        // the tokenizer's ids
    size_t n_vocab_model_ = 0;  // entries of a logits row
    uint32_t n_ctx_ = 0;
    uint32_t n_batch_ = 0;
    uint32_t parallel_ = 0;
    uint32_t queue_limit_ = 0;

    std::shared_ptr<Wakeup> wakeup_ = std::make_shared<Wakeup>();
    // Under wakeup_->mutex().
    std::deque<std::unique_ptr<Job>> queue_;
    bool stopping_ = false;

    // The engine thread's own.
    std::vector<Slot> slots_;
    std::vector<std::unique_ptr<Job>> active_;  // admission order
    std::vector<float> logits_;

    mutable std::mutex stats_mutex_;
    EngineStats stats_;

    std::mutex shutdown_mutex_;
    std::thread thread_;
};

}  // namespace engine_detail
}  // namespace serve
