// What the engine tests share (test_serve_engine*.cpp): a runtime with the validation layer,
// the models, a consumer that collects a request's deltas, and the references they compare with.
#pragma once

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

namespace serve_test {

using namespace std::chrono_literals;
using serve::ChoiceDelta;
using serve::Engine;
using serve::EngineOptions;
using serve::GenerationRequest;
using serve::RequestHandle;
using serve::SubmitResult;

// Random weights, a byte-level BPE vocabulary of 320 ids: varied tokens, and text that is often
// not valid UTF-8 (the detokenizer's held bytes come out at the end).
inline const std::string kTiny = std::string(VKLLM_TEST_DATA_DIR) + "/models/tiny-qwen2-f32.gguf";
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

inline Outcome collect(const std::shared_ptr<RequestHandle> &handle, uint32_t n_choices) {
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
inline bool wait_for_stats(const Engine &engine, Pred done) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
        if (done(engine.stats())) return true;
        std::this_thread::sleep_for(5ms);
    }
    return false;
}

inline std::vector<double> log_softmax(const float *row, size_t n) {
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

inline std::vector<int32_t> top_ids(const std::vector<double> &lp, size_t k) {
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

inline const char *const kStoryPrompts[] = {
    "Once upon a time, there was a little girl named Lily.",
    "The dog",
    "Tom and his mom went to the park. They saw a big tree and a small bird that could not fly. "
    "Tom wanted to help the bird, so he",
    "One day",
    "The sun was shining and the children were playing outside.",
};

}  // namespace serve_test
