// End to end against independent engines: the float64 numpy forward pass and llama.cpp for
// the tiny llama/qwen2 models, llama2.c's run.c for stories260K, llama.cpp for the real
// Llama 2 vocabulary model. Logits through the KV-cache decode path and the chunked prefill.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/runtime.h"
#include "engine_fixture.h"
#include "json.h"
#include "shader_names.h"
#include "test_data.h"

namespace {

struct Compared {
    double max_err = 0;
    double max_logit = 0;
    int greedy_checked = 0;
};

// How a sequence's logits are computed: a token at a time through the decode step, or the
// whole sequence at once through the prefill (vkllm_session_eval_logits: every position's row).
enum class Path { Decode, Prefill };

std::vector<std::vector<float>> prefill_each(vkllm_session *s, const std::vector<int32_t> &ids,
                                             uint32_t n_vocab) {
    std::vector<float> rows(ids.size() * n_vocab);
    EXPECT_EQ(vkllm_session_eval_logits(s, 0, ids.data(), ids.size(), nullptr, rows.data()),
              VKLLM_OK)
        << vkllm_last_error();
    std::vector<std::vector<float>> out;
    for (size_t i = 0; i < ids.size(); ++i)
        out.emplace_back(rows.begin() + i * n_vocab, rows.begin() + (i + 1) * n_vocab);
    return out;
}

// One reference sequence: teacher-forced logits at every prompt and greedy position; greedy
// ids must agree wherever the reference's top-1 margin exceeds twice our error.
Compared compare_sequence(EngineTest &t, vkllm_model *m, vkllm_session *s, const Json &seq,
                          Path path = Path::Decode) {
    uint32_t n_vocab = EngineTest::vocab(m);
    std::vector<int32_t> tokens = seq["tokens"].ints();
    std::vector<int32_t> greedy = seq["greedy"].ints();
    EXPECT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    std::vector<int32_t> all = tokens;
    all.insert(all.end(), greedy.begin(), greedy.end() - 1);
    std::vector<std::vector<float>> got =
        path == Path::Decode ? t.decode_each(s, all, n_vocab) : prefill_each(s, all, n_vocab);
    std::vector<std::vector<float>> want;
    for (const Json &l : seq["logits"].arr) {
        std::vector<float> v;
        for (const Json &x : l.arr)
            v.push_back(float(x.num));
        want.push_back(v);
    }
    std::vector<std::vector<float>> want_greedy;
    for (const Json &l : seq["greedy_logits"].arr) {
        std::vector<float> v;
        for (const Json &x : l.arr)
            v.push_back(float(x.num));
        want_greedy.push_back(v);
    }
    // logits[i] follows token i; greedy_logits[0] is the last prompt position's.
    std::vector<std::vector<float>> expected = want;
    expected.insert(expected.end(), want_greedy.begin() + 1, want_greedy.end());
    Compared c;
    for (size_t i = 0; i < got.size() && i < expected.size(); ++i) {
        c.max_err = std::max(c.max_err, max_abs_diff(got[i], expected[i]));
        c.max_logit = std::max(c.max_logit, max_abs(expected[i]));
    }
    for (size_t k = 0; k < greedy.size(); ++k) {
        const std::vector<float> &ours = got[tokens.size() - 1 + k];
        if (top1_margin(want_greedy[k]) > 2 * std::max(c.max_err, 1e-6)) {
            EXPECT_EQ(argmax_of(ours), greedy[k]) << "greedy step " << k;
            ++c.greedy_checked;
        }
    }
    return c;
}

class SharedReference : public EngineTest {
  protected:
    void SetUp() override {
        dir_ = test_data_dir();
        EngineTest::SetUp();
    }

