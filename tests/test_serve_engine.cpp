// The server's engine (tools/serve/engine.h) through the public API: requests decoded together
// give what each gives alone (vkllm_session_generate on a fresh session), choices fork from one
// prefill, stop strings, max_tokens, cancel, the queue's bound, prefix reuse, logprobs against a
// host log-softmax of vkllm_session_eval's logits, prompt logprobs against
// vkllm_session_eval_logits and a JSON-schema grammar. tiny-qwen2 (tests/data/models) for the
// scheduling, SmolLM2 (scripts/fetch-models) for the real-model checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if __has_include(<nlohmann/json.hpp>)
#include <nlohmann/json.hpp>
#define HAVE_NLOHMANN_JSON 1
#endif

#include "engine.h"
#include "model_cache.h"
#include "validation.h"
#include "vkllm.h"

namespace {

using namespace std::chrono_literals;
using serve::ChoiceDelta;
using serve::Engine;
using serve::EngineOptions;
using serve::GenerationRequest;
using serve::RequestHandle;
using serve::SubmitResult;

// Random weights, a byte-level BPE vocabulary of 320 ids: varied tokens, and text that is often
// not valid UTF-8 (the detokenizer's held bytes come out at the end).
const std::string kTiny = std::string(VKLLM_TEST_DATA_DIR) + "/models/tiny-qwen2-f32.gguf";
constexpr const char *kSmolLM2 = "SmolLM2-135M-Instruct.Q4_1.gguf";

struct Log {
    std::vector<std::string> errors;
    static void fn(void *user, vkllm_log_level level, const char *msg) {
        if (level == VKLLM_LOG_ERROR) static_cast<Log *>(user)->errors.push_back(msg);
    }
};

// What a request produced, read through its handle as the HTTP layer reads it.
struct Outcome {
    std::vector<std::string> text;
    std::vector<std::string> reason;
    std::vector<std::vector<int32_t>> tokens;  // from the logprobs, when asked
    std::vector<std::vector<serve::TokenLogprob>> logprobs;
    std::vector<serve::TokenLogprob> prompt_logprobs;  // as read at the first delta
    serve::Usage usage;
    std::string error;
};

Outcome collect(const std::shared_ptr<RequestHandle> &handle, uint32_t n_choices) {
    Outcome o;
    o.text.resize(n_choices);
    o.reason.resize(n_choices);
    o.tokens.resize(n_choices);
    o.logprobs.resize(n_choices);
    bool first = true;
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    for (;;) {
        std::vector<ChoiceDelta> out;
        const bool more = handle->next(out, 200ms);
        if (first && !out.empty()) {
            o.prompt_logprobs = handle->prompt_logprobs();
            first = false;
        }
        for (auto &d : out) {
            EXPECT_LT(d.index, n_choices);
            EXPECT_TRUE(o.reason[d.index].empty()) << "a delta after the choice finished";
            o.text[d.index] += d.text;
            for (auto &lp : d.logprobs) {
                o.tokens[d.index].push_back(lp.token);
                o.logprobs[d.index].push_back(lp);
            }
            if (d.finished) o.reason[d.index] = d.finish_reason;
        }
        if (!more) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "the request did not finish";
            break;
        }
    }
    o.usage = handle->usage();
    o.error = handle->error();
    return o;
}

// Waits (bounded) until the engine's stats satisfy `done`.
template <class Pred>
bool wait_for_stats(const Engine &engine, Pred done) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
        if (done(engine.stats())) return true;
        std::this_thread::sleep_for(5ms);
    }
    return false;
}

std::vector<double> log_softmax(const float *row, size_t n) {
    double max = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i)
        max = std::max(max, double(row[i]));
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        sum += std::exp(double(row[i]) - max);
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i)
        out[i] = double(row[i]) - max - std::log(sum);
    return out;
}

std::vector<int32_t> top_ids(const std::vector<double> &lp, size_t k) {
    std::vector<int32_t> ids(lp.size());
    for (size_t i = 0; i < ids.size(); ++i)
        ids[i] = int32_t(i);
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return lp[a] > lp[b]; });
    ids.resize(std::min(k, ids.size()));
    return ids;
}

