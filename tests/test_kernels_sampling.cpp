// The device sampling kernel (shaders/argmax/sample.comp) against the double-precision chain of
// reference/sampling_ref.h: with the same uniform number (Philox-4x32-10, checked against
// Random123's vectors) each draw must be the token the reference's cumulative distribution
// gives, walking it in id order as both samplers do,
// for every option alone and together, within 1e-5 of its share (float sums against double).
// Then: chained and unchained runs draw the same tokens; 10^5 draws pass a chi-square test
// against the reference's probabilities; the engine's packing refuses what check_sampling
// refuses, and keeps on the host what the kernel cannot sort.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "argmax/sample.h"
#include "common/error.h"
#include "engine/device_sampling.h"
#include "engine/philox.h"
#include "gpu_fixture.h"
#include "reference/cpu_ops.h"
#include "reference/sampling_ref.h"

using namespace vkllm::gpu;
using vkllm::engine::add_sampling_row;
using vkllm::engine::DeviceSamplingRows;
using vkllm::engine::kDeviceSamplingHistory;
using vkllm::engine::SamplingOptions;

namespace {

// Everything off but the temperature: each test turns on what it checks.
SamplingOptions plain(float temperature) {
    SamplingOptions o;
    o.temperature = temperature;
    o.top_k = 0;
    o.top_p = 1.0f;
    o.min_p = 0.0f;
    return o;
}

struct RowState {
    std::vector<int32_t> history;  // oldest first
    uint32_t draws = 0;
};

// Whether `token` is the one the reference's distribution gives for uniform u, walking it in id
// order: u lies in its share of the cumulative distribution, within `margin` (float
// sums on the device against double here).
bool draws_token(std::vector<ref::Candidate> c, double u, int32_t token, double margin) {
    std::sort(c.begin(), c.end(), [](auto &a, auto &b) { return a.id < b.id; });
    double acc = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        double start = acc;
        acc += c[i].p;
        if (c[i].id != token) continue;
        bool last = i + 1 == c.size();
        return u >= start - margin && (u < acc + margin || last);
    }
    return false;
}

class SamplingKernel : public GpuTest {
  protected:
    // One sampling dispatch per entry of `xs` (each [rows][cols], n candidates), all rows with
    // options `o` and seed `seed`, row r drawing in stream r; `per_submit` dispatches recorded
    // into each submission; `gpu_shapes`: the GPUs' workgroup of the kernel, whatever the device.
    // Returns the tokens, [step][row]; `state` goes on as the kernel's.
    std::vector<int32_t> sample(const std::vector<std::vector<float>> &xs, uint32_t rows,
                                uint32_t cols, uint32_t n, const SamplingOptions &o, uint64_t seed,
                                std::vector<RowState> &state, uint32_t per_submit = 1,
                                bool gpu_shapes = false) {
        Kernels &k = shapes(gpu_shapes);
        const uint32_t cap = kDeviceSamplingHistory;
        DeviceSamplingRows packed;
        for (uint32_t r = 0; r < rows; ++r)
            add_sampling_row(packed, o, seed, r, n);
        std::vector<int32_t> hist(size_t(rows) * cap, -1);
        std::vector<uint32_t> st(2 * rows);
        for (uint32_t r = 0; r < rows; ++r) {
            const RowState &s = state[r];
            for (size_t j = 0; j < s.history.size(); ++j)
                hist[size_t(r) * cap + j % cap] = s.history[j];
            st[2 * r] = uint32_t(s.history.size());
            st[2 * r + 1] = s.draws;
        }
        Buffer ob = upload(packed.options), bb = upload(packed.bias), hb = upload(hist),
               sb = upload(st);
        std::vector<Buffer> xb, ib;
        for (const std::vector<float> &x : xs) {
            xb.push_back(upload(x));
            ib.push_back(floats(rows));
        }
        for (size_t s0 = 0; s0 < xs.size(); s0 += per_submit)
            run([&](Recording &rec) {
                for (size_t s = s0; s < std::min(xs.size(), s0 + per_submit); ++s)
                    k.sample(rec, xb[s].range(),
                             {ob.range(), bb.range(), hb.range(), sb.range(), ib[s].range()}, rows,
                             cols, n, cap);
            });
        std::vector<int32_t> out(xs.size() * rows);
        for (size_t s = 0; s < xs.size(); ++s)
            ctx_->transfer().download(ib[s], &out[s * rows], rows * 4);
        std::vector<int32_t> hist_after(hist.size());
        ctx_->transfer().download(hb, hist_after.data(), hist_after.size() * 4);
        ctx_->transfer().download(sb, st.data(), st.size() * 4);
        for (uint32_t r = 0; r < rows; ++r) {
            RowState &s = state[r];
            for (size_t k = 0; k < xs.size(); ++k)
                s.history.push_back(out[k * rows + r]);
            s.draws += uint32_t(xs.size());
            EXPECT_EQ(st[2 * r], s.history.size()) << "row " << r;
            EXPECT_EQ(st[2 * r + 1], s.draws) << "row " << r;
            for (size_t j = s.history.size() - xs.size(); j < s.history.size(); ++j)
                EXPECT_EQ(hist_after[size_t(r) * cap + j % cap], s.history[j]) << "row " << r;
        }
        return out;
    }

