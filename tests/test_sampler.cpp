// The sampler object through the C API, on crafted logits (no device): each stage of the chain
// keeps exactly the candidates a straightforward computation keeps, draws follow the expected
// probabilities, penalties and logit bias move logits as specified, seeds reproduce, and bad
// parameters are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "reference/tiny_model.h"
#include "vkllm.h"

namespace {

vkllm_sampling_params params() {
    vkllm_sampling_params p;
    vkllm_sampling_params_init(&p);
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = 1234;
    return p;
}

struct Sampler {
    vkllm_sampler *s = nullptr;
    explicit Sampler(const vkllm_sampling_params &p, const vkllm_tokenizer *tok = nullptr) {
        EXPECT_EQ(vkllm_sampler_create(tok, &p, &s), VKLLM_OK) << vkllm_last_error();
    }
    ~Sampler() { vkllm_sampler_destroy(s); }
    int32_t sample(const std::vector<float> &logits) {
        int32_t t = -1;
        EXPECT_EQ(vkllm_sampler_sample(s, logits.data(), logits.size(), &t), VKLLM_OK)
            << vkllm_last_error();
        return t;
    }
};

// Logits whose softmax is `p`.
std::vector<float> logits_of(const std::vector<double> &p) {
    std::vector<float> l;
    for (double v : p)
        l.push_back(float(std::log(v)));
    return l;
}

// Empirical frequency of each token over `n` draws of one sampler.
std::vector<double> frequencies(const vkllm_sampling_params &p, const std::vector<float> &logits,
                                int n) {
    Sampler s(p);
    std::vector<double> f(logits.size(), 0.0);
    for (int i = 0; i < n; ++i) {
        int32_t t = s.sample(logits);
        if (t < 0 || size_t(t) >= f.size()) {
            ADD_FAILURE() << "token " << t << " is not a candidate";
            continue;
        }
        f[size_t(t)] += 1.0 / n;
    }
    return f;
}

// The probability of each token after a filter kept `kept` (renormalised) at temperature T, as
// one would write it by hand: softmax(logit / T) over the kept tokens.
std::vector<double> expected(const std::vector<float> &logits, const std::set<int> &kept,
                             double temperature = 1.0) {
    std::vector<double> p(logits.size(), 0.0);
    double sum = 0;
    for (int t : kept)
        sum += p[size_t(t)] = std::exp(double(logits[size_t(t)]) / temperature);
    for (double &v : p)
        v /= sum;
    return p;
}

std::set<int> support(const std::vector<double> &f) {
    std::set<int> s;
    for (size_t i = 0; i < f.size(); ++i)
        if (f[i] > 0) s.insert(int(i));
    return s;
}

// 20000 draws: a frequency's standard deviation is at most 0.0035; 0.02 is over five of them.
constexpr int kDraws = 20000;
constexpr double kTolerance = 0.02;

void expect_distribution(const vkllm_sampling_params &p, const std::vector<float> &logits,
                         const std::set<int> &kept, double temperature, const char *what) {
    std::vector<double> f = frequencies(p, logits, kDraws);
    EXPECT_EQ(support(f), kept) << what << ": the tokens drawn are not the expected candidates";
    std::vector<double> want = expected(logits, kept, temperature);
    for (size_t i = 0; i < f.size(); ++i)
        EXPECT_NEAR(f[i], want[i], kTolerance) << what << ": token " << i;
}

// A distribution whose stages disagree: probabilities 0.4, 0.3, 0.15, 0.1, 0.05, entropy 1.392
// nats, so the surprise -log p is closest to the entropy for token 1, then 0, 2, 3, 4.
const std::vector<double> kProbs = {0.4, 0.3, 0.15, 0.1, 0.05};

}  // namespace

TEST(Sampler, NoFilterDrawsTokensWithTheirSoftmaxProbabilities) {
    std::vector<float> l = logits_of(kProbs);
    expect_distribution(params(), l, {0, 1, 2, 3, 4}, 1.0, "temperature 1");
}

TEST(Sampler, TopKKeepsTheKHighestLogits) {
    vkllm_sampling_params p = params();
    p.top_k = 2;
    expect_distribution(p, logits_of(kProbs), {0, 1}, 1.0, "top_k 2");
    p.top_k = -1;  // off, as 0
    expect_distribution(p, logits_of(kProbs), {0, 1, 2, 3, 4}, 1.0, "top_k -1");
}