class ServeEngine : public ::testing::Test {
  protected:
    void SetUp() override {
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
        p.log_fn = &Log::fn;
        p.log_user_data = &log_;
        ASSERT_EQ(vkllm_runtime_create(&p, &rt_), VKLLM_OK) << vkllm_last_error();
    }
    void TearDown() override {
        for (auto *m : models_)
            vkllm_model_destroy(m);
        vkllm_runtime_stats s;
        s.struct_size = sizeof s;
        ASSERT_EQ(vkllm_runtime_get_stats(rt_, &s), VKLLM_OK);
        EXPECT_EQ(s.validation_errors, 0u) << (log_.errors.empty() ? "" : log_.errors[0]);
        vkllm_runtime_destroy(rt_);
    }

    vkllm_model *load(const std::string &path) {
        vkllm_model *m = nullptr;
        EXPECT_EQ(vkllm_model_load(rt_, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
        if (m) models_.push_back(m);
        return m;
    }

    static std::vector<int32_t> encode(vkllm_model *model, const std::string &text,
                                       uint32_t flags = VKLLM_TOKENIZE_ADD_SPECIAL) {
        const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(model);
        size_t n = 0;
        vkllm_tokenizer_encode(tok, text.data(), text.size(), flags, nullptr, 0, &n);
        std::vector<int32_t> ids(n);
        EXPECT_EQ(vkllm_tokenizer_encode(tok, text.data(), text.size(), flags, ids.data(),
                                         ids.size(), &n),
                  VKLLM_OK);
        return ids;
    }

    static std::unique_ptr<Engine> engine(vkllm_model *model, uint32_t parallel, uint32_t ctx,
                                          uint32_t n_batch, uint32_t queue_limit = 0) {
        EngineOptions o;
        o.parallel = parallel;
        o.ctx = ctx;
        o.n_batch = n_batch;
        o.queue_limit = queue_limit;
        std::string error;
        auto e = Engine::create(model, o, &error);
        EXPECT_TRUE(e) << error;
        return e;
    }

    static std::shared_ptr<RequestHandle> submit(Engine &engine, GenerationRequest request) {
        std::shared_ptr<RequestHandle> handle;
        std::string message;
        EXPECT_EQ(engine.submit(std::move(request), &handle, &message), SubmitResult::Accepted)
            << message;
        return handle;
    }

    static GenerationRequest greedy(std::vector<int32_t> prompt, uint32_t max_tokens) {
        GenerationRequest r;
        r.prompt = std::move(prompt);
        r.max_tokens = max_tokens;
        r.sampling.temperature = 0;
        r.top_logprobs = 0;  // the tokens come with their logprobs
        return r;
    }

    // vkllm_session_generate, greedy, on a fresh session: the tokens and the text.
    struct Generated {
        std::vector<int32_t> tokens;
        std::string text;
        vkllm_stop_reason stop;
    };
    static Generated generate_alone(vkllm_model *model, const std::vector<int32_t> &prompt,
                                    uint32_t max_tokens, uint32_t n_batch) {
        vkllm_session_params sp;
        vkllm_session_params_init(&sp);
        sp.n_batch = n_batch;
        sp.n_ctx = 256;
        vkllm_session *session = nullptr;
        EXPECT_EQ(vkllm_session_create(model, &sp, &session), VKLLM_OK) << vkllm_last_error();
        vkllm_sampling_params sampling;
        vkllm_sampling_params_init(&sampling);
        sampling.temperature = 0;
        Generated g;
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = max_tokens;
        gp.user_data = &g;
        gp.on_token = [](void *user, int32_t token, const char *text, size_t length) -> int32_t {
            auto *out = static_cast<Generated *>(user);
            if (token >= 0) out->tokens.push_back(token);
            out->text.append(text, length);
            return 0;
        };
        vkllm_generate_result result;
        result.struct_size = sizeof result;
        EXPECT_EQ(
            vkllm_session_generate(session, prompt.data(), prompt.size(), &sampling, &gp, &result),
            VKLLM_OK)
            << vkllm_last_error();
        g.stop = result.stop_reason;
        vkllm_session_destroy(session);
        return g;
    }

    Log log_;
    vkllm_runtime *rt_ = nullptr;
    std::vector<vkllm_model *> models_;
};

const char *const kStoryPrompts[] = {
    "Once upon a time, there was a little girl named Lily.",
    "The dog",
    "Tom and his mom went to the park. They saw a big tree and a small bird that could not fly. "
    "Tom wanted to help the bird, so he",
    "One day",
    "The sun was shining and the children were playing outside.",
};

TEST_F(ServeEngine, GreedyRequestsDecodedTogetherGiveWhatEachGivesAlone) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    const uint32_t n_batch = 16;  // the longer prompts take several chunks between steps
    const uint32_t max_tokens[] = {24, 9, 31, 17, 12};
    auto e = engine(model, 4, 256, n_batch);  // five requests, four slots: one waits its turn
    ASSERT_TRUE(e);
    std::vector<std::shared_ptr<RequestHandle>> handles;
    for (size_t i = 0; i < 5; ++i)
        handles.push_back(submit(*e, greedy(encode(model, kStoryPrompts[i]), max_tokens[i])));
    std::vector<Outcome> together;
    for (auto &h : handles)
        together.push_back(collect(h, 1));

    for (size_t i = 0; i < 5; ++i) {
        SCOPED_TRACE(kStoryPrompts[i]);
        const auto prompt = encode(model, kStoryPrompts[i]);
        Generated ref = generate_alone(model, prompt, max_tokens[i], n_batch);
        EXPECT_EQ(together[i].error, "");
        EXPECT_EQ(together[i].tokens[0], ref.tokens);
        EXPECT_EQ(together[i].text[0], ref.text);
        EXPECT_EQ(together[i].reason[0],
                  ref.stop == VKLLM_STOP_MAX_TOKENS ? std::string("length") : "stop");
        EXPECT_EQ(together[i].usage.prompt_tokens, prompt.size());
        EXPECT_EQ(together[i].usage.completion_tokens, ref.tokens.size());
        // The same request alone through the engine (its slots' caches now warm).
        Outcome alone = collect(submit(*e, greedy(prompt, max_tokens[i])), 1);
        EXPECT_EQ(alone.tokens[0], ref.tokens);
        EXPECT_EQ(alone.text[0], ref.text);
    }
    const auto stats = e->stats();
    EXPECT_EQ(stats.requests_started, 10u);
    EXPECT_EQ(stats.requests_finished, 10u);
    EXPECT_EQ(stats.slots_busy, 0u);
    EXPECT_EQ(stats.slots_total, 4u);
    EXPECT_EQ(stats.time_to_first_token.count, 10u);
    EXPECT_GT(stats.time_per_token.count, 0u);
}

TEST_F(ServeEngine, ConsumersOnTheirOwnThreadsGetTheirOwnOutputsWhileOthersCancel) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    const uint32_t n_batch = 16;
    auto e = engine(model, 4, 256, n_batch);
    ASSERT_TRUE(e);
    const uint32_t max_tokens[] = {5, 11, 3, 8, 14};
    std::vector<Generated> refs;
    for (size_t i = 0; i < 5; ++i)
        refs.push_back(
            generate_alone(model, encode(model, kStoryPrompts[i]), max_tokens[i], n_batch));
    constexpr int kThreads = 8, kEach = 3;
    std::vector<std::string> problems(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int k = 0; k < kEach; ++k) {
                const size_t which = size_t(t * kEach + k) % 5;
                GenerationRequest r =
                    greedy(encode(model, kStoryPrompts[which]), max_tokens[which]);
                std::shared_ptr<RequestHandle> h;
                std::string message;
                if (e->submit(r, &h, &message) != SubmitResult::Accepted) {
                    problems[size_t(t)] += "refused: " + message + "; ";
                    continue;
                }
                if ((t + k) % 3 == 0) {  // gives up after its first news
                    std::vector<ChoiceDelta> out;
                    for (int i = 0; i < 600 && out.empty() && h->next(out, 100ms); ++i) {
                    }
                    h->cancel();
                    continue;
                }
                std::vector<int32_t> tokens;
                std::vector<ChoiceDelta> out;
                for (int i = 0; i < 600; ++i) {
                    out.clear();
                    const bool more = h->next(out, 100ms);
                    for (auto &d : out)
                        for (auto &lp : d.logprobs)
                            tokens.push_back(lp.token);
                    if (!more) break;
                }
                if (tokens != refs[which].tokens)
                    problems[size_t(t)] += "request " + std::to_string(k) + " differs; ";
            }
        });
    }
    for (auto &th : threads)
        th.join();
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(problems[size_t(t)], "") << "thread " << t;
    EXPECT_TRUE(wait_for_stats(*e, [&](const serve::EngineStats &s) {
        return s.slots_busy == 0 && s.queue_length == 0 &&
               s.requests_finished + s.requests_cancelled == uint64_t(kThreads * kEach);
    }));
}

