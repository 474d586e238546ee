// The CPU reference forward pass (reference/forward.h) against outputs other implementations
// produced from the same files: an independent float64 numpy forward pass of the tiny models
// (dense and mixture-of-experts), and llama2.c's run.c on stories260K. The GPU engine is judged
// by this reference, so the reference is first judged here. Also its router (route()), its
// masks on sliding-window models, and the tiny random-model writer (tiny_model.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "json.h"
#include "reference/forward.h"
#include "reference/tiny_model.h"
#include "test_data.h"

namespace {

double max_abs_diff(const std::vector<double> &got, const Json &expected) {
    EXPECT_EQ(got.size(), expected.arr.size());
    double worst = 0;
    for (size_t i = 0; i < std::min(got.size(), expected.arr.size()); ++i)
        worst = std::max(worst, std::fabs(got[i] - expected.arr[i].num));
    return worst;
}

class NumpyReference : public ::testing::TestWithParam<const char *> {};

// Max |logit - numpy| measured over all three sequences, prompt and greedy logits:
//   tiny-llama f32 5.0e-8, f16 5.0e-8; tiny-qwen2 f32 5.0e-8, f16 5.0e-8;
//   tiny-qwen2-tied f32 5.0e-7, f16 4.9e-7 (|logit| up to 195 there); tiny-gpt2 f32 5.0e-8,
//   f16 5.0e-8; tiny-qwen2moe f32 5.0e-8, f16 5.0e-8; tiny-gptoss f32 5.0e-8, f16 5.0e-8,
//   mxfp4 5.0e-8, yarn-f32 5.0e-8.
// That is the JSON's rounding to 9 significant digits, nothing more. The 1e-4 bound is far
// below any modelling mistake: on stories260K, RMS eps 1e-6 instead of 1e-5 already moves
// logits by 5e-3, and a wrong RoPE pairing or base by more than 1. On the MoE models each
// alternative reading tried moves them by far more (max |diff| over the file): the sliding
// window on odd layers instead of even 19.6, no window 17.9, window 15 or 17 instead of 16
// 13.7 / 6.7, no sinks 8.3, qwen2moe's routing order on gpt-oss 6.3 and gpt-oss's on qwen2moe
// 3.3, plain SwiGLU for swiglu_oai 16.8; on the YaRN model, YaRN off 16.9, attn_factor
// 1/(1 + 0.1 ln 32) instead of 1 16.8, 0.99 0.66, unrounded corr dims (7.93, 17.4 instead of
// ggml's floor/ceil 8, 18) 0.024.
TEST_P(NumpyReference, LogitsAndGreedyIdsMatchFloat64Numpy) {
    std::string dir = test_data_dir();
    std::string name = GetParam();
    auto model = ref::load_model_ref(dir + "/models/" + name + ".gguf");
    Json expected = Json::load(dir + "/reference/numpy-f64/" + name + ".json");
    ASSERT_EQ(double(model->n_vocab), expected["n_vocab"].num);
    ASSERT_EQ(expected["sequences"].arr.size(), 3u);

    double worst = 0;
    for (const Json &seq : expected["sequences"].arr) {
        std::vector<int32_t> prompt = seq["tokens"].ints();
        std::vector<int32_t> continuation = seq["greedy"].ints();
        ASSERT_FALSE(continuation.empty());
        // greedy_logits[k] is the output after greedy[k-1], so one pass over the prompt and all
        // but the last greedy id gives every logit row of the file.
        std::vector<int32_t> all = prompt;
        all.insert(all.end(), continuation.begin(), continuation.end() - 1);
        std::vector<std::vector<double>> logits = ref::forward_logits_f64(*model, all);
        ASSERT_EQ(logits.size(), all.size());
        for (size_t i = 0; i < prompt.size(); ++i)
            worst = std::max(worst, max_abs_diff(logits[i], seq["logits"].arr[i]));
        for (size_t k = 0; k < continuation.size(); ++k)
            worst = std::max(
                worst, max_abs_diff(logits[prompt.size() - 1 + k], seq["greedy_logits"].arr[k]));
        EXPECT_EQ(ref::greedy(*model, prompt, int(continuation.size())), continuation)
            << "prompt of " << prompt.size() << " tokens";
    }
    std::printf("%s: max |logit - numpy-f64| = %.3g\n", name.c_str(), worst);
    EXPECT_LE(worst, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(TinyModels, NumpyReference,
                         ::testing::Values("tiny-llama-f32", "tiny-llama-f16", "tiny-qwen2-f32",
                                           "tiny-qwen2-f16", "tiny-qwen2-tied-f32",
                                           "tiny-qwen2-tied-f16", "tiny-gpt2-f32", "tiny-gpt2-f16",
                                           "tiny-qwen2moe-f32", "tiny-qwen2moe-f16",
                                           "tiny-gptoss-f32", "tiny-gptoss-f16",
                                           "tiny-gptoss-mxfp4", "tiny-gptoss-yarn-f32"),
                         [](const ::testing::TestParamInfo<const char *> &param) {
                             std::string s = param.param;
                             std::replace(s.begin(), s.end(), '-', '_');
                             return s;
                         });

// qwen2moe keeps the top-k of the softmax over all experts as they are; gpt-oss softmaxes the
// top-k logits among themselves. Ties go to the lower expert index.
TEST(Route, FollowsEachArchitecturesOrder) {
    ref::ModelRef m;
    m.n_expert = 4;
    m.n_expert_used = 2;
    std::vector<int> experts;
    std::vector<double> weights;
    EXPECT_THROW(ref::route(m, {0, 0, 0, 0}, &experts, &weights), std::invalid_argument);

    const std::vector<double> tied = {0.5, 2.0, -1.0, 2.0};
    m.routing = ref::Routing::softmax_then_top_k;
    ref::route(m, tied, &experts, &weights);
    double z = std::exp(0.5) + 2 * std::exp(2.0) + std::exp(-1.0);
    EXPECT_EQ(experts, (std::vector<int>{1, 3}));
    ASSERT_EQ(weights.size(), 2u);
    EXPECT_NEAR(weights[0], std::exp(2.0) / z, 1e-15);
    EXPECT_NEAR(weights[1], std::exp(2.0) / z, 1e-15);
    EXPECT_THROW(ref::route(m, {1, 2, 3}, &experts, &weights), std::invalid_argument);

    m.routing = ref::Routing::top_k_then_softmax;
    ref::route(m, tied, &experts, &weights);
    EXPECT_EQ(experts, (std::vector<int>{1, 3}));
    EXPECT_EQ(weights, (std::vector<double>{0.5, 0.5}));
    ref::route(m, {3.0, 1.0, 0.0, 2.0}, &experts, &weights);
    EXPECT_EQ(experts, (std::vector<int>{0, 3}));
    ASSERT_EQ(weights.size(), 2u);
    EXPECT_NEAR(weights[0], 1 / (1 + std::exp(-1.0)), 1e-15);
    EXPECT_NEAR(weights[1], 1 / (1 + std::exp(1.0)), 1e-15);
}

// On gpt-oss a caller's mask narrows the sliding window and never widens it: a mask of the 8
// latest keys is every layer with an 8-key window; one of the 32 latest leaves the even
// layers at their 16 and gives the odd (full-attention) layers a 32-key window.
TEST(SlidingWindow, CallersMaskCombinesWithTheWindow) {
    std::string dir = test_data_dir();
    auto model = ref::load_model_ref(dir + "/models/tiny-gptoss-f32.gguf");
    ASSERT_EQ(model->layers.size(), 2u);
    EXPECT_EQ(model->layers[0].window, 16u);
    EXPECT_EQ(model->layers[1].window, 0u);
    std::vector<int32_t> tokens;
    for (int32_t i = 0; i < 40; ++i)
        tokens.push_back((i * 37 + 11) % 316);
    auto latest = [](uint32_t n) { return [n](uint32_t q, uint32_t k) { return q - k < n; }; };
    auto max_diff = [](const std::vector<std::vector<double>> &a,
                       const std::vector<std::vector<double>> &b) {
        double worst = 0;
        for (size_t t = 0; t < a.size(); ++t)
            for (size_t i = 0; i < a[t].size(); ++i)
                worst = std::max(worst, std::fabs(a[t][i] - b[t][i]));
        return worst;
    };
    for (uint32_t n : {8u, 32u}) {
        ref::ModelRef windowed = *model;
        windowed.layers[0].window = std::min(n, 16u);
        windowed.layers[1].window = n;
        EXPECT_EQ(max_diff(ref::forward_logits_masked_f64(*model, tokens, latest(n)),
                           ref::forward_logits_f64(windowed, tokens)),
                  0.0)
            << n << "-key mask";
    }
    // And the window matters here: without it the logits move.
    ref::ModelRef full = *model;
    full.layers[0].window = 0;
    EXPECT_GT(
        max_diff(ref::forward_logits_f64(*model, tokens), ref::forward_logits_f64(full, tokens)),
        1e-3);
}

class Stories260K : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string dir = test_data_dir();
        model_ = ref::load_model_ref(dir + "/models/stories260K-plctlab.gguf");
        expected_ = Json::load(dir + "/models/reference-stories260K-plctlab.json");
    }
    std::unique_ptr<ref::ModelRef> model_;
    Json expected_;
};

// The closest top-1 margin on the way is 0.0029 (step 37, where llama.cpp's F16 KV cache makes
// it pick 417 instead of 416), a hundred times run.c's float32 error measured below.
TEST_F(Stories260K, GreedyFromBosMatchesLlama2cRunC) {
    const Json &run = expected_["runc_greedy_from_bos"];
    std::vector<int32_t> ids = run["generated_ids"].ints();
    ASSERT_EQ(ids.size(), 65u);
    EXPECT_EQ(ref::greedy(*model_, run["prompt_ids"].ints(), int(ids.size())), ids);
}

// run.c computes in float32, so its logits carry float32 rounding: measured max |logit - run.c|
// is 2.4e-5 for |logit| up to 14, i.e. 1.7e-6 relative, some 30 float32 ulps accumulated over
// five layers of 64- to 172-term dot products. 1e-4 allows four times that, and is still 50
// times smaller than the effect of the smallest modelling mistake tried (RMS eps 1e-6 instead
// of 1e-5: 5e-3).
TEST_F(Stories260K, LogitsMatchLlama2cRunCWithinFloat32Rounding) {
    const std::vector<Json> &positions = expected_["runc_logits"]["positions"].arr;
    ASSERT_EQ(positions.size(), 8u);
    std::vector<int32_t> inputs;
    for (const Json &p : positions) {
        ASSERT_EQ(size_t(p["pos"].num), inputs.size());
        inputs.push_back(int32_t(p["input_token"].num));
    }
    std::vector<std::vector<double>> logits = ref::forward_logits_f64(*model_, inputs);
    double worst = 0;
    for (size_t i = 0; i < positions.size(); ++i)
        worst = std::max(worst, max_abs_diff(logits[i], positions[i]["logits"]));
    std::printf("stories260K: max |logit - run.c| = %.3g\n", worst);
    EXPECT_LE(worst, 1e-4);
}

// A fresh file per test and process: ctest runs tests in parallel.
std::string temp_model(const std::string &name) {
    return ::testing::TempDir() + "vkllm_tiny_" + name + "_" + std::to_string(::getpid()) + ".gguf";
}

std::vector<float> last_logits(const TinyModelSpec &spec, const std::string &name,
                               const std::vector<int32_t> &tokens) {
    std::string path = temp_model(name);
    write_tiny_model(path, spec);
    auto model = ref::load_model_ref(path);
    std::remove(path.c_str());
    return ref::forward_logits(*model, tokens).back();
}

bool all_finite(const std::vector<float> &v) {
    return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

const std::vector<int32_t> kTokens = {1, 17, 5, 42, 63, 8, 8, 30};

TEST(TinyModel, Qwen3WithWideHeadsLoadsBackWithItsShape) {
    TinyModelSpec spec;
    spec.arch = "qwen3";
    spec.head_dim = 16;  // n_head * head_dim = 64 != n_embd, as in real Qwen3 models
    spec.tied_output = true;
    std::string path = temp_model("qwen3");
    write_tiny_model(path, spec);
    auto model = ref::load_model_ref(path);
    std::remove(path.c_str());
    EXPECT_EQ(model->n_vocab, 64u);
    EXPECT_EQ(model->head_dim, 16u);
    EXPECT_EQ(model->n_head_kv, 2u);
    EXPECT_TRUE(model->neox_rope);
    EXPECT_TRUE(model->tied_output);
    EXPECT_EQ(model->layers.at(1).q_norm.size(), 16u);
    std::vector<std::vector<float>> logits = ref::forward_logits(*model, kTokens);
    ASSERT_EQ(logits.size(), kTokens.size());
    for (const std::vector<float> &l : logits) {
        ASSERT_EQ(l.size(), 64u);
        EXPECT_TRUE(all_finite(l));
    }
}

TEST(TinyModel, Qwen2GetsAttentionBiases) {
    TinyModelSpec spec;
    spec.arch = "qwen2";
    std::string path = temp_model("qwen2");
    write_tiny_model(path, spec);
    auto model = ref::load_model_ref(path);
    std::remove(path.c_str());
    EXPECT_EQ(model->layers.at(0).bq.size(), 32u);
    EXPECT_EQ(model->layers.at(0).bk.size(), 16u);
    EXPECT_EQ(model->layers.at(0).bv.size(), 16u);
    EXPECT_TRUE(all_finite(ref::forward_logits(*model, kTokens).back()));
}

// The same seed draws the same values, so F16 and BF16 files hold the F32 weights rounded:
// their logits must stay close to the F32 model's (a wrong conversion would not be).
TEST(TinyModel, HalfPrecisionWeightsTrackTheF32Model) {
    TinyModelSpec spec;
    std::vector<float> f32 = last_logits(spec, "f32", kTokens);
    spec.weight_type = 30;
    std::vector<float> bf16 = last_logits(spec, "bf16", kTokens);
    spec.weight_type = 1;
    std::vector<float> f16 = last_logits(spec, "f16", kTokens);
    ASSERT_TRUE(all_finite(bf16));
    ASSERT_TRUE(all_finite(f16));
    double bf16_err = 0, f16_err = 0, scale = 0;
    for (size_t i = 0; i < f32.size(); ++i) {
        bf16_err = std::max(bf16_err, double(std::fabs(bf16[i] - f32[i])));
        f16_err = std::max(f16_err, double(std::fabs(f16[i] - f32[i])));
        scale = std::max(scale, double(std::fabs(f32[i])));
    }
    std::printf("tiny llama: max |logit| %.3g, BF16 error %.3g, F16 error %.3g\n", scale, bf16_err,
                f16_err);
    EXPECT_GT(bf16_err, 0.0);
    EXPECT_LT(bf16_err, 0.05 * scale);
    EXPECT_LT(f16_err, bf16_err);
}

TEST(TinyModel, SeedChangesTheLogits) {
    TinyModelSpec spec;
    spec.weight_type = 30;
    std::vector<float> a = last_logits(spec, "seed1", kTokens);
    std::vector<float> again = last_logits(spec, "seed1_again", kTokens);
    spec.seed = 2;
    std::vector<float> b = last_logits(spec, "seed2", kTokens);
    EXPECT_EQ(a, again);
    EXPECT_NE(a, b);
}

TEST(TinyModel, Bf16RoundsToNearestEven) {
    EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
    auto from_bits = [](uint32_t bits) {
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    };
    EXPECT_EQ(float_to_bf16(from_bits(0x3f808000u)), 0x3f80);  // halfway, even below
    EXPECT_EQ(float_to_bf16(from_bits(0x3f818000u)), 0x3f82);  // halfway, even above
    EXPECT_EQ(float_to_bf16(from_bits(0x3f808001u)), 0x3f81);  // past halfway
    EXPECT_EQ(float_to_bf16(from_bits(0xbf80ffffu)), 0xbf81);  // sign kept
    EXPECT_EQ(float_to_bf16(from_bits(0x7f7fffffu)), 0x7f80);  // max float rounds to inf
    // A NaN whose payload is only in the dropped bits would otherwise become infinity.
    EXPECT_EQ(float_to_bf16(from_bits(0x7f800001u)), 0x7fc0);
}

}  // namespace