TEST(Sampler, TopPKeepsTheFewestMostLikelyTokensReachingP) {
    vkllm_sampling_params p = params();
    p.top_p = 0.75f;  // 0.4 + 0.3 < 0.75 <= 0.4 + 0.3 + 0.15
    expect_distribution(p, logits_of(kProbs), {0, 1, 2}, 1.0, "top_p 0.75");
    p.top_p = 0.35f;
    expect_distribution(p, logits_of(kProbs), {0}, 1.0, "top_p 0.35");
}

TEST(Sampler, MinPKeepsTokensAtLeastPTimesTheMostLikely) {
    vkllm_sampling_params p = params();
    p.min_p = 0.3f;  // p >= 0.12
    expect_distribution(p, logits_of(kProbs), {0, 1, 2}, 1.0, "min_p 0.3");
    p.min_p = 0.2f;  // p >= 0.08
    expect_distribution(p, logits_of(kProbs), {0, 1, 2, 3}, 1.0, "min_p 0.2");
}

TEST(Sampler, TypicalKeepsTheTokensWhoseSurpriseIsClosestToTheEntropy) {
    // By hand: entropy H = -sum p ln p; |-ln p - H| orders the tokens 1, 0, 2, 3, 4; the kept
    // set is the shortest prefix of that order whose mass exceeds typical_p.
    double h = 0;
    for (double v : kProbs)
        h -= v * std::log(v);
    EXPECT_NEAR(h, 1.3923, 1e-4);
    vkllm_sampling_params p = params();
    p.typical_p = 0.25f;  // token 1 alone (0.3): not the most likely one
    expect_distribution(p, logits_of(kProbs), {1}, 1.0, "typical 0.25");
    p.typical_p = 0.5f;  // 0.3 + 0.4
    expect_distribution(p, logits_of(kProbs), {0, 1}, 1.0, "typical 0.5");
    p.typical_p = 0.8f;  // 0.3 + 0.4 + 0.15
    expect_distribution(p, logits_of(kProbs), {0, 1, 2}, 1.0, "typical 0.8");
}

TEST(Sampler, TemperatureComesAfterTheFiltersAsInLlamaCpp) {
    // min_p at temperature 1 keeps {0, 1, 2}; a temperature of 3 then flattens only those. Were
    // the temperature first, min_p 0.3 would also keep tokens 3 and 4 ((0.1 / 0.4)^(1/3) = 0.63,
    // (0.05 / 0.4)^(1/3) = 0.5).
    vkllm_sampling_params p = params();
    p.min_p = 0.3f;
    p.temperature = 3.0f;
    expect_distribution(p, logits_of(kProbs), {0, 1, 2}, 3.0, "min_p 0.3, temperature 3");
    p.min_p = 0.0f;
    p.temperature = 0.5f;
    expect_distribution(p, logits_of(kProbs), {0, 1, 2, 3, 4}, 0.5, "temperature 0.5");
}

TEST(Sampler, ChainAppliesTopKThenTypicalThenTopPThenMinP) {
    // Ten tokens; top-k 4 leaves 0.4, 0.3, 0.15, 0.1 (renormalised 0.421, 0.316, 0.158,
    // 0.105); top-p 0.7 then keeps 0 and 1 (0.737 >= 0.7).
    std::vector<double> probs = {0.4, 0.3, 0.15, 0.1, 0.01, 0.01, 0.01, 0.01, 0.01, 0.0};
    probs.back() = 1.0 - std::accumulate(probs.begin(), probs.end() - 1, 0.0);
    vkllm_sampling_params p = params();
    p.top_k = 4;
    p.top_p = 0.7f;
    expect_distribution(p, logits_of(probs), {0, 1}, 1.0, "top_k 4, top_p 0.7");
}