TEST_F(ServeEngine, ChoicesForkFromOnePrefillDifferAndRepeatWithTheirSeed) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    auto e = engine(model, 4, 256, 32);
    ASSERT_TRUE(e);
    GenerationRequest r;
    r.prompt = encode(model, kStoryPrompts[0]);
    r.n_choices = 3;
    r.max_tokens = 16;
    r.ignore_eog = true;
    r.sampling.temperature = 1.0f;
    r.sampling.has_seed = true;
    r.sampling.seed = 1234;
    Outcome first = collect(submit(*e, r), 3);
    Outcome again = collect(submit(*e, r), 3);
    for (uint32_t i = 0; i < 3; ++i) {
        EXPECT_EQ(first.reason[i], "length");
        EXPECT_EQ(first.text[i], again.text[i]) << "choice " << i;
    }
    EXPECT_NE(first.text[0], first.text[1]);
    EXPECT_NE(first.text[0], first.text[2]);
    EXPECT_NE(first.text[1], first.text[2]);
    EXPECT_EQ(first.usage.completion_tokens, 3u * 16u);
    // Choice i draws from seed + i: a single choice with that seed gives the same text.
    GenerationRequest single = r;
    single.n_choices = 1;
    single.sampling.seed = 1234 + 2;
    Outcome third = collect(submit(*e, single), 1);
    EXPECT_EQ(third.text[0], first.text[2]);
}