    // F32 KV cache: within 1e-3 absolute or 1e-4 of the largest |logit|, whichever is looser.
    void check_numpy(const std::string &name) {
        Json ref = Json::load(dir_ + "/reference/numpy-f64/" + name + ".json");
        vkllm_model *m = load(dir_ + "/models/" + name + ".gguf");
        ASSERT_NE(m, nullptr);
        vkllm_session *f32 = session(m, 128, VKLLM_KV_F32);
        vkllm_session *f16 = session(m, 128);
        double worst32 = 0, worst16 = 0, largest = 0;
        int greedy = 0;
        for (const Json &seq : ref["sequences"].arr) {
            Compared a = compare_sequence(*this, m, f32, seq);
            EXPECT_LE(a.max_err, std::max(1e-3, 1e-4 * a.max_logit)) << name << " F32 KV";
            Compared b = compare_sequence(*this, m, f16, seq);
            worst32 = std::max(worst32, a.max_err);
            worst16 = std::max(worst16, b.max_err);
            largest = std::max(largest, a.max_logit);
            greedy += a.greedy_checked;
        }
        std::printf(
            "%s: max |logit| %.3g; max error F32 KV %.3g, F16 KV %.3g; %d greedy ids "
            "checked\n",
            name.c_str(), largest, worst32, worst16, greedy);
        // The F16 cache rounds K and V to 11 significant bits: reported, bounded loosely.
        EXPECT_LE(worst16, std::max(2e-2, 2e-3 * largest)) << name << " F16 KV";
        EXPECT_GT(greedy, 24);
    }

    std::string dir_;
};

}  // namespace

// The tiny models the prefill tests walk: every architecture and weight type the test data has
// a float64 reference for.
const char *const kTinyModels[] = {
    "tiny-llama-f32",      "tiny-llama-f16",      "tiny-qwen2-f32",  "tiny-qwen2-f16",
    "tiny-qwen2-tied-f32", "tiny-qwen2-tied-f16", "tiny-gpt2-f32",   "tiny-gpt2-f16",
    "tiny-qwen2moe-f32",   "tiny-qwen2moe-f16",   "tiny-gptoss-f32", "tiny-gptoss-f16",
    "tiny-gptoss-mxfp4",   "tiny-gptoss-yarn-f32"};

// Every tiny model with each sequence prefilled at once (24 to 56 rows, one chunk), so every
// matrix product and the attention take the prefill kernels: the tiled or batched ones, and the
// cooperative-matrix ones where they run (tests/coopmat.cmake runs this on Mesa 26's lavapipe
// with VKLLM_COOPMAT=on). F32 KV cache, so the only rounding beyond F32 is the kernels' own.
// f32 operands are held to the decode tests' bound; cooperative matrices, whose matmul and
// attention round both operands of every product to F16, to the fixture's prefill_bound.
TEST_F(SharedReference, EveryTinyModelPrefilledMatchesFloat64Reference) {
    for (const char *name : kTinyModels) {
        Json ref = Json::load(dir_ + "/reference/numpy-f64/" + name + ".json");
        vkllm_model *m = load(dir_ + "/models/" + name + ".gguf");
        ASSERT_NE(m, nullptr);
        vkllm_session *s = session(m, 128, VKLLM_KV_F32);
        double worst = 0, largest = 0;
        int greedy = 0;
        for (const Json &seq : ref["sequences"].arr) {
            Compared c = compare_sequence(*this, m, s, seq, Path::Prefill);
            worst = std::max(worst, c.max_err);
            largest = std::max(largest, c.max_logit);
            greedy += c.greedy_checked;
        }
        std::printf("%s prefilled: max |logit| %.3g; max error %.3g; %d greedy ids checked\n", name,
                    largest, worst, greedy);
        EXPECT_LE(worst, prefill_bound(std::max(1e-3, 1e-4 * largest), largest))
            << name << (coopmat_prefill() ? " (f16 operands)" : " (f32 operands)");
        EXPECT_GT(greedy, 24) << name;
    }
}