TEST(Sampler, GreedyTakesTheHighestLogitAfterBiasAndPenalties) {
    std::vector<float> l = {2.0f, 1.9f, 1.0f, -1.0f, -1.05f};
    auto greedy = [&](vkllm_sampling_params p, const std::vector<int32_t> &history) {
        p.temperature = 0.0f;
        Sampler s(p);
        for (int32_t t : history)
            EXPECT_EQ(vkllm_sampler_accept(s.s, t), VKLLM_OK);
        return s.sample(l);
    };
    vkllm_sampling_params p = params();
    EXPECT_EQ(greedy(p, {0, 0}), 0) << "no penalty";
    p.frequency_penalty = 0.1f;  // 2.0 - 2 * 0.1 = 1.8 < 1.9
    EXPECT_EQ(greedy(p, {0, 0}), 1);
    p.frequency_penalty = 0.04f;  // 2.0 - 2 * 0.04 = 1.92 > 1.9
    EXPECT_EQ(greedy(p, {0, 0}), 0);
    p.frequency_penalty = 0.0f;
    p.presence_penalty = 0.15f;  // 1.85
    EXPECT_EQ(greedy(p, {0}), 1);
    p.presence_penalty = 0.06f;  // once however often: 1.94 with three occurrences
    EXPECT_EQ(greedy(p, {0, 0, 0}), 0);
    p.presence_penalty = 0.0f;
    p.repeat_penalty = 1.1f;  // a positive logit divided: 1.818 < 1.9
    EXPECT_EQ(greedy(p, {0}), 1);
    p.repeat_penalty = 1.01f;  // 1.98, once per distinct token however often it occurs
    EXPECT_EQ(greedy(p, {0, 0, 0, 0, 0, 0, 0, 0}), 0);
    p.repeat_last_n = 2;  // token 0 has left the window
    p.repeat_penalty = 1.1f;
    EXPECT_EQ(greedy(p, {0, 2, 3}), 0);
    p.repeat_last_n = 0;  // penalties off
    EXPECT_EQ(greedy(p, {0}), 0);
    p.repeat_last_n = -1;  // the whole history: token 0, then 74 others, 64 being the default
    std::vector<int32_t> history(75, 2);
    history[0] = 0;
    EXPECT_EQ(greedy(p, history), 1);
    // A negative logit is multiplied: -1.0 * 1.1 = -1.1 < -1.05.
    std::vector<float> negative = {-1.0f, -1.05f};
    vkllm_sampling_params q = params();
    q.temperature = 0.0f;
    q.repeat_penalty = 1.1f;
    Sampler s(q);
    ASSERT_EQ(vkllm_sampler_accept(s.s, 0), VKLLM_OK);
    EXPECT_EQ(s.sample(negative), 1);
    // Bias: +2 lifts token 2 above the others.
    vkllm_logit_bias lift = {2, 2.0f};
    vkllm_sampling_params b = params();
    b.logit_bias = &lift;
    b.n_logit_bias = 1;
    EXPECT_EQ(greedy(b, {}), 2);
}

TEST(Sampler, PenaltiesShiftTheDistributionByTheirFormula) {
    // frequency 0.5 on token 0 seen twice and presence 0.3: logit 0 loses 1.3.
    std::vector<float> l = logits_of(kProbs);
    vkllm_sampling_params p = params();
    p.frequency_penalty = 0.5f;
    p.presence_penalty = 0.3f;
    Sampler s(p);
    ASSERT_EQ(vkllm_sampler_accept(s.s, 0), VKLLM_OK);
    ASSERT_EQ(vkllm_sampler_accept(s.s, 0), VKLLM_OK);
    std::vector<double> f(l.size(), 0.0);
    for (int i = 0; i < kDraws; ++i)
        f[size_t(s.sample(l))] += 1.0 / kDraws;
    std::vector<float> shifted = l;
    shifted[0] -= 1.3f;
    std::vector<double> want = expected(shifted, {0, 1, 2, 3, 4});
    for (size_t i = 0; i < f.size(); ++i)
        EXPECT_NEAR(f[i], want[i], kTolerance) << "token " << i;
}