TEST_F(ServeEngine, SmolLM2StopStringEndsTheTextBeforeIt) {
    const std::string path = cached_model(kSmolLM2);
    if (path.empty()) GTEST_SKIP() << kSmolLM2 << " not cached (scripts/fetch-models)";
    vkllm_model *model = load(path);
    ASSERT_TRUE(model);
    auto e = engine(model, 2, 256, 64);
    ASSERT_TRUE(e);
    const auto prompt = encode(model, "Once upon a time, in a small village by the sea,");
    GenerationRequest r = greedy(prompt, 28);
    r.ignore_eog = true;
    Outcome full = collect(submit(*e, r), 1);
    ASSERT_GT(full.text[0].size(), 30u) << full.text[0];
    // A stop string from the middle of the text, spanning tokens: the text ends where it
    // first occurs, and none of it is handed out.
    const std::string stop = full.text[0].substr(full.text[0].size() / 2, 5);
    const std::string want = full.text[0].substr(0, full.text[0].find(stop));
    r.stop = {"never appears \x01", stop};
    Outcome stopped = collect(submit(*e, r), 1);
    EXPECT_EQ(stopped.text[0], want);
    EXPECT_EQ(stopped.reason[0], "stop");
    EXPECT_LT(stopped.usage.completion_tokens, full.usage.completion_tokens);
}

TEST_F(ServeEngine, MaxTokensEndsTheChoiceWithLength) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    auto e = engine(model, 2, 48, 32);
    ASSERT_TRUE(e);
    GenerationRequest r = greedy(encode(model, "The dog"), 5);
    r.ignore_eog = true;
    Outcome o = collect(submit(*e, r), 1);
    EXPECT_EQ(o.reason[0], "length");
    EXPECT_EQ(o.usage.completion_tokens, 5u);
    EXPECT_EQ(o.tokens[0].size(), 5u);
    // max_tokens 0: until the context is full.
    r.max_tokens = 0;
    o = collect(submit(*e, r), 1);
    EXPECT_EQ(o.reason[0], "length");
    EXPECT_EQ(o.usage.prompt_tokens + o.usage.completion_tokens, e->context_size());
}

