// The server's engine (tools/serve/engine.h) through the public API: requests decoded together
// give what each gives alone (vkllm_session_generate on a fresh session), also with consumers on
// their own threads while others cancel. tiny-qwen2 (tests/data/models) for the scheduling,
// SmolLM2 (scripts/fetch-models) for the real-model checks (test_serve_engine_choices.cpp).
#include "serve_engine_test.h"

namespace {

using namespace serve_test;

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

}  // namespace
