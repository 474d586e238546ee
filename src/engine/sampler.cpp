#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace vkllm::engine {

Sampler::Sampler(const SamplingOptions &options)
    : opt_(options), greedy_(options.temperature <= 0.0f), rng_(options.seed) {}

void Sampler::accept(int32_t token) {
    if (opt_.repeat_last_n <= 0) return;
    recent_.push_back(token);
    if (recent_.size() > size_t(opt_.repeat_last_n)) recent_.erase(recent_.begin());
}

int32_t Sampler::sample(float *logits, size_t n_ids, int32_t argmax) {
    if (!needs_logits()) return argmax;
    // The CTRL-paper penalty, as llama.cpp applies it: positive logits shrink, negative grow.
    if (opt_.repeat_penalty != 1.0f) {
        for (int32_t t : recent_) {
            if (t < 0 || size_t(t) >= n_ids) continue;
            float &l = logits[t];
            l = l > 0 ? l / opt_.repeat_penalty : l * opt_.repeat_penalty;
        }
    }
    if (greedy_) return int32_t(std::max_element(logits, logits + n_ids) - logits);

    std::vector<int32_t> ids(n_ids);
    std::iota(ids.begin(), ids.end(), 0);
    auto by_logit = [logits](int32_t a, int32_t b) {
        return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
    };
    size_t keep = n_ids;
    if (opt_.top_k > 0 && size_t(opt_.top_k) < keep) keep = size_t(opt_.top_k);
    std::partial_sort(ids.begin(), ids.begin() + long(keep), ids.end(), by_logit);
    ids.resize(keep);

    std::vector<double> p(keep);
    double max = logits[ids[0]], sum = 0;
    for (size_t i = 0; i < keep; ++i)
        sum += p[i] = std::exp((logits[ids[i]] - max) / opt_.temperature);
    for (double &v : p)
        v /= sum;
    // min-p: drop what is less likely than min_p times the best.
    if (opt_.min_p > 0) {
        size_t n = 1;
        while (n < keep && p[n] >= opt_.min_p * p[0])
            ++n;
        keep = n;
    }
    // top-p: the smallest prefix whose mass reaches top_p.
    if (opt_.top_p < 1.0f) {
        double mass = 0;
        size_t n = 0;
        while (n < keep) {
            mass += p[n++];
            if (mass >= opt_.top_p) break;
        }
        keep = n;
    }
    double total = 0;
    for (size_t i = 0; i < keep; ++i)
        total += p[i];
    double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
    for (size_t i = 0; i < keep; ++i) {
        r -= p[i];
        if (r <= 0) return ids[i];
    }
    return ids[keep - 1];
}

}  // namespace vkllm::engine