TEST_F(SharedReference, TinyLlamaF32MatchesFloat64Reference) {
    check_numpy("tiny-llama-f32");
}
TEST_F(SharedReference, TinyLlamaF16MatchesFloat64Reference) {
    check_numpy("tiny-llama-f16");
}
TEST_F(SharedReference, TinyQwen2F32MatchesFloat64Reference) {
    check_numpy("tiny-qwen2-f32");
}
TEST_F(SharedReference, TinyQwen2F16MatchesFloat64Reference) {
    check_numpy("tiny-qwen2-f16");
}
TEST_F(SharedReference, TinyQwen2TiedF32MatchesFloat64Reference) {
    check_numpy("tiny-qwen2-tied-f32");
}
TEST_F(SharedReference, TinyQwen2TiedF16MatchesFloat64Reference) {
    check_numpy("tiny-qwen2-tied-f16");
}

TEST_F(SharedReference, TinyGpt2F32MatchesFloat64Reference) {
    check_numpy("tiny-gpt2-f32");
}
TEST_F(SharedReference, TinyGpt2F16MatchesFloat64Reference) {
    check_numpy("tiny-gpt2-f16");
}

// Mixture of experts: routing, grouped experts, Qwen2-MoE's shared expert; GPT-OSS's sinks,
// sliding-window layers (window 16: the 128-slot session's sequences pass it, so those layers'
// rings wrap), clamped SwiGLU, expert biases, MXFP4 experts and YaRN.
TEST_F(SharedReference, TinyQwen2MoeF32MatchesFloat64Reference) {
    check_numpy("tiny-qwen2moe-f32");
}
TEST_F(SharedReference, TinyQwen2MoeF16MatchesFloat64Reference) {
    check_numpy("tiny-qwen2moe-f16");
}
TEST_F(SharedReference, TinyGptOssF32MatchesFloat64Reference) {
    check_numpy("tiny-gptoss-f32");
}
TEST_F(SharedReference, TinyGptOssF16MatchesFloat64Reference) {
    check_numpy("tiny-gptoss-f16");
}
TEST_F(SharedReference, TinyGptOssMxfp4MatchesFloat64Reference) {
    check_numpy("tiny-gptoss-mxfp4");
}
TEST_F(SharedReference, TinyGptOssYarnMatchesFloat64Reference) {
    check_numpy("tiny-gptoss-yarn-f32");
}

// llama.cpp's CPU backend computes GELU through an F16 lookup table, which moves its gpt2
// logits by up to 0.011 from exact math (tests/data/reference/README.md); ours are
// exact math (the numpy tests above hold them to 1e-4), so the bound here is that table's error
// with margin, and greedy ids must agree wherever llama.cpp's top-1 margin exceeds twice it.
TEST_F(SharedReference, TinyGpt2MatchesLlamaCppLogitsWithinItsGeluTable) {
    for (const char *name : {"tiny-gpt2-f32", "tiny-gpt2-f16"}) {
        Json ref = Json::load(dir_ + "/reference/llama.cpp-cpu/" + name + ".json");
        vkllm_model *m = load(dir_ + "/models/" + name + ".gguf");
        ASSERT_NE(m, nullptr);
        vkllm_session *s = session(m, 128, VKLLM_KV_F32);
        double worst = 0, largest = 0;
        for (const Json &seq : ref["sequences"].arr) {
            Compared c = compare_sequence(*this, m, s, seq);
            worst = std::max(worst, c.max_err);
            largest = std::max(largest, c.max_logit);
        }
        std::printf("%s vs llama.cpp CPU: max error %.3g (max |logit| %.3g)\n", name, worst,
                    largest);
        EXPECT_LE(worst, 0.03) << name;
    }
}

TEST_F(SharedReference, TinyQwen2MatchesLlamaCppLogits) {
    Json ref = Json::load(dir_ + "/reference/llama.cpp-cpu/tiny-qwen2-f32.json");
    vkllm_model *m = load(dir_ + "/models/tiny-qwen2-f32.gguf");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 128, VKLLM_KV_F32);
    double worst = 0, largest = 0;
    for (const Json &seq : ref["sequences"].arr) {
        Compared c = compare_sequence(*this, m, s, seq);
        worst = std::max(worst, c.max_err);
        largest = std::max(largest, c.max_logit);
    }
    std::printf("tiny-qwen2-f32 vs llama.cpp CPU: max error %.3g (max |logit| %.3g)\n", worst,
                largest);
    EXPECT_LE(worst, std::max(1e-3, 1e-4 * largest));
}