    // The kernels of the lavapipe or the GPU class, on this device.
    Kernels &shapes(bool gpu) {
        for (Kernels *k : variants())
            if (k->cpu_shapes() != gpu) return *k;
        return kernels();
    }

    // One draw per row of x against the reference, with both device classes' shapes; row r
    // starts from state[r].
    void check_draws(const std::vector<float> &x, uint32_t rows, uint32_t cols, uint32_t n,
                     const SamplingOptions &o, const std::vector<RowState> &before,
                     const char *what) {
        for (bool gpu : {false, true})
            check_draws(x, rows, cols, n, o, before, gpu, what);
    }
    void check_draws(const std::vector<float> &x, uint32_t rows, uint32_t cols, uint32_t n,
                     const SamplingOptions &o, const std::vector<RowState> &before, bool gpu,
                     const char *what) {
        SCOPED_TRACE(gpu ? "GPU shapes" : "lavapipe shapes");
        uint64_t seed = 0x9e3779b97f4a7c15ull;
        std::vector<RowState> state = before;
        std::vector<int32_t> got = sample({x}, rows, cols, n, o, seed, state, 1, gpu);
        for (uint32_t r = 0; r < rows; ++r) {
            std::vector<int32_t> window = before[r].history;
            size_t last = o.repeat_last_n < 0 ? window.size() : size_t(o.repeat_last_n);
            bool penalties = o.repeat_penalty != 1.0f || o.presence_penalty != 0.0f ||
                             o.frequency_penalty != 0.0f;
            if (!penalties) last = 0;
            window.erase(window.begin(), window.end() - long(std::min(last, window.size())));
            std::vector<ref::Candidate> c = ref::sampling_chain(&x[size_t(r) * cols], n, o, window);
            double u = ref::sample_uniform(seed, r, before[r].draws);
            EXPECT_TRUE(draws_token(c, u, got[r], 1e-5))
                << what << ", row " << r << ": token " << got[r] << " for u " << u << " among "
                << c.size() << " candidates";
        }
    }
};

// Rows of logits spread like a model's (a few large, most far below), with histories that
// repeat tokens, some of them the rows' likeliest.
struct Fixture {
    uint32_t rows = 48, cols = 3000, n = 2990;  // the last columns (padding) are never chosen
    std::vector<float> x;
    std::vector<RowState> state;
    Fixture() {
        x = ref::random(size_t(rows) * cols, 91, -4.0f, 4.0f);
        for (float &v : x)
            v = v * std::fabs(v);  // heavier top
        for (uint32_t r = 0; r < rows; ++r)
            for (uint32_t c = n; c < cols; ++c)
                x[size_t(r) * cols + c] = 1000.0f;
        state.resize(rows);
        for (uint32_t r = 0; r < rows; ++r) {
            for (uint32_t j = 0; j < 3 * r; ++j)
                state[r].history.push_back(int32_t((j * 7 + r) % (j % 3 == 0 ? 20 : n)));
            state[r].draws = 11 * r;
        }
    }
};