TEST_F(ServeEngine, CancelAndADroppedHandleFreeTheirSlots) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    auto e = engine(model, 2, 256, 32);
    ASSERT_TRUE(e);
    GenerationRequest endless = greedy(encode(model, kStoryPrompts[1]), 0);
    endless.ignore_eog = true;
    auto a = submit(*e, endless);
    std::vector<ChoiceDelta> out;
    while (out.empty())
        ASSERT_TRUE(a->next(out, 1s));
    EXPECT_TRUE(wait_for_stats(*e, [](const serve::EngineStats &s) { return s.slots_busy == 1; }));
    a->cancel();
    out.clear();
    EXPECT_FALSE(a->next(out, 1s)) << "a cancelled request has nothing more to say";
    EXPECT_TRUE(wait_for_stats(*e, [](const serve::EngineStats &s) {
        return s.slots_busy == 0 && s.requests_cancelled == 1;
    }));
    // A consumer that goes away without a word cancels too.
    {
        auto b = submit(*e, endless);
        out.clear();
        while (out.empty())
            ASSERT_TRUE(b->next(out, 1s));
    }
    EXPECT_TRUE(wait_for_stats(*e, [](const serve::EngineStats &s) {
        return s.slots_busy == 0 && s.requests_cancelled == 2;
    }));
    // The next request is served, and both slots are there for it.
    GenerationRequest two = greedy(encode(model, kStoryPrompts[3]), 6);
    two.n_choices = 2;
    two.ignore_eog = true;
    Outcome o = collect(submit(*e, two), 2);
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.reason[0], "length");
    EXPECT_EQ(o.reason[1], "length");
    EXPECT_EQ(o.text[0], o.text[1]) << "greedy choices agree";
    EXPECT_EQ(e->stats().slots_busy, 0u);
}

TEST_F(ServeEngine, ACancelDuringAPrefillStopsItBetweenChunksAndKeepsWhatWasDone) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    auto e = engine(model, 1, 256, /*n_batch=*/1);  // a chunk per prompt token
    ASSERT_TRUE(e);
    std::string text;
    while (encode(model, text + kStoryPrompts[2]).size() < 250)
        text += kStoryPrompts[2];
    const auto prompt = encode(model, text);
    auto h = submit(*e, greedy(prompt, 1));
    ASSERT_TRUE(
        wait_for_stats(*e, [](const serve::EngineStats &s) { return s.prefilled_tokens >= 8; }));
    h->cancel();
    ASSERT_TRUE(wait_for_stats(*e, [](const serve::EngineStats &s) {
        return s.requests_cancelled == 1 && s.slots_busy == 0;
    }));
    const uint64_t done = e->stats().prefilled_tokens;
    EXPECT_LT(done, prompt.size());
    // The chunks done stay in the slot: the same prompt again starts from them.
    Outcome o = collect(submit(*e, greedy(prompt, 1)), 1);
    EXPECT_EQ(o.usage.cached_tokens, done);
    EXPECT_EQ(e->stats().prefilled_tokens, prompt.size());
}

TEST_F(ServeEngine, SubmitRefusesAFullQueueAndRequestsThatCannotRun) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    auto e = engine(model, 1, 64, 32, /*queue_limit=*/2);
    ASSERT_TRUE(e);
    ASSERT_EQ(e->context_size(), 64u);
    GenerationRequest endless = greedy(encode(model, "The dog"), 0);
    endless.ignore_eog = true;
    auto running = submit(*e, endless);
    ASSERT_TRUE(wait_for_stats(*e, [](const serve::EngineStats &s) { return s.slots_busy == 1; }));
    auto q1 = submit(*e, endless);
    auto q2 = submit(*e, endless);
    EXPECT_EQ(e->stats().queue_length, 2u);
    std::shared_ptr<RequestHandle> none;
    std::string message;
    EXPECT_EQ(e->submit(endless, &none, &message), SubmitResult::QueueFull);
    EXPECT_FALSE(none);
    EXPECT_NE(message, "");

    GenerationRequest bad = greedy(encode(model, "The dog"), 64);  // prompt + 64 > 64
    EXPECT_EQ(e->submit(bad, &none, &message), SubmitResult::TooLong) << message;
    bad = greedy(encode(model, "The dog"), 4);
    bad.n_choices = 2;  // one slot
    EXPECT_EQ(e->submit(bad, &none, &message), SubmitResult::TooLong) << message;
    bad = greedy({1, 320}, 4);  // tiny-qwen2 has 320 ids
    EXPECT_EQ(e->submit(bad, &none, &message), SubmitResult::Invalid) << message;
    bad = greedy({}, 4);
    EXPECT_EQ(e->submit(bad, &none, &message), SubmitResult::Invalid) << message;
    bad = greedy({1}, 4);
    bad.sampling.temperature = std::nanf("");
    EXPECT_EQ(e->submit(bad, &none, &message), SubmitResult::Invalid) << message;
    bad = greedy({1}, 4);
    bad.top_logprobs = VKLLM_MAX_TOP_LOGPROBS + 1;
    EXPECT_EQ(e->submit(bad, &none, &message), SubmitResult::Invalid) << message;
    EXPECT_FALSE(none);

    // Queued requests that are cancelled leave the queue without running.
    q1->cancel();
    q2.reset();
    running->cancel();
    EXPECT_TRUE(wait_for_stats(*e, [](const serve::EngineStats &s) {
        return s.queue_length == 0 && s.slots_busy == 0 && s.requests_cancelled == 3;
    }));
    EXPECT_EQ(e->stats().requests_started, 1u);
}