TEST_F(SharedReference, PrefillInChunksGivesTheDecodeLogits) {
    // The 33-token prompt through the tiled prefill (chunks of 16) must give the logits the
    // one-token decode path gives.
    Json ref = Json::load(dir_ + "/reference/numpy-f64/tiny-qwen2-f32.json");
    vkllm_model *m = load(dir_ + "/models/tiny-qwen2-f32.gguf");
    ASSERT_NE(m, nullptr);
    rt_->context->kernels().set_attention_coopmat(false);  // F32 attention (f16's: below)
    vkllm_session *s = session(m, 128, VKLLM_KV_F32, 0, 1, 16);
    for (const Json &seq : ref["sequences"].arr) {
        std::vector<int32_t> tokens = seq["tokens"].ints();
        ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        std::vector<float> logits(vocab(m));
        ASSERT_EQ(vkllm_session_eval(s, 0, tokens.data(), tokens.size(), logits.data()), VKLLM_OK)
            << vkllm_last_error();
        std::vector<float> want;
        for (const Json &x : seq["logits"].arr.back().arr)
            want.push_back(float(x.num));
        EXPECT_LE(max_abs_diff(logits, want),
                  prefill_bound(std::max(1e-3, 1e-4 * max_abs(want)), max_abs(want)))
            << tokens.size() << " tokens";
    }
}

// Prefill attention on cooperative matrices (f16 operands) in whole sessions, wherever the
// device has them (Mesa 26's lavapipe, GPUs): each tiny model's 33-token prompt prefilled in
// one step through it, with an F32 and an F16 cache, then its greedy continuation decoded (the
// later layers' K and V carry the prefill's rounding): greedy ids equal the float64
// reference's wherever its top-1 margin exceeds twice our error, and the logits stay within
// the F16 cache's loose bound of check_numpy (an f16 operand rounds as an F16 cache does).
TEST_F(SharedReference, EveryTinyModelPrefilledOnCooperativeMatricesKeepsTheReferenceGreedy) {
    const vkllm::gpu::Device &device = rt_->context->device();
    if (!vkllm::gpu::shaders::kCoopmatShaders)
        GTEST_SKIP() << "the build has no cooperative-matrix shaders";
    if (!device.coopmat_enabled())
        GTEST_SKIP() << device.info().name
                     << " cannot run them: " << device.caps().coopmat.unusable;
    rt_->context->kernels().set_attention_coopmat(true);
    for (const char *name : kTinyModels) {
        Json ref = Json::load(dir_ + "/reference/numpy-f64/" + name + ".json");
        vkllm_model *m = load(dir_ + "/models/" + name + ".gguf");
        ASSERT_NE(m, nullptr) << name;
        uint32_t n_vocab = vocab(m);
        for (vkllm_kv_type kv : {VKLLM_KV_F32, VKLLM_KV_F16}) {
            vkllm_session *s = session(m, 128, kv);
            for (const Json &seq : ref["sequences"].arr) {
                std::vector<int32_t> tokens = seq["tokens"].ints();
                std::vector<int32_t> greedy = seq["greedy"].ints();
                if (tokens.size() <= 8) continue;  // decode-sized steps keep the other kernels
                ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
                std::vector<std::vector<float>> got(1, std::vector<float>(n_vocab));
                ASSERT_EQ(vkllm_session_eval(s, 0, tokens.data(), tokens.size(), got[0].data()),
                          VKLLM_OK)
                    << vkllm_last_error();
                std::vector<int32_t> fed(greedy.begin(), greedy.end() - 1);
                for (std::vector<float> &l : decode_each(s, fed, n_vocab))
                    got.push_back(std::move(l));
                double err = 0, largest = 0;
                std::vector<std::vector<float>> want;
                for (const Json &l : seq["greedy_logits"].arr) {
                    want.emplace_back();
                    for (const Json &x : l.arr)
                        want.back().push_back(float(x.num));
                    size_t k = want.size() - 1;
                    err = std::max(err, max_abs_diff(got[k], want[k]));
                    largest = std::max(largest, max_abs(want[k]));
                }
                int checked = 0;
                for (size_t k = 0; k < greedy.size(); ++k) {
                    if (top1_margin(want[k]) <= 2 * std::max(err, 1e-6)) continue;
                    EXPECT_EQ(argmax_of(got[k]), greedy[k]) << name << " greedy step " << k;
                    ++checked;
                }
                std::printf(
                    "%s, %s cache: %zu-token prefill on cooperative matrices, max "
                    "error %.3g of max |logit| %.3g, %d greedy ids checked\n",
                    name, kv == VKLLM_KV_F32 ? "F32" : "F16", tokens.size(), err, largest, checked);
                EXPECT_LE(err, std::max(2e-2, 2e-3 * largest)) << name;
                EXPECT_GT(checked, 12) << name;
            }
        }
    }
}

