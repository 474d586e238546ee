// A request's consumer side (RequestHandle) and what the engine hands it: the deltas waiting
// to be read, the error, the usage. The engine keeps only a weak_ptr: a consumer that drops its
// handle has cancelled.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine.h"

namespace serve {

// Wakes the engine thread (a new request, a cancel, a dropped handle, shutdown).
class Wakeup {
  public:
    void notify();
    // Waits until notified or `busy` says there is work; clears the notification.
    template <class Pred>
    void wait(std::unique_lock<std::mutex> &lock, Pred busy) {
        cv_.wait(lock, [&] { return pending_ || busy(); });
        pending_ = false;
    }
    std::mutex &mutex() { return mutex_; }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool pending_ = false;
};

class RequestState final : public RequestHandle {
  public:
    RequestState(uint32_t n_choices, std::shared_ptr<Wakeup> wakeup);
    ~RequestState() override;

    bool next(std::vector<ChoiceDelta> &out, std::chrono::milliseconds wait) override;
    void cancel() override;
    std::string error() const override;
    Usage usage() const override;
    std::vector<TokenLogprob> prompt_logprobs() const override;

    // The engine's side.
    // Shared with the engine, which reads it without taking ownership of the handle: the
    // engine must never be the one that destroys it while holding its own lock.
    std::shared_ptr<const std::atomic<bool>> cancel_flag() const { return cancelled_; }
    void deliver(std::vector<ChoiceDelta> deltas, const Usage &usage);
    void set_prompt_logprobs(std::vector<TokenLogprob> logprobs);
    void fail(std::string message);

  private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<ChoiceDelta> pending_;
    uint32_t unfinished_;
    std::string error_;
    Usage usage_;
    std::vector<TokenLogprob> prompt_logprobs_;
    std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<Wakeup> wakeup_;
};

}  // namespace serve