TEST_F(ServeEngine, ARequestThatFailsLeavesTheOthersServed) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    auto e = engine(model, 2, 256, 16);
    ASSERT_TRUE(e);
    // A logit bias that bans every id: the sampler refuses the row once the prefill is done.
    // (Sampled: greedy sampling takes the highest of the banned logits instead.)
    GenerationRequest doomed = greedy(encode(model, kStoryPrompts[0]), 8);
    doomed.sampling.temperature = 1.0f;
    for (int32_t id = 0; id < 320; ++id)
        doomed.sampling.logit_bias.push_back({id, -std::numeric_limits<float>::infinity()});
    const auto prompt = encode(model, kStoryPrompts[2]);
    auto bad = submit(*e, doomed);
    auto good = submit(*e, greedy(prompt, 12));
    Outcome ob = collect(bad, 1);
    EXPECT_NE(ob.error, "");
    EXPECT_EQ(ob.reason[0], "");
    Outcome og = collect(good, 1);
    EXPECT_EQ(og.error, "");
    EXPECT_EQ(og.tokens[0], generate_alone(model, prompt, 12, 16).tokens);
    EXPECT_TRUE(wait_for_stats(*e, [](const serve::EngineStats &s) {
        return s.slots_busy == 0 && s.requests_finished == 2;
    }));
}

TEST_F(ServeEngine, ASharedPrefixIsReusedAndTheOutputIsUnchanged) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    const uint32_t n_batch = 16;
    auto e = engine(model, 2, 256, n_batch);
    ASSERT_TRUE(e);
    const std::string system =
        "Once upon a time, there was a little girl named Lily. She liked to play with her toys "
        "in the garden.";
    const auto shared = encode(model, system);
    const std::string asks[] = {" One day she found a ball.", " Her dog was sad.",
                                " The sky was blue."};
    // The first fills a slot; the second comes while the first is still decoding and forks
    // its slot; the third comes when both are free and rewinds the slot that shares most.
    GenerationRequest first = greedy(encode(model, system + asks[0]), 30);
    first.ignore_eog = true;
    auto a = submit(*e, first);
    std::vector<ChoiceDelta> out;
    while (out.empty())
        ASSERT_TRUE(a->next(out, 1s));
    auto b = submit(*e, greedy(encode(model, system + asks[1]), 12));
    Outcome ob = collect(b, 1);
    collect(a, 1);
    Outcome oc = collect(submit(*e, greedy(encode(model, system + asks[2]), 12)), 1);
    for (const auto &[o, ask] : {std::pair{&ob, asks[1]}, std::pair{&oc, asks[2]}}) {
        SCOPED_TRACE(ask);
        const auto prompt = encode(model, system + ask);
        EXPECT_GE(o->usage.cached_tokens, shared.size() - 2);  // a word may tokenize across
        EXPECT_LT(o->usage.cached_tokens, prompt.size());
        Generated ref = generate_alone(model, prompt, 12, n_batch);
        EXPECT_EQ(o->tokens[0], ref.tokens);
        EXPECT_EQ(o->text[0], ref.text);
    }
    const auto stats = e->stats();
    EXPECT_LT(stats.prefilled_tokens, stats.prompt_tokens);
}

