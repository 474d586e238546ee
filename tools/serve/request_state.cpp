#include "request_state.h"

namespace serve {

void Wakeup::notify() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_ = true;
    }
    cv_.notify_one();
}

RequestState::RequestState(uint32_t n_choices, std::shared_ptr<Wakeup> wakeup)
    : unfinished_(n_choices), wakeup_(std::move(wakeup)) {}

// The engine sees the expired weak_ptr at its next step; the wakeup makes that step come now.
RequestState::~RequestState() {
    wakeup_->notify();
}

bool RequestState::next(std::vector<ChoiceDelta> &out, std::chrono::milliseconds wait) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto over = [&] {
        return unfinished_ == 0 || !error_.empty() || cancelled_->load(std::memory_order_relaxed);
    };
    cv_.wait_for(lock, wait, [&] { return !pending_.empty() || over(); });
    // The call that hands out the last deltas still returns true, so that both a loop that
    // reads `out` only while next() is true and one that reads it before testing see them.
    const bool handed_out = !pending_.empty();
    for (auto &d : pending_)
        out.push_back(std::move(d));
    pending_.clear();
    if (cancelled_->load(std::memory_order_relaxed)) return false;  // nothing more is coming
    return error_.empty() && (handed_out || unfinished_ > 0);
}

void RequestState::cancel() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        cancelled_->store(true, std::memory_order_relaxed);
    }
    cv_.notify_all();
    wakeup_->notify();
}

std::string RequestState::error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
}

Usage RequestState::usage() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return usage_;
}

std::vector<TokenLogprob> RequestState::prompt_logprobs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return prompt_logprobs_;
}

void RequestState::deliver(std::vector<ChoiceDelta> deltas, const Usage &usage) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto &d : deltas) {
            if (d.finished && unfinished_ > 0) --unfinished_;
            pending_.push_back(std::move(d));
        }
        usage_ = usage;
    }
    cv_.notify_all();
}

void RequestState::set_prompt_logprobs(std::vector<TokenLogprob> logprobs) {
    std::lock_guard<std::mutex> lock(mutex_);
    prompt_logprobs_ = std::move(logprobs);
}

void RequestState::fail(std::string message) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (error_.empty()) error_ = message.empty() ? "generation failed" : std::move(message);
    }
    cv_.notify_all();
}

}  // namespace serve