TEST(Sampler, LogitBiasOfMinusInfinityBansATokenAndBanningAllIsAnError) {
    std::vector<float> l = logits_of(kProbs);
    vkllm_logit_bias ban[] = {{0, -INFINITY}, {3, -INFINITY}};
    vkllm_sampling_params p = params();
    p.logit_bias = ban;
    p.n_logit_bias = 2;
    expect_distribution(p, l, {1, 2, 4}, 1.0, "tokens 0 and 3 banned");
    p.temperature = 0.0f;
    EXPECT_EQ(Sampler(p).sample(l), 1) << "greedy skips the banned token";

    vkllm_logit_bias all[] = {
        {0, -INFINITY}, {1, -INFINITY}, {2, -INFINITY}, {3, -INFINITY}, {4, -INFINITY}};
    vkllm_sampling_params q = params();
    q.logit_bias = all;
    q.n_logit_bias = 5;
    Sampler s(q);
    int32_t t = 77;
    EXPECT_EQ(vkllm_sampler_sample(s.s, l.data(), l.size(), &t), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("bans every token"), std::string::npos);
    EXPECT_EQ(t, 77) << "a failed call writes nothing";
    q.temperature = 0.0f;
    Sampler g(q);
    EXPECT_EQ(vkllm_sampler_sample(g.s, l.data(), l.size(), &t), VKLLM_ERR_INVALID_ARGUMENT)
        << "greedy too: no banned token is the highest";
    EXPECT_EQ(t, 77);
}

TEST(Sampler, TheSameSeedReproducesAndAnotherDiffers) {
    std::vector<float> l(64);
    for (size_t i = 0; i < l.size(); ++i)
        l[i] = float(std::sin(double(i))) * 2.0f;
    auto draws = [&](uint64_t seed) {
        vkllm_sampling_params p = params();
        p.seed = seed;
        Sampler s(p);
        std::vector<int32_t> out;
        for (int i = 0; i < 100; ++i)
            out.push_back(s.sample(l));
        // reset: the same draws again.
        EXPECT_EQ(vkllm_sampler_reset(s.s), VKLLM_OK);
        for (int i = 0; i < 100; ++i)
            EXPECT_EQ(s.sample(l), out[size_t(i)]) << "draw " << i << " after reset";
        return out;
    };
    EXPECT_EQ(draws(7), draws(7));
    EXPECT_NE(draws(7), draws(8));
    // A fixed seed is the seed reported.
    vkllm_sampling_params p = params();
    p.seed = 99;
    Sampler s(p);
    uint64_t seed = 0;
    ASSERT_EQ(vkllm_sampler_get_seed(s.s, &seed), VKLLM_OK);
    EXPECT_EQ(seed, 99u);
}

TEST(Sampler, RandomSeedIsReadOnceAndReportedAndDiffersBetweenSamplers) {
    vkllm_sampling_params p = params();
    p.seed = VKLLM_SEED_RANDOM;
    Sampler a(p), b(p);
    uint64_t sa = 0, sb = 0;
    ASSERT_EQ(vkllm_sampler_get_seed(a.s, &sa), VKLLM_OK);
    ASSERT_EQ(vkllm_sampler_get_seed(b.s, &sb), VKLLM_OK);
    EXPECT_NE(sa, VKLLM_SEED_RANDOM);
    EXPECT_NE(sa, sb) << "two random seeds agree (chance 2^-64)";
    // The reported seed reproduces the random sampler's draws.
    std::vector<float> l(32);
    for (size_t i = 0; i < l.size(); ++i)
        l[i] = float(i % 7);
    vkllm_sampling_params fixed = params();
    fixed.seed = sa;
    Sampler again(fixed);
    for (int i = 0; i < 50; ++i)
        EXPECT_EQ(a.sample(l), again.sample(l));
}