// Logprobs of each generated token equal a host log-softmax (float64) of the logits
// vkllm_session_eval writes for the same tokens; under greedy the chosen token is the top one.
void check_logprobs_against_eval(vkllm_model *model, const std::vector<int32_t> &prompt,
                                 const Outcome &o, size_t n_tokens, uint32_t n_batch) {
    const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(model);
    vkllm_tokenizer_info ti;
    ti.struct_size = sizeof ti;
    ASSERT_EQ(vkllm_tokenizer_get_info(tok, &ti), VKLLM_OK);
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    ASSERT_EQ(vkllm_model_get_info(model, &mi), VKLLM_OK);
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_batch = n_batch;
    sp.n_ctx = 256;
    vkllm_session *session = nullptr;
    ASSERT_EQ(vkllm_session_create(model, &sp, &session), VKLLM_OK);
    std::vector<float> logits(mi.n_vocab);
    ASSERT_EQ(vkllm_session_eval(session, 0, prompt.data(), prompt.size(), logits.data()),
              VKLLM_OK);
    ASSERT_GE(o.logprobs[0].size(), n_tokens);
    for (size_t t = 0; t < n_tokens; ++t) {
        SCOPED_TRACE("token " + std::to_string(t));
        const auto &got = o.logprobs[0][t];
        const auto ref = log_softmax(logits.data(), ti.n_vocab);
        const auto top = top_ids(ref, got.top.size());
        EXPECT_EQ(got.token, top[0]) << "greedy takes the most likely token";
        EXPECT_NEAR(got.logprob, ref[size_t(got.token)], 1e-4);
        ASSERT_EQ(got.top.size(), 5u);
        for (size_t k = 0; k < got.top.size(); ++k) {
            EXPECT_EQ(got.top[k].token, top[k]);
            EXPECT_NEAR(got.top[k].logprob, ref[size_t(top[k])], 1e-4);
        }
        EXPECT_EQ(got.bytes.empty(), false);
        ASSERT_EQ(vkllm_session_eval(session, 0, &got.token, 1, logits.data()), VKLLM_OK);
    }
    vkllm_session_destroy(session);
}

TEST_F(ServeEngine, LogprobsAreTheLogSoftmaxOfTheLogits) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    auto e = engine(model, 2, 256, 32);
    ASSERT_TRUE(e);
    const auto prompt = encode(model, kStoryPrompts[0]);
    GenerationRequest r = greedy(prompt, 6);
    r.ignore_eog = true;
    r.top_logprobs = 5;
    Outcome o = collect(submit(*e, r), 1);
    check_logprobs_against_eval(model, prompt, o, 6, 32);
}

TEST_F(ServeEngine, SmolLM2LogprobsOfTheFirstTokenAreTheLogSoftmaxOfTheLogits) {
    const std::string path = cached_model(kSmolLM2);
    if (path.empty()) GTEST_SKIP() << kSmolLM2 << " not cached (scripts/fetch-models)";
    vkllm_model *model = load(path);
    ASSERT_TRUE(model);
    auto e = engine(model, 2, 256, 64);
    ASSERT_TRUE(e);
    const auto prompt = encode(model, "The capital of France is");
    GenerationRequest r = greedy(prompt, 3);
    r.top_logprobs = 5;
    Outcome o = collect(submit(*e, r), 1);
    // The first token's row comes from the same prefill as vkllm_session_eval's; later rows come
    // from decode steps, which round differently (vkllm.h: up to 7e-4 on SmolLM2).
    check_logprobs_against_eval(model, prompt, o, 1, 64);
    for (const auto &lp : o.logprobs[0])
        EXPECT_EQ(lp.token, lp.top[0].token);
}