TEST_F(SharedReference, Stories260KReproducesLlama2cRunC) {
    Json ref = Json::load(dir_ + "/models/reference-stories260K-plctlab.json");
    vkllm_model *m = load(dir_ + "/models/stories260K-plctlab.gguf");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 512, VKLLM_KV_F32);
    std::vector<int32_t> ids = ref["runc_greedy_from_bos"]["generated_ids"].ints();
    std::vector<int32_t> fed = {1};
    fed.insert(fed.end(), ids.begin(), ids.end() - 1);
    std::vector<std::vector<float>> got = decode_each(s, fed, vocab(m));
    int matched = 0;
    for (size_t k = 0; k < ids.size(); ++k)
        matched += argmax_of(got[k]) == ids[k];
    double worst = 0;
    for (const Json &p : ref["runc_logits"]["positions"].arr) {
        std::vector<float> want;
        for (const Json &x : p["logits"].arr)
            want.push_back(float(x.num));
        worst = std::max(worst, max_abs_diff(got[size_t(p["pos"].num)], want));
    }
    std::printf("stories260K: %d/%zu greedy ids as run.c, max logit error %.3g\n", matched,
                ids.size(), worst);
    EXPECT_EQ(matched, int(ids.size()));
    EXPECT_LE(worst, 1e-3);
}

TEST_F(SharedReference, Llama2TinyRandomMatchesLlamaCppDistribution) {
    Json ref = Json::load(dir_ + "/models/reference-llama-2-tiny-random.json");
    vkllm_model *m = load(dir_ + "/models/llama-2-tiny-random.gguf");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 64);
    std::vector<int32_t> prompt = ref["prompt_ids"].ints();
    // Our tokenizer gives the same prompt ids from the text.
    std::string text = ref["prompt_text"].str;
    std::vector<int32_t> ids(64);
    size_t n = 0;
    ASSERT_EQ(vkllm_tokenizer_encode(vkllm_model_get_tokenizer(m), text.data(), text.size(),
                                     VKLLM_TOKENIZE_ADD_SPECIAL, ids.data(), ids.size(), &n),
              VKLLM_OK);
    ids.resize(n);
    EXPECT_EQ(ids, prompt);
    std::vector<std::vector<float>> got = decode_each(s, prompt, vocab(m));
    double worst_rel = 0;
    const auto &positions = ref["top10_probabilities_per_position"].arr;
    for (size_t i = 0; i < positions.size(); ++i) {
        const std::vector<float> &l = got[i];
        double mx = *std::max_element(l.begin(), l.end()), sum = 0;
        for (float v : l)
            sum += std::exp(double(v) - mx);
        for (const Json &pair : positions[i].arr) {
            double p = std::exp(double(l[size_t(pair.arr[0].num)]) - mx) / sum;
            worst_rel = std::max(worst_rel, std::fabs(p - pair.arr[1].num) / pair.arr[1].num);
        }
    }
    std::printf("llama-2-tiny-random: worst relative probability difference %.3g\n", worst_rel);
    EXPECT_LE(worst_rel, 0.03) << "llama.cpp rounds activations to F16; a few per cent allowed";
}
