// The engine thread: admits queued requests into free slots (reusing a slot's cached prefix or
// forking another slot's), prefills one chunk per step, then decodes one token for every
// decoding slot in a single vkllm_session_decode and samples each row with its choice's sampler.
#include "engine.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "histogram.h"
#include "logprobs.h"
#include "prefix_plan.h"
#include "request_state.h"
#include "stop_strings.h"

namespace serve {
namespace {

using Clock = std::chrono::steady_clock;

struct SamplerDeleter {
    void operator()(vkllm_sampler *s) const { vkllm_sampler_destroy(s); }
};
struct DetokenizerDeleter {
    void operator()(vkllm_detokenizer *d) const { vkllm_detokenizer_destroy(d); }
};

std::string describe(vkllm_status status) {
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

EngineImpl::EngineImpl(vkllm_model *model, vkllm_session *session, const EngineOptions &options)
    : session_(session), tokenizer_(vkllm_model_get_tokenizer(model)) {
    vkllm_tokenizer_info tinfo{};
    tinfo.struct_size = sizeof tinfo;
    vkllm_tokenizer_get_info(tokenizer_, &tinfo);
    vkllm_model_info minfo{};
    minfo.struct_size = sizeof minfo;
    vkllm_model_get_info(model, &minfo);
    vkllm_session_info sinfo{};
    sinfo.struct_size = sizeof sinfo;
    vkllm_session_get_info(session, &sinfo);
    n_vocab_ = tinfo.n_vocab;
    n_vocab_model_ = minfo.n_vocab;
    n_ctx_ = sinfo.n_ctx;
    n_batch_ = sinfo.n_batch;
    parallel_ = sinfo.n_seq;
    queue_limit_ = options.queue_limit ? options.queue_limit : 4 * parallel_;
    slots_.resize(parallel_);
    logits_.resize(size_t(parallel_) * n_vocab_model_);
    stats_.slots_total = parallel_;
    stats_.time_to_first_token = time_to_first_token_histogram();
    stats_.time_per_token = time_per_token_histogram();
    thread_ = std::thread([this] { run(); });
}

EngineImpl::~EngineImpl() {
    shutdown();
    vkllm_session_destroy(session_);
}

void EngineImpl::shutdown() {
    std::lock_guard<std::mutex> once(shutdown_mutex_);
    {
        std::lock_guard<std::mutex> lock(wakeup_->mutex());
        stopping_ = true;
    }
    wakeup_->notify();
    vkllm_session_cancel(session_);  // a long prefill chunk or step ends early
    if (thread_.joinable()) thread_.join();
}

SubmitResult EngineImpl::submit(GenerationRequest request, std::shared_ptr<RequestHandle> *handle,
                                std::string *message) {
    auto refuse = [&](SubmitResult result, std::string why) {
        if (message) *message = std::move(why);
        return result;
    };
    if (request.prompt.empty()) return refuse(SubmitResult::Invalid, "the prompt is empty");
    if (request.n_choices == 0) return refuse(SubmitResult::Invalid, "n must be at least 1");
    if (request.n_choices > parallel_)
        return refuse(SubmitResult::TooLong, "n (" + std::to_string(request.n_choices) +
                                                 ") exceeds the server's parallel slots (" +
                                                 std::to_string(parallel_) + ")");
    const size_t need = request.prompt.size() + std::max<size_t>(request.max_tokens, 1);
    if (need > n_ctx_)
        return refuse(SubmitResult::TooLong,
                      "the prompt (" + std::to_string(request.prompt.size()) +
                          " tokens) and max_tokens (" + std::to_string(request.max_tokens) +
                          ") exceed the context of " + std::to_string(n_ctx_) + " tokens");
    for (int32_t id : request.prompt)
        if (id < 0 || size_t(id) >= n_vocab_)
            return refuse(SubmitResult::Invalid, "token id " + std::to_string(id) +
                                                     " is outside the vocabulary (0 to " +
                                                     std::to_string(n_vocab_ - 1) + ")");
    if (request.top_logprobs < -1 || request.top_logprobs > VKLLM_MAX_TOP_LOGPROBS)
        return refuse(SubmitResult::Invalid, "top_logprobs must be between 0 and " +
                                                 std::to_string(VKLLM_MAX_TOP_LOGPROBS));

    auto job = std::make_unique<Job>();
    const Sampling &s = request.sampling;
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    // OpenAI's chain: temperature and top_p only (no top-k, no min-p). The penalties read the
    // library's default window (the last 64 tokens, prompt included), as llama-server's do.
    sp.temperature = s.temperature;
    sp.top_k = 0;
    sp.top_p = s.top_p;
    sp.min_p = 0;
    sp.presence_penalty = s.presence_penalty;
    sp.frequency_penalty = s.frequency_penalty;
    sp.logit_bias = s.logit_bias.empty() ? nullptr : s.logit_bias.data();
    sp.n_logit_bias = s.logit_bias.size();
    sp.grammar = s.grammar.get();
    for (uint32_t i = 0; i < request.n_choices; ++i) {
        Choice choice(request.stop);
        choice.index = i;
        sp.seed = s.has_seed ? s.seed + i : VKLLM_SEED_RANDOM;
        vkllm_sampler *sampler = nullptr;
        vkllm_status st = vkllm_sampler_create(tokenizer_, &sp, &sampler);
        if (st != VKLLM_OK) return refuse(SubmitResult::Invalid, describe(st));
        choice.sampler.reset(sampler);
        vkllm_detokenizer *detokenizer = nullptr;
        st = vkllm_detokenizer_create(tokenizer_, 0, &detokenizer);
        if (st != VKLLM_OK) return refuse(SubmitResult::Invalid, describe(st));
        choice.detokenizer.reset(detokenizer);
        job->choices.push_back(std::move(choice));
    }
    auto state = std::make_shared<RequestState>(request.n_choices, wakeup_);
    job->state = state;
    job->cancel = state->cancel_flag();
    job->request = std::move(request);
    job->submitted = Clock::now();
    {
        std::lock_guard<std::mutex> lock(wakeup_->mutex());
        if (stopping_) return refuse(SubmitResult::QueueFull, "the server is shutting down");
        if (queue_.size() >= queue_limit_)
            return refuse(SubmitResult::QueueFull,
                          "the queue is full (" + std::to_string(queue_limit_) + " requests)");
        queue_.push_back(std::move(job));
    }
    wakeup_->notify();
    if (handle) *handle = std::move(state);
    return SubmitResult::Accepted;
}

EngineStats EngineImpl::stats() const {
    size_t queued;
    {
        std::lock_guard<std::mutex> lock(wakeup_->mutex());
        queued = queue_.size();
    }
    std::lock_guard<std::mutex> lock(stats_mutex_);
    EngineStats s = stats_;
    s.queue_length = uint32_t(queued);
    return s;
}

uint32_t EngineImpl::free_slots() const {
    uint32_t n = 0;
    for (const auto &s : slots_)
        n += s.job == nullptr;
    return n;
}

void EngineImpl::run() {
    for (;;) {
        std::vector<std::unique_ptr<Job>> admitted;
        uint64_t cancelled_in_queue = 0;
        {
            std::unique_lock<std::mutex> lock(wakeup_->mutex());
            wakeup_->wait(lock, [&] { return stopping_ || !active_.empty() || !queue_.empty(); });
            if (stopping_) break;
            for (auto it = queue_.begin(); it != queue_.end();) {
                if ((*it)->gone()) {
                    it = queue_.erase(it);
                    ++cancelled_in_queue;
                } else {
                    ++it;
                }
            }
            uint32_t free = free_slots();
            while (!queue_.empty() && queue_.front()->choices.size() <= free) {
                free -= uint32_t(queue_.front()->choices.size());
                admitted.push_back(std::move(queue_.front()));
                queue_.pop_front();
            }
        }
        if (cancelled_in_queue) {
            std::lock_guard<std::mutex> lock(stats_mutex_);
            stats_.requests_cancelled += cancelled_in_queue;
        }
        for (auto &job : admitted) {
            active_.push_back(std::move(job));
            start(*active_.back());
        }
        drop_cancelled();
        prefill_one();
        decode_step();
        publish();
    }
    // Shutdown: nobody will be served any more. (A handle's last owner may be this thread, and
    // its destructor takes the wakeup lock: fail them outside it.)
    std::deque<std::unique_ptr<Job>> queued;
    {
        std::lock_guard<std::mutex> lock(wakeup_->mutex());
        queued.swap(queue_);
    }
    for (auto &job : queued)
        active_.push_back(std::move(job));
    for (auto &job : active_)
        if (auto state = job->state.lock()) state->fail("the server is shutting down");
    active_.clear();
}

void EngineImpl::start(Job &job) {
    const auto &prompt = job.request.prompt;
    std::vector<SlotView> views;
    for (const auto &s : slots_)
        views.push_back({&s.cache, s.job == nullptr});
    PrefixPlan plan = plan_prefix(views, prompt, !job.request.prompt_logprobs);
    Slot &slot = slots_[plan.slot];
    vkllm_status st = VKLLM_OK;
    if (plan.fork_from >= 0) {
        st = vkllm_session_fork(session_, uint32_t(plan.fork_from), plan.slot, uint32_t(plan.keep));
        if (st == VKLLM_OK) slot.cache.assign(prompt.begin(), prompt.begin() + plan.keep);
    } else if (slot.cache.size() > plan.keep) {
        st = vkllm_session_truncate(session_, plan.slot, uint32_t(plan.keep));
        if (st == VKLLM_OK) slot.cache.resize(plan.keep);
    }
    if (st != VKLLM_OK) {  // a ring that can no longer rewind: start the slot afresh
        plan.keep = 0;
        slot.cache.clear();
        st = vkllm_session_reset(session_, int32_t(plan.slot));
    }
    slot.job = &job;
    job.choices[0].slot = plan.slot;
    // The other choices' slots are forked when the prefill is done: take the free slots that
    // hold least, keeping the longer caches for later prompts.
    for (size_t i = 1; i < job.choices.size(); ++i) {
        uint32_t best = UINT32_MAX;
        for (uint32_t k = 0; k < slots_.size(); ++k)
            if (!slots_[k].job &&
                (best == UINT32_MAX || slots_[k].cache.size() < slots_[best].cache.size()))
                best = k;
        slots_[best].job = &job;
        job.choices[i].slot = best;
    }
    job.prefilled = job.cached = plan.keep;
    {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        ++stats_.requests_started;
        stats_.prompt_tokens += prompt.size();
    }
    if (st != VKLLM_OK) fail(job, describe(st));
}

void EngineImpl::drop_cancelled() {
    for (auto &job : active_) {
        if (job->done || !job->gone()) continue;
        // The slots keep their caches: a retry of the same prompt finds its prefix there.
        for (auto &c : job->choices)
            if (slots_[c.slot].job == job.get()) slots_[c.slot].job = nullptr;
        job->done = true;
        job->deltas.clear();
        std::lock_guard<std::mutex> lock(stats_mutex_);
        ++stats_.requests_cancelled;
    }
}

void EngineImpl::prefill_one() {
    auto it = std::find_if(active_.begin(), active_.end(),
                           [](const auto &j) { return !j->done && j->prefilling; });
    if (it == active_.end()) return;
    Job &job = **it;
    const auto &prompt = job.request.prompt;
    const uint32_t seq = job.choices[0].slot;
    // A row per position for prompt logprobs: smaller chunks keep that buffer near 16 MiB.
    const size_t chunk = job.request.prompt_logprobs
                             ? std::clamp<size_t>((size_t(4) << 20) / n_vocab_model_, 1, n_batch_)
                             : n_batch_;
    const size_t n = std::min(chunk, prompt.size() - job.prefilled);
    const bool last = job.prefilled + n == prompt.size();
    const int32_t *tokens = prompt.data() + job.prefilled;
    vkllm_status st;
    if (!job.request.prompt_logprobs) {
        st = vkllm_session_eval(session_, seq, tokens, n, last ? logits_.data() : nullptr);
    } else {
        vkllm_eval_params ep;
        vkllm_eval_params_init(&ep);
        ep.kind = VKLLM_LOGITS_LOG_SOFTMAX;
        std::vector<float> rows(n * n_vocab_model_);
        st = vkllm_session_eval_logits(session_, seq, tokens, n, &ep, rows.data());
        if (st == VKLLM_OK) {
            // Row r follows prompt token p = prefilled + r: it scores token p + 1.
            const int32_t n_top = std::max(job.request.top_logprobs, 0);
            for (size_t r = 0; r < n; ++r) {
                const size_t p = job.prefilled + r;
                if (p + 1 < prompt.size())
                    job.prompt_logprobs.push_back(token_logprob(
                        tokenizer_, &rows[r * n_vocab_model_], n_vocab_, prompt[p + 1], n_top));
            }
            // Sampling from log-probabilities picks as from the logits: they differ by a
            // constant per row, which softmax, top-p and penalties do not see.
            if (last)
                std::copy(rows.end() - std::ptrdiff_t(n_vocab_model_), rows.end(), logits_.begin());
        }
    }
    if (st != VKLLM_OK) {
        fail(job, describe(st));
        return;
    }
    slots_[seq].cache.insert(slots_[seq].cache.end(), tokens, tokens + n);
    job.prefilled += n;
    {
        std::lock_guard<std::mutex> lock(stats_mutex_);
        stats_.prefilled_tokens += n;
    }
    if (last) finish_prefill(job);
}

void EngineImpl::finish_prefill(Job &job) {
    const auto &prompt = job.request.prompt;
    if (job.request.prompt_logprobs)
        if (auto state = job.state.lock()) state->set_prompt_logprobs(job.prompt_logprobs);
    const uint32_t first = job.choices[0].slot;
    for (size_t i = 1; i < job.choices.size(); ++i) {
        const uint32_t seq = job.choices[i].slot;
        vkllm_status st = vkllm_session_fork(session_, first, seq, uint32_t(prompt.size()));
        if (st != VKLLM_OK) {
            fail(job, describe(st));
            return;
        }
        slots_[seq].cache = prompt;
    }
    job.prefilling = false;
    // Every choice draws its first token from the same logits, each with its own sampler.
    for (auto &c : job.choices) {
        vkllm_sampler_accept_prompt(c.sampler.get(), prompt.data(), prompt.size());
        sample(job, c, logits_.data());
        if (job.done) return;
    }
}

void EngineImpl::decode_step() {
    std::vector<uint32_t> seqs;
    std::vector<int32_t> tokens;
    std::vector<std::pair<Job *, Choice *>> rows;
    for (auto &job : active_) {
        if (job->done || job->prefilling) continue;
        for (auto &c : job->choices) {
            if (c.finished || c.next_token < 0) continue;
            seqs.push_back(c.slot);
            tokens.push_back(c.next_token);
            rows.emplace_back(job.get(), &c);
        }
    }
    if (rows.empty()) return;
    vkllm_status st =
        vkllm_session_decode(session_, seqs.data(), tokens.data(), rows.size(), logits_.data());
    if (st != VKLLM_OK) {
        // One step for all of them: which row broke it is unknown, so each of them fails.
        const std::string message = describe(st);
        for (auto &[job, choice] : rows)
            if (!job->done) fail(*job, message);
        return;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
        auto [job, choice] = rows[r];
        if (job->done) continue;  // failed on an earlier row: its slots were emptied
        slots_[choice->slot].cache.push_back(choice->next_token);
        choice->next_token = -1;
        sample(*job, *choice, &logits_[r * n_vocab_model_]);
    }
}

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

}  // namespace

std::unique_ptr<Engine> Engine::create(vkllm_model *model, const EngineOptions &options,
                                       std::string *error) {
    if (!model || options.parallel == 0) {
        if (error) *error = !model ? "no model" : "parallel must be at least 1";
        return nullptr;
    }
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_ctx = options.ctx;
    sp.n_seq = options.parallel;
    sp.n_batch = options.n_batch;
    vkllm_session *session = nullptr;
    vkllm_status st = vkllm_session_create(model, &sp, &session);
    if (st != VKLLM_OK) {
        if (error) *error = describe(st);
        return nullptr;
    }
    return std::make_unique<EngineImpl>(model, session, options);
}

}  // namespace serve
