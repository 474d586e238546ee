// What becomes of each sampled token: accepted, timed, detokenized, checked against the end
// tokens, stop strings, grammar and limits, and handed to the consumers at the end of the step.
#include <algorithm>

#include "engine_impl.h"
#include "histogram.h"
#include "logprobs.h"

namespace serve {
namespace engine_detail {

void EngineImpl::sample(Job &job, Choice &choice, const float *row) {
    int32_t token = -1;
    vkllm_status st = vkllm_sampler_sample(choice.sampler.get(), row, n_vocab_model_, &token);
    if (st == VKLLM_OK) st = vkllm_sampler_accept(choice.sampler.get(), token);
    if (st != VKLLM_OK) {
        fail(job, describe(st));
        return;
    }
    const auto now = Clock::now();
    {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        if (!job.first_token_seen)
            observe(stats_.time_to_first_token,
                    std::chrono::duration<double>(now - job.submitted).count());
        else if (choice.n_generated > 0)
            observe(stats_.time_per_token,
                    std::chrono::duration<double>(now - choice.last_token).count());
    }
    job.first_token_seen = true;
    choice.last_token = now;

    int32_t end = 0;
    if (!job.request.ignore_eog) vkllm_tokenizer_is_end_of_generation(tokenizer_, token, &end);
    if (end) {
        finish(job, choice, "stop", true);
        return;
    }
    ++choice.n_generated;
    {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        ++stats_.generated_tokens;
    }
    std::string text(64, '\0');
    size_t length = 0;
    st = vkllm_detokenizer_push(choice.detokenizer.get(), token, text.data(), text.size(), &length);
    if (st == VKLLM_ERR_BUFFER_TOO_SMALL) {
        text.resize(length + 1);
        st = vkllm_detokenizer_push(choice.detokenizer.get(), token, text.data(), text.size(),
                                    &length);
    }
    if (st != VKLLM_OK) {
        fail(job, describe(st));
        return;
    }
    text.resize(length);
    StopStrings::Result r = choice.stops.push(text);
    ChoiceDelta &delta = job.delta(choice.index);
    delta.text += r.text;
    if (r.stopped) {
        finish(job, choice, "stop", false);
        return;
    }
    if (job.request.top_logprobs >= 0)
        delta.logprobs.push_back(
            token_logprob(tokenizer_, row, n_vocab_, token, job.request.top_logprobs));

    vkllm_grammar_progress progress = VKLLM_GRAMMAR_COMPLETE;
    vkllm_sampler_get_grammar_progress(choice.sampler.get(), &progress);
    if (progress == VKLLM_GRAMMAR_FINISHED)
        finish(job, choice, "stop", true);
    else if (job.request.max_tokens && choice.n_generated >= job.request.max_tokens)
        finish(job, choice, "length", true);
    else if (slots_[choice.slot].cache.size() + 1 >= n_ctx_)  // the context is full with it
        finish(job, choice, "length", true);
    else
        choice.next_token = token;
}

void EngineImpl::finish(Job &job, Choice &choice, const char *reason, bool flush) {
    ChoiceDelta &delta = job.delta(choice.index);
    if (flush) {
        // What the detokenizer still holds (an incomplete character) and the tail held for a
        // stop string that never came.
        std::string rest(64, '\0');
        size_t length = 0;
        vkllm_status st =
            vkllm_detokenizer_flush(choice.detokenizer.get(), rest.data(), rest.size(), &length);
        if (st == VKLLM_ERR_BUFFER_TOO_SMALL) {
            rest.resize(length + 1);
            st = vkllm_detokenizer_flush(choice.detokenizer.get(), rest.data(), rest.size(),
                                         &length);
        }
        rest.resize(st == VKLLM_OK ? length : 0);
        StopStrings::Result r = choice.stops.push(rest);
        delta.text += r.text;
        if (!r.stopped) delta.text += choice.stops.flush();
    }
    delta.finished = true;
    delta.finish_reason = reason;
    choice.finished = true;
    choice.next_token = -1;
    if (slots_[choice.slot].job == &job) slots_[choice.slot].job = nullptr;
}

void EngineImpl::fail(Job &job, const std::string &message) {
    // The slots' caches are in an unknown state after a failed call: empty them.
    for (auto &c : job.choices) {
        if (slots_[c.slot].job != &job) continue;
        slots_[c.slot].job = nullptr;
        slots_[c.slot].cache.clear();
        vkllm_session_reset(session_, int32_t(c.slot));
    }
    job.done = true;
    job.deltas.clear();
    job.error = message.empty() ? "generation failed" : message;
    std::lock_guard<std::mutex> lock(stats_mutex_);
    ++stats_.requests_finished;
}

void EngineImpl::publish() {
    // The stats first: a consumer that has read its last delta finds its slots free there.
    std::vector<Job *> news, failed;
    uint64_t finished = 0;
    for (auto &job : active_) {
        if (!job->error.empty()) failed.push_back(job.get());
        if (job->done) continue;
        if (!job->deltas.empty()) news.push_back(job.get());
        if (std::all_of(job->choices.begin(), job->choices.end(),
                        [](const Choice &c) { return c.finished; })) {
            job->done = true;
            ++finished;
        }
    }
    {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        stats_.requests_finished += finished;
        stats_.slots_busy = parallel_ - free_slots();
    }
    for (Job *job : news) {
        if (auto state = job->state.lock()) state->deliver(std::move(job->deltas), job->usage());
        job->deltas.clear();
    }
    for (Job *job : failed)
        if (auto state = job->state.lock()) state->fail(job->error);
    active_.erase(
        std::remove_if(active_.begin(), active_.end(), [](const auto &j) { return j->done; }),
        active_.end());
}

}  // namespace engine_detail
}  // namespace serve