TEST_F(ServeEngine, PromptLogprobsAreEvalLogitsLogSoftmaxRows) {
    vkllm_model *model = load(kTiny);
    ASSERT_TRUE(model);
    const uint32_t n_batch = 16;
    auto e = engine(model, 2, 256, n_batch);
    ASSERT_TRUE(e);
    const auto prompt = encode(model, kStoryPrompts[2]);  // several chunks
    ASSERT_GT(prompt.size(), 2 * n_batch);
    // A first request leaves the prompt in a slot: prompt logprobs must not reuse it.
    collect(submit(*e, greedy(prompt, 2)), 1);
    GenerationRequest r = greedy(prompt, 2);
    r.prompt_logprobs = true;
    r.top_logprobs = 3;
    Outcome o = collect(submit(*e, r), 1);
    EXPECT_EQ(o.usage.cached_tokens, 0u);
    ASSERT_EQ(o.prompt_logprobs.size(), prompt.size() - 1) << "filled before the first delta";

    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    ASSERT_EQ(vkllm_model_get_info(model, &mi), VKLLM_OK);
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_batch = n_batch;
    sp.n_ctx = 256;
    vkllm_session *session = nullptr;
    ASSERT_EQ(vkllm_session_create(model, &sp, &session), VKLLM_OK);
    vkllm_eval_params ep;
    vkllm_eval_params_init(&ep);
    ep.kind = VKLLM_LOGITS_LOG_SOFTMAX;
    std::vector<float> rows(prompt.size() * mi.n_vocab);
    ASSERT_EQ(vkllm_session_eval_logits(session, 0, prompt.data(), prompt.size(), &ep, rows.data()),
              VKLLM_OK);
    vkllm_session_destroy(session);
    for (size_t i = 0; i + 1 < prompt.size(); ++i) {
        SCOPED_TRACE("prompt token " + std::to_string(i + 1));
        const float *row = &rows[i * mi.n_vocab];
        const auto &got = o.prompt_logprobs[i];
        EXPECT_EQ(got.token, prompt[i + 1]);
        EXPECT_NEAR(got.logprob, row[prompt[i + 1]], 1e-4);
        std::vector<double> as_double(row, row + mi.n_vocab);
        const auto top = top_ids(as_double, 3);
        ASSERT_EQ(got.top.size(), 3u);
        for (size_t k = 0; k < 3; ++k) {
            EXPECT_EQ(got.top[k].token, top[k]);
            EXPECT_NEAR(got.top[k].logprob, row[top[k]], 1e-4);
        }
    }
    // The generated tokens are those of a request without prompt logprobs.
    Outcome plain = collect(submit(*e, greedy(prompt, 2)), 1);
    EXPECT_EQ(o.tokens[0], plain.tokens[0]);
}

TEST_F(ServeEngine, SmolLM2UnderAJsonSchemaWritesJsonThatParses) {
#ifndef HAVE_NLOHMANN_JSON
    GTEST_SKIP() << "nlohmann/json.hpp not installed (nlohmann-json3-dev)";
#else
    const std::string path = cached_model(kSmolLM2);
    if (path.empty()) GTEST_SKIP() << kSmolLM2 << " not cached (scripts/fetch-models)";
    vkllm_model *model = load(path);
    ASSERT_TRUE(model);
    auto e = engine(model, 2, 512, 64);
    ASSERT_TRUE(e);
    vkllm_grammar *grammar = nullptr;
    ASSERT_EQ(vkllm_grammar_create_from_json_schema(
                  vkllm_model_get_tokenizer(model),
                  R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},)"
                  R"("age":{"type":"integer","minimum":0,"maximum":150}},)"
                  R"("required":["name","age"],"additionalProperties":false})",
                  &grammar),
              VKLLM_OK)
        << vkllm_last_error();
    GenerationRequest r;
    r.prompt = encode(model,
                      "<|im_start|>user\nDescribe a person as JSON with a name and an "
                      "age.<|im_end|>\n<|im_start|>assistant\n",
                      VKLLM_TOKENIZE_PARSE_SPECIAL);
    r.max_tokens = 48;
    r.n_choices = 2;
    r.sampling.temperature = 0.7f;
    r.sampling.has_seed = true;
    r.sampling.seed = 7;
    r.sampling.grammar.reset(grammar, vkllm_grammar_destroy);
    Outcome o = collect(submit(*e, r), 2);
    for (uint32_t i = 0; i < 2; ++i) {
        SCOPED_TRACE(o.text[i]);
        EXPECT_EQ(o.reason[i], "stop") << "the grammar finished the object";
        auto json = nlohmann::json::parse(o.text[i], nullptr, false);
        ASSERT_FALSE(json.is_discarded());
        ASSERT_TRUE(json.is_object());
        EXPECT_TRUE(json["name"].is_string());
        EXPECT_TRUE(json["age"].is_number_integer());
    }
#endif
}

}  // namespace