struct Case {
    const char *what;
    SamplingOptions o;
};

// Each option alone, then the host's defaults and everything together.
std::vector<Case> option_cases() {
    std::vector<Case> cases;
    cases.push_back({"temperature 1 over the whole vocabulary", plain(1.0f)});
    cases.push_back({"temperature 0.3", plain(0.3f)});
    SamplingOptions o = plain(1.0f);
    o.top_k = 40;
    cases.push_back({"top_k 40", o});
    o.top_k = 512;
    cases.push_back({"top_k 512 (the most the kernel sorts)", o});
    o.top_k = 1;
    cases.push_back({"top_k 1", o});
    o = plain(1.0f);
    o.min_p = 0.05f;
    cases.push_back({"min_p 0.05 with top_k off", o});
    o.top_k = 300;
    cases.push_back({"min_p 0.05 within top_k 300", o});
    o = plain(1.0f);
    o.top_k = 500;
    o.top_p = 0.7f;
    cases.push_back({"top_p 0.7 within top_k 500", o});
    o.top_p = 0.0f;
    cases.push_back({"top_p 0 (the best alone)", o});
    o = plain(1.0f);
    o.top_k = 500;
    o.typical_p = 0.6f;
    cases.push_back({"typical 0.6 within top_k 500", o});
    o = plain(0.8f);
    o.logit_bias = {{5, 12.0f}, {6, -INFINITY}, {7, 3.0f}, {5, -2.0f}, {2000, 9.0f}};
    cases.push_back({"logit bias, a token twice, a ban", o});
    o = plain(1.0f);
    o.repeat_penalty = 1.8f;
    o.repeat_last_n = 16;
    cases.push_back({"repetition penalty, window 16", o});
    o = plain(1.0f);
    o.presence_penalty = 1.5f;
    o.frequency_penalty = 0.7f;
    o.repeat_last_n = 64;
    cases.push_back({"presence and frequency penalties, window 64", o});
    o = SamplingOptions{};  // the defaults: top_k 40, top_p 0.95, min_p 0.05
    o.temperature = 0.8f;
    cases.push_back({"the default chain", o});
    o.typical_p = 0.9f;
    o.repeat_penalty = 1.3f;
    o.presence_penalty = 0.4f;
    o.frequency_penalty = 0.2f;
    o.repeat_last_n = 64;
    o.logit_bias = {{3, 4.0f}, {9, -INFINITY}, {40, 1.5f}};
    cases.push_back({"every option", o});
    o.top_k = 0;
    o.typical_p = 1.0f;
    o.top_p = 1.0f;
    o.min_p = 0.02f;
    cases.push_back({"top_k off with penalties and bias", o});
    o.temperature = 0.0f;
    cases.push_back({"greedy after penalties and bias", o});
    return cases;
}

}  // namespace