TEST(Sampler, OutOfRangeParamsAndNullArgumentsAreRefusedByName) {
    vkllm_sampler *s = nullptr;
    auto refused = [&](vkllm_sampling_params p, const char *field) {
        s = reinterpret_cast<vkllm_sampler *>(1);
        EXPECT_EQ(vkllm_sampler_create(nullptr, &p, &s), VKLLM_ERR_INVALID_ARGUMENT) << field;
        EXPECT_NE(std::string(vkllm_last_error()).find(field), std::string::npos)
            << vkllm_last_error();
        EXPECT_EQ(s, reinterpret_cast<vkllm_sampler *>(1)) << "out is untouched";
    };
    vkllm_sampling_params p = params();
    p.top_k = -2;
    refused(p, "top_k");
    p = params();
    p.temperature = NAN;
    refused(p, "temperature");
    p = params();
    p.top_p = NAN;
    refused(p, "top_p");
    p = params();
    p.min_p = 1.5f;
    refused(p, "min_p");
    p = params();
    p.typical_p = NAN;
    refused(p, "typical_p");
    p = params();
    p.repeat_penalty = 0.0f;
    refused(p, "repeat_penalty");
    p = params();
    p.repeat_last_n = -2;
    refused(p, "repeat_last_n");
    p = params();
    p.presence_penalty = INFINITY;
    refused(p, "presence_penalty");
    p = params();
    p.frequency_penalty = NAN;
    refused(p, "frequency_penalty");
    vkllm_logit_bias plus_inf = {1, INFINITY};
    p = params();
    p.logit_bias = &plus_inf;
    p.n_logit_bias = 1;
    refused(p, "logit_bias[0]");
    p = params();
    p.n_logit_bias = 1;  // and no array
    refused(p, "logit_bias");
    p = params();
    p.struct_size = 3;
    refused(p, "struct_size");

    EXPECT_EQ(vkllm_sampler_create(nullptr, nullptr, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_sampling_params ok = params();
    Sampler good(ok);
    float logits[2] = {0, 1};
    int32_t t = 0;
    uint64_t seed = 0;
    EXPECT_EQ(vkllm_sampler_sample(nullptr, logits, 2, &t), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_sample(good.s, nullptr, 2, &t), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_sample(good.s, logits, 2, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_sample(good.s, logits, 0, &t), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_accept(nullptr, 0), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_reset(nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_get_seed(nullptr, &seed), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_get_seed(good.s, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_sampler_destroy(nullptr);

    // A params struct from before the penalties were appended: they keep their defaults.
    vkllm_sampling_params old = params();
    old.struct_size = offsetof(vkllm_sampling_params, presence_penalty);
    old.presence_penalty = NAN;  // past its struct_size: never read
    Sampler from_old(old);
    EXPECT_NE(from_old.s, nullptr);
}

// Only the tokenizer's ids are candidates: the rows a padded embedding has past them never are,
// and a row shorter than the vocabulary is refused.
TEST(Sampler, WithATokenizerOnlyItsIdsAreCandidates) {
    std::string path = ::testing::TempDir() + "sampler_vocab_" + std::to_string(getpid()) + ".gguf";
    TinyModelSpec spec;
    write_tiny_model(path, spec);
    vkllm_gguf *g = nullptr;
    ASSERT_EQ(vkllm_gguf_open(path.c_str(), &g), VKLLM_OK) << vkllm_last_error();
    vkllm_tokenizer *tok = nullptr;
    ASSERT_EQ(vkllm_tokenizer_create(g, &tok), VKLLM_OK) << vkllm_last_error();
    vkllm_gguf_destroy(g);
    std::remove(path.c_str());
    vkllm_tokenizer_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_tokenizer_get_info(tok, &info), VKLLM_OK);
    const size_t n = info.n_vocab;
    std::vector<float> row(n + 16, 0.0f);
    for (size_t i = n; i < row.size(); ++i)
        row[i] = 50.0f;  // padding rows with the highest logits
    for (float temperature : {0.0f, 1.0f}) {
        vkllm_sampling_params p = params();
        p.temperature = temperature;
        Sampler s(p, tok);
        for (int i = 0; i < 200; ++i) {
            int32_t t = s.sample(row);
            EXPECT_GE(t, 0);
            EXPECT_LT(size_t(t), n) << "a padded row was chosen at temperature " << temperature;
        }
        int32_t t = 0;
        EXPECT_EQ(vkllm_sampler_sample(s.s, row.data(), n - 1, &t), VKLLM_ERR_INVALID_ARGUMENT);
    }
    vkllm_logit_bias outside = {int32_t(n), 1.0f};
    vkllm_sampling_params p = params();
    p.logit_bias = &outside;
    p.n_logit_bias = 1;
    vkllm_sampler *s = nullptr;
    EXPECT_EQ(vkllm_sampler_create(tok, &p, &s), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_tokenizer_destroy(tok);
}
