// The tiny model of every architecture (reference/tiny_archs.h) generates what llama.cpp
// generates from it: greedy ids from prompts of 1, 7 and 30 ids against
// tests/data/llamacpp_greedy_tiny.json (tools/llamacpp_reference/tiny_greedy.mjs; the command is
// in the file's "generated_by"). The files are F32, so the two differ only by summation order
// and llama.cpp's F16 KV cache (vkllm's default too). Where vkllm's choice differs, the step
// must be a near-tie in llama.cpp's own distribution and the float64 reference must pick
// vkllm's token. As in test_real_model_generation.cpp, vkllm is fed llama.cpp's tokens, so
// every step is adjudicated.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <ostream>

#include "json.h"
#include "reference/tiny_archs.h"
#include "tiny_model_fixture.h"

namespace {

// F32 weights: the logit gaps move only by rounding (the F16 cache's above all), far less than
// the 8-bit activations of the real models' quantized products move them.
constexpr double kNearTieLogRatio = 0.05;

uint64_t fnv1a64(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    uint64_t h = 0xcbf29ce484222325ull;
    for (std::istreambuf_iterator<char> it(in), end; it != end; ++it)
        h = (h ^ uint8_t(*it)) * 0x100000001b3ull;
    return h;
}

double log_ratio(const Json &top5, int32_t a, int32_t b) {
    double pa = 0, pb = 0;
    for (const Json &e : top5.arr) {
        int32_t id = int32_t(e.arr[0].num);
        if (id == a) pa = e.arr[1].num;
        if (id == b) pb = e.arr[1].num;
    }
    return pb > 0 ? std::log(pa / pb) : INFINITY;
}

const Json &reference() {
    static const Json ref =
        Json::load(std::string(VKLLM_TEST_DATA_DIR) + "/llamacpp_greedy_tiny.json");
    return ref;
}

class TinyArchAgainstLlamaCpp : public TinyModelTest,
                                public ::testing::WithParamInterface<TinyArch> {};

}  // namespace

// gtest names the parameter in test listings by this (else by its bytes).
void PrintTo(const TinyArch &arch, std::ostream *os) {
    *os << arch.name;
}

TEST_P(TinyArchAgainstLlamaCpp, GreedyIdsMatchLlamaCppOrSideWithFloat64AtNearTies) {
    const TinyArch &arch = GetParam();
    const Json *entry = nullptr;
    for (const Json &m : reference()["models"].arr)
        if (m["name"].str == arch.name) entry = &m;
    ASSERT_NE(entry, nullptr) << arch.name << " has no llama.cpp reference: regenerate "
                              << "tests/data/llamacpp_greedy_tiny.json ("
                              << reference()["generated_by"].str << ")";
    std::string path = temp_path(arch.name);
    write_tiny_model(path, arch.spec);
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)fnv1a64(path));
    ASSERT_EQ(std::string(hash), (*entry)["fnv1a64"].str)
        << "the tiny " << arch.name << " model changed since llama.cpp's reference was made: "
        << "regenerate it (" << reference()["generated_by"].str << ")";
    reference_ = ref::load_model_ref(path);
    vkllm_model *m = load(path);
    ASSERT_NE(m, nullptr);
    uint32_t n_vocab = vocab(m);
    vkllm_session *s = session(m, 128);
    ASSERT_NE(s, nullptr);
    size_t steps = 0, matched = 0;
    for (const Json &p : (*entry)["prompts"].arr) {
        std::vector<int32_t> prompt = p["prompt_ids"].ints();
        std::vector<int32_t> gen = p["generated_ids"].ints();
        ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        std::vector<float> logits(n_vocab);
        ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), logits.data()), VKLLM_OK)
            << vkllm_last_error();
        std::vector<int32_t> seq = prompt;
        for (size_t k = 0; k < gen.size(); ++k) {
            if (k > 0) {
                uint32_t id = 0;
                ASSERT_EQ(vkllm_session_decode(s, &id, &gen[k - 1], 1, logits.data()), VKLLM_OK)
                    << vkllm_last_error();
                seq.push_back(gen[k - 1]);
            }
            ++steps;
            int32_t ours = argmax_of(logits);
            if (ours == gen[k]) {
                ++matched;
                continue;
            }
            double gap = log_ratio(p["top5"].arr[k], gen[k], ours);
            std::vector<double> f64 = ref::forward_logits_f64(*reference_, seq).back();
            int32_t exact = int32_t(std::max_element(f64.begin(), f64.end()) - f64.begin());
            std::printf(
                "  %s, prompt of %zu, step %zu: llama.cpp %d, vkllm %d, "
                "ln(p_llama/p_vkllm) %.4f, float64 %d\n",
                arch.name.c_str(), prompt.size(), k, gen[k], ours, gap, exact);
            EXPECT_LE(gap, kNearTieLogRatio) << "step " << k << ": not a near-tie";
            EXPECT_EQ(exact, ours) << "step " << k << ": the float64 pass sides with llama.cpp";
        }
    }
    std::printf("%s: %zu/%zu greedy steps equal llama.cpp's\n", arch.name.c_str(), matched, steps);
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, TinyArchAgainstLlamaCpp,
                         ::testing::ValuesIn(tiny_archs()),
                         [](const ::testing::TestParamInfo<TinyArch> &i) {
                             std::string n = i.param.name;
                             for (char &c : n)
                                 if (!std::isalnum(uint8_t(c))) c = '_';
                             return n;
                         });