TEST(SamplingReference, PhiloxMatchesRandom123sVectorsAndTheHostsGenerator) {
    EXPECT_EQ(ref::philox4x32_10({0, 0, 0, 0}, {0, 0}),
              (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
    EXPECT_EQ(ref::philox4x32_10({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
              (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
    EXPECT_EQ(ref::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                                 {0xa4093822, 0x299f31d0}),
              (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
    // The host sampler's generator (engine/philox.h) is the same.
    for (uint64_t seed : {0ull, 42ull, 0x9e3779b97f4a7c15ull})
        for (uint32_t draw : {0u, 1u, 77u, 4000000000u})
            EXPECT_EQ(vkllm::engine::philox_uniform(seed, draw % 3, draw),
                      ref::sample_uniform(seed, draw % 3, draw));
}

TEST_F(SamplingKernel, EachOptionAloneAndTogetherDrawsTheHostChainsToken) {
    Fixture f;
    for (const Case &c : option_cases())
        check_draws(f.x, f.rows, f.cols, f.n, c.o, f.state, c.what);
}

// The reference is the host sampler's chain: Sampler draws the token the reference's
// distribution gives for the same uniform number, always among its candidates, and each candidate
// of probability 5% or more is drawn in 300 draws (a correct pair fails with probability below
// 0.95^300, 2e-7, per candidate).
TEST(SamplingReference, IsTheHostSamplersChain) {
    Fixture f;
    for (const Case &c : option_cases())
        for (uint32_t r = 0; r < 3; ++r) {
            SamplingOptions o = c.o;
            o.seed = 5 + r;
            vkllm::engine::Sampler host(o);
            for (int32_t t : f.state[r].history)
                host.accept_prompt(t);
            const float *row = &f.x[size_t(r) * f.cols];
            std::vector<ref::Candidate> want = ref::sampling_chain(row, f.n, o, host.recent());
            std::map<int32_t, int> drawn;
            for (uint32_t k = 0; k < 300; ++k) {
                std::vector<float> x(row, row + f.cols);
                int32_t t = host.sample(x.data(), f.n, 0);
                ++drawn[t];
                // Draw k of stream 0 of the seed, walked in id order, as the device does.
                EXPECT_TRUE(draws_token(want, ref::sample_uniform(o.seed, 0, k), t, 1e-9))
                    << c.what << ", row " << r << ", draw " << k;
            }
            for (const ref::Candidate &k : want) {
                if (k.p >= 0.05) {
                    EXPECT_GT(drawn[k.id], 0) << c.what << ", row " << r << ", id " << k.id;
                }
                drawn.erase(k.id);
            }
            EXPECT_TRUE(drawn.empty()) << c.what << ", row " << r << ": the host drew "
                                       << drawn.begin()->first << ", not a candidate";
        }
}

TEST_F(SamplingKernel, TiesGoToTheLowestIds) {
    const uint32_t rows = 3, cols = 700;
    std::vector<float> x(size_t(rows) * cols, 0.0f);  // row 0: all equal
    for (uint32_t c = 0; c < cols; ++c) {
        x[cols + c] = c % 9 == 4 ? 2.5f : -1.0f;  // row 1: 78 tied at the top
        x[2 * cols + c] = c % 2 ? -0.0f : 0.0f;   // row 2: both zeros, one logit
    }
    std::vector<RowState> state(rows);
    for (int32_t k : {1, 5, 77, 300}) {
        SamplingOptions o = plain(1.0f);
        o.top_k = k;
        check_draws(x, rows, cols, cols, o, state, "ties at the k-th logit");
    }
    check_draws(x, rows, cols, cols, plain(0.0f), state, "greedy over ties");
}

TEST_F(SamplingKernel, VocabularyWideRowsWithTheLongestWindow) {
    // 262,144 ids and a 1,024-token window: the most every loop of the kernel runs, under
    // llvmpipe's 65,535-iteration limit.
    const uint32_t rows = 2, cols = 262144;
    std::vector<float> x = ref::random(size_t(rows) * cols, 92, -3.0f, 3.0f);
    for (uint32_t c = 0; c < cols; ++c)
        x[c] += float(c) * 2e-5f;  // row 0 rising: its best at the end
    std::vector<RowState> state(rows);
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t j = 0; j < 1500; ++j)
            state[r].history.push_back(int32_t(cols - 1 - (j * 13) % 2000));
    SamplingOptions o = plain(0.9f);
    o.top_k = 512;
    o.top_p = 0.9f;
    o.repeat_penalty = 1.5f;
    o.frequency_penalty = 0.1f;
    o.repeat_last_n = int32_t(kDeviceSamplingHistory);
    check_draws(x, rows, cols, cols, o, state, "vocabulary-wide, sorted");
    o.top_k = 0;
    o.top_p = 1.0f;
    o.min_p = 0.1f;
    check_draws(x, rows, cols, cols, o, state, "vocabulary-wide, top_k off");
}

TEST_F(SamplingKernel, SameSeedSameTokensWhateverTheChainLength) {
    const uint32_t rows = 3, cols = 500, steps = 8;
    std::vector<std::vector<float>> xs;
    for (uint32_t s = 0; s < steps; ++s)
        xs.push_back(ref::random(size_t(rows) * cols, 100 + s, -3.0f, 3.0f));
    SamplingOptions o;
    o.temperature = 1.0f;
    o.top_k = 60;
    o.repeat_penalty = 1.4f;
    o.presence_penalty = 0.5f;
    o.repeat_last_n = 32;
    std::vector<std::vector<int32_t>> runs;
    for (uint32_t per_submit : {1u, 8u, 4u, 3u})
        for (bool gpu : {false, true}) {
            std::vector<RowState> state(rows);
            runs.push_back(sample(xs, rows, cols, cols, o, 42, state, per_submit, gpu));
        }
    for (size_t k = 1; k < runs.size(); ++k)
        EXPECT_EQ(runs[k], runs[0]) << "run " << k;
    // The penalties saw each chain's own earlier draws: the reference, step by step.
    std::vector<RowState> state(rows);
    for (uint32_t s = 0; s < steps; ++s)
        for (uint32_t r = 0; r < rows; ++r) {
            std::vector<int32_t> &h = state[r].history;
            std::vector<int32_t> window(h.end() - long(std::min<size_t>(h.size(), 32)), h.end());
            std::vector<ref::Candidate> c =
                ref::sampling_chain(&xs[s][size_t(r) * cols], cols, o, window);
            EXPECT_TRUE(draws_token(c, ref::sample_uniform(42, r, s), runs[0][s * rows + r], 1e-5))
                << "step " << s << ", row " << r;
            h.push_back(runs[0][s * rows + r]);
        }
    std::vector<RowState> other(rows);
    EXPECT_NE(sample(xs, rows, cols, cols, o, 43, other), runs[0]) << "another seed";
}

namespace {

// The chi-square statistic's value that a correct sampler exceeds with probability 1e-6
// (Wilson and Hilferty's approximation; z = 4.753 is the normal's 1 - 1e-6 quantile).
double chi_square_bound(size_t df) {
    double k = double(df), z = 4.753;
    return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
}

}  // namespace

// 10^5 draws, each of its own (stream, draw), on one row of fixed logits. A correct kernel fails
// with probability 1e-6 per case; the seeds are fixed, so a given kernel always passes or
// always fails.
TEST_F(SamplingKernel, DrawsFollowTheHostChainsDistribution) {
    const uint32_t rows = 2000, steps = 50, cols = 128;
    std::vector<float> one = ref::random(cols, 93, -3.0f, 3.0f);
    for (float &v : one)
        v = v * std::fabs(v) * 0.7f;
    std::vector<float> x;
    for (uint32_t r = 0; r < rows; ++r)
        x.insert(x.end(), one.begin(), one.end());
    SamplingOptions sorted;  // the host's defaults (top_k 40, top_p 0.95) but a lower min_p
    sorted.temperature = 0.9f;
    sorted.min_p = 0.01f;
    sorted.logit_bias = {{7, 2.0f}};
    SamplingOptions unsorted = plain(1.2f);
    unsorted.min_p = 0.02f;
    for (const SamplingOptions &o : {sorted, unsorted}) {
        std::vector<ref::Candidate> c = ref::sampling_chain(one.data(), cols, o, {});
        std::vector<RowState> state(rows);
        std::vector<int32_t> got;
        for (uint32_t s = 0; s < steps; ++s) {
            std::vector<int32_t> step = sample({x}, rows, cols, cols, o, 7, state);
            got.insert(got.end(), step.begin(), step.end());
        }
        std::map<int32_t, double> count;
        for (int32_t t : got)
            ++count[t];
        // Bins of at least 5 expected draws; the rest pooled into one.
        double total = double(got.size()), chi2 = 0, pooled_want = 0, pooled_got = 0;
        size_t bins = 0;
        for (const ref::Candidate &k : c) {
            double want = k.p * total, have = count[k.id];
            count.erase(k.id);
            if (want < 5) {
                pooled_want += want;
                pooled_got += have;
                continue;
            }
            chi2 += (have - want) * (have - want) / want;
            ++bins;
        }
        if (pooled_want > 0) {
            chi2 += (pooled_got - pooled_want) * (pooled_got - pooled_want) / pooled_want;
            ++bins;
        }
        EXPECT_TRUE(count.empty()) << count.size() << " tokens drawn outside the candidates";
        ASSERT_GE(bins, 10u);
        EXPECT_LT(chi2, chi_square_bound(bins - 1)) << bins << " bins";
    }
}

TEST(DeviceSampling, RefusesWhatTheHostSamplerRefuses) {
    DeviceSamplingRows rows;
    auto refused = [&](SamplingOptions o, vkllm_status want) {
        size_t options = rows.options.size(), bias = rows.bias.size();
        try {
            add_sampling_row(rows, o, 1, 0, 1000);
            ADD_FAILURE() << "accepted";
        } catch (const vkllm::Error &e) {
            EXPECT_EQ(e.status(), want) << e.what();
        }
        EXPECT_EQ(rows.options.size(), options);
        EXPECT_EQ(rows.bias.size(), bias);
    };
    float nan = std::numeric_limits<float>::quiet_NaN();
    SamplingOptions o;
    o.temperature = nan;
    refused(o, VKLLM_ERR_INVALID_ARGUMENT);
    o = SamplingOptions{};
    o.top_k = -2;
    refused(o, VKLLM_ERR_INVALID_ARGUMENT);
    o = SamplingOptions{};
    o.top_p = nan;
    refused(o, VKLLM_ERR_INVALID_ARGUMENT);
    o = SamplingOptions{};
    o.repeat_penalty = 0.0f;
    refused(o, VKLLM_ERR_INVALID_ARGUMENT);
    o = SamplingOptions{};
    o.logit_bias = {{3, INFINITY}};
    refused(o, VKLLM_ERR_INVALID_ARGUMENT);
    o = SamplingOptions{};
    o.logit_bias = {{1000, 1.0f}};
    refused(o, VKLLM_ERR_INVALID_ARGUMENT);
    o = SamplingOptions{};  // fits neither: the vocabulary sorted for top-p
    o.temperature = 1.0f;
    o.top_k = 0;
    refused(o, VKLLM_ERR_UNSUPPORTED);
}

TEST(DeviceSampling, FitsWhatTheKernelCanSort) {
    using vkllm::engine::device_sampling_fits;
    SamplingOptions o;
    o.temperature = 0.8f;
    EXPECT_TRUE(device_sampling_fits(o, 151936)) << "the defaults: top_k 40";
    o.top_k = 512;
    EXPECT_TRUE(device_sampling_fits(o, 151936));
    o.top_k = 513;
    EXPECT_FALSE(device_sampling_fits(o, 151936)) << "top_p over more than the kernel sorts";
    o.top_p = 1.0f;
    EXPECT_FALSE(device_sampling_fits(o, 151936)) << "min_p alone, but top_k 513 to apply";
    EXPECT_TRUE(device_sampling_fits(o, 513)) << "top_k 513 of 513 is top_k off";
    o.top_k = 0;
    EXPECT_TRUE(device_sampling_fits(o, 151936)) << "min_p and temperature alone";
    o.typical_p = 0.9f;
    EXPECT_FALSE(device_sampling_fits(o, 151936)) << "typical over the vocabulary";
    o = SamplingOptions{};
    o.temperature = 0.8f;
    o.repeat_penalty = 1.1f;
    o.repeat_last_n = -1;
    EXPECT_FALSE(device_sampling_fits(o, 1000)) << "a window of all the history";
    o.repeat_last_n = int32_t(kDeviceSamplingHistory) + 1;
    EXPECT_FALSE(device_sampling_fits(o, 1000)) << "a window past the device's history";
    o.repeat_penalty = 1.0f;
    EXPECT_TRUE(device_sampling_fits(o, 1000)) << "no penalty, no window";
    o.logit_bias = {{0, -INFINITY}, {1, -INFINITY}, {0, -INFINITY}};
    EXPECT_TRUE(device_sampling_fits(o, 3));
    o.logit_bias.push_back({2, -INFINITY});
    EXPECT_FALSE(device_sampling_fits(o, 3)) << "every token banned: the host's error";
    o = SamplingOptions{};
    o.temperature = 0.0f;
    o.top_k = 0;
    EXPECT_TRUE(device_sampling_fits(o, 262144)) << "greedy";
    EXPECT_FALSE(device_sampling_fits(o, 262145)) << "past the loop limit's vocabulary";
}
