#include "engine/device_sampling.h"

#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "argmax/sample.h"
#include "common/error.h"
#include "gpu/kernels/argmax.h"

namespace vkllm::engine {

namespace {

bool penalties_on(const SamplingOptions &o) {
    return o.repeat_last_n != 0 &&
           (o.repeat_penalty != 1.0f || o.presence_penalty != 0.0f || o.frequency_penalty != 0.0f);
}

uint32_t bits(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
}

}  // namespace

bool device_sampling_fits(const SamplingOptions &o, size_t n_vocab) {
    if (o.grammar || n_vocab == 0 || n_vocab > kDeviceSamplingMaxVocab) return false;
    if (penalties_on(o) &&
        (o.repeat_last_n < 0 || uint32_t(o.repeat_last_n) > kDeviceSamplingHistory))
        return false;
    std::unordered_set<int32_t> banned;
    for (auto [token, bias] : o.logit_bias)
        if (bias == -INFINITY) banned.insert(token);
    if (banned.size() >= n_vocab) return false;  // the host says so, as an error
    if (o.temperature <= 0.0f) return true;
    if (o.top_k >= 1 && uint32_t(o.top_k) <= gpu::ArgmaxKernels::kMaxSampleTopK) return true;
    bool all = o.top_k <= 0 || size_t(o.top_k) >= n_vocab;
    return all && o.typical_p >= 1.0f && o.top_p >= 1.0f;
}

void add_sampling_row(DeviceSamplingRows &rows, const SamplingOptions &o, uint64_t seed,
                      uint32_t sequence, size_t n_vocab) {
    check_sampling(o, n_vocab, "device sampling");
    if (!device_sampling_fits(o, n_vocab))
        fail(VKLLM_ERR_UNSUPPORTED, "device sampling: these options stay on the host");
    // One entry per token, in the order of first mention, so that lanes never add to one logit.
    std::unordered_map<int32_t, size_t> at;
    std::vector<std::pair<int32_t, float>> merged;
    for (auto [token, bias] : o.logit_bias) {
        auto [it, fresh] = at.emplace(token, merged.size());
        if (fresh)
            merged.push_back({token, bias});
        else
            merged[it->second].second += bias;
    }
    uint32_t first = uint32_t(rows.bias.size() / 2);
    for (auto [token, bias] : merged) {
        rows.bias.push_back(uint32_t(token));
        rows.bias.push_back(bits(bias));
    }
    uint32_t w[SAMPLE_ROW_WORDS] = {};
    w[SAMPLE_TEMPERATURE] = bits(o.temperature);
    w[SAMPLE_TOP_K] = uint32_t(o.top_k);
    w[SAMPLE_TOP_P] = bits(o.top_p);
    w[SAMPLE_MIN_P] = bits(o.min_p);
    w[SAMPLE_TYPICAL_P] = bits(o.typical_p);
    w[SAMPLE_REPEAT_PENALTY] = bits(o.repeat_penalty);
    w[SAMPLE_PRESENCE] = bits(o.presence_penalty);
    w[SAMPLE_FREQUENCY] = bits(o.frequency_penalty);
    w[SAMPLE_REPEAT_LAST_N] = penalties_on(o) ? uint32_t(o.repeat_last_n) : 0u;
    w[SAMPLE_SEED_LO] = uint32_t(seed);
    w[SAMPLE_SEED_HI] = uint32_t(seed >> 32);
    w[SAMPLE_SEQUENCE] = sequence;
    w[SAMPLE_BIAS_FIRST] = first;
    w[SAMPLE_BIAS_COUNT] = uint32_t(merged.size());
    rows.options.insert(rows.options.end(), w, w + SAMPLE_ROW_WORDS);
    if (rows.bias.empty()) rows.bias = {0u, 0u};  // bound, never read (a count of 0)
}

}  // namespace vkllm::engine
