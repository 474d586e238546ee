#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "common/error.h"
#include "engine/philox.h"

namespace vkllm::engine {

namespace {

struct Candidate {
    int32_t id;
    float logit;
};

// Highest logit first, the lower id first among equals: every run orders ties alike.
bool by_logit(const Candidate &a, const Candidate &b) {
    return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
}

// Probabilities of the candidates at temperature 1 (they are sorted, the first is the largest).
std::vector<double> softmax(const std::vector<Candidate> &c) {
    std::vector<double> p(c.size());
    double sum = 0;
    for (size_t i = 0; i < c.size(); ++i)
        sum += p[i] = std::exp(double(c[i].logit) - double(c[0].logit));
    for (double &v : p)
        v /= sum;
    return p;
}

// Locally typical sampling (Meier et al.), as llama.cpp does it: the tokens whose surprise is
// closest to the distribution's entropy, until their mass exceeds `typical_p`.
void typical(std::vector<Candidate> &c, float typical_p) {
    std::vector<double> p = softmax(c);
    double entropy = 0;
    for (double v : p)
        if (v > 0) entropy -= v * std::log(v);
    std::vector<double> distance(c.size());
    for (size_t i = 0; i < c.size(); ++i)
        distance[i] = std::fabs(-std::log(p[i]) - entropy);
    std::vector<size_t> order(c.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return distance[a] < distance[b]; });
    double mass = 0;
    size_t keep = order.size();
    for (size_t i = 0; i < order.size(); ++i) {
        mass += p[order[i]];
        if (mass > typical_p) {
            keep = i + 1;
            break;
        }
    }
    std::vector<Candidate> kept;
    for (size_t i = 0; i < keep; ++i)
        kept.push_back(c[order[i]]);
    std::sort(kept.begin(), kept.end(), by_logit);
    c.swap(kept);
}

bool finite(float v) {
    return std::isfinite(v);
}

}  // namespace

void check_sampling(const SamplingOptions &o, size_t n_candidates, const char *fn) {
    auto bad = [fn](const char *what, double v) {
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s %g is out of range", fn, what, v);
    };
    if (!finite(o.temperature)) bad("temperature", o.temperature);
    if (o.top_k < -1)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: top_k %d is out of range (0 or -1: off)", fn,
             o.top_k);
    if (!(o.top_p >= 0)) bad("top_p", o.top_p);
    if (!(o.min_p <= 1) || std::isnan(o.min_p)) bad("min_p (at most 1)", o.min_p);
    if (!(o.typical_p >= 0)) bad("typical_p", o.typical_p);
    if (!(o.repeat_penalty > 0) || !finite(o.repeat_penalty))
        bad("repeat_penalty (above 0)", o.repeat_penalty);
    if (o.repeat_last_n < -1)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: repeat_last_n %d is out of range (-1: all)", fn,
             o.repeat_last_n);
    if (!finite(o.presence_penalty)) bad("presence_penalty", o.presence_penalty);
    if (!finite(o.frequency_penalty)) bad("frequency_penalty", o.frequency_penalty);
    for (size_t i = 0; i < o.logit_bias.size(); ++i) {
        auto [token, bias] = o.logit_bias[i];
        if (token < 0 || (n_candidates && size_t(token) >= n_candidates))
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s: logit_bias[%zu] names token %d, outside the tokenizer's 0 to %zu", fn, i,
                 token, n_candidates - 1);
        if (std::isnan(bias) || bias == INFINITY)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s: logit_bias[%zu] is %g (a finite bias, or -INFINITY to ban)", fn, i,
                 double(bias));
    }
}

Sampler::Sampler(const SamplingOptions &options)
    : opt_(options),
      greedy_(options.temperature <= 0.0f),
      changes_logits_(!options.logit_bias.empty() ||
                      (options.repeat_last_n != 0 &&
                       (options.repeat_penalty != 1.0f || options.presence_penalty != 0.0f ||
                        options.frequency_penalty != 0.0f))),
      seed_(options.seed) {
    if (opt_.grammar) constraint_.emplace(opt_.grammar);
    if (seed_ == kSeedRandom) {
        // Read once: two random_device words, since one may be only 32 bits wide.
        std::random_device source;
        do {
            seed_ = (uint64_t(source()) << 32) ^ uint64_t(source());
        } while (seed_ == kSeedRandom);
    }
}

void Sampler::accept(int32_t token) {
    if (constraint_) constraint_->accept(token);
    accept_prompt(token);
}

void Sampler::accept_prompt(int32_t token) {
    if (opt_.repeat_last_n == 0 || !changes_logits_) return;
    recent_.push_back(token);
    ++in_[token];
    if (opt_.repeat_last_n > 0 && recent_.size() > size_t(opt_.repeat_last_n)) {
        if (--in_[recent_.front()] == 0) in_.erase(recent_.front());
        recent_.erase(recent_.begin());
    }
}

void Sampler::reset() {
    recent_.clear();
    in_.clear();
    draws_ = 0;
    if (constraint_) constraint_->reset();
}

void Sampler::apply_grammar(float *logits, size_t n_ids) {
    if (constraint_) constraint_->mask(logits, n_ids);
}

int32_t Sampler::sample(float *logits, size_t n_ids, int32_t argmax) {
    if (!constraint_) return choose(logits, n_ids, argmax);
    if (constraint_->progress() == grammar::Progress::Finished) {
        for (int32_t end : opt_.grammar->end_tokens)
            if (size_t(end) < n_ids) return end;
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "sampling: the grammar is finished and the vocabulary has no end-of-generation "
             "token to end the text with");
    }
    // The chain changes the row in place; the second pass, if any, starts from it as given.
    unconstrained_.assign(logits, logits + n_ids);
    int32_t token = choose(logits, n_ids, argmax);
    if (constraint_->allows(token)) return token;
    std::copy(unconstrained_.begin(), unconstrained_.end(), logits);
    if (constraint_->mask(logits, n_ids) == 0)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "sampling: the grammar allows no token here (the vocabulary cannot spell any "
             "continuation of the text so far, or the grammar matches no text at all, as a JSON "
             "Schema no value satisfies: false, {\"enum\": []})");
    return choose(logits, n_ids, argmax);
}

int32_t Sampler::choose(float *logits, size_t n_ids, int32_t argmax) {
    if (!needs_logits()) return argmax;
    for (auto [token, bias] : opt_.logit_bias)
        if (size_t(token) < n_ids) logits[token] += bias;
    // llama.cpp's penalties: the CTRL paper's repetition penalty (positive logits shrink,
    // negative grow), then OpenAI's frequency (per occurrence) and presence (once) penalties.
    for (auto [token, count] : in_) {
        if (token < 0 || size_t(token) >= n_ids) continue;
        float &l = logits[token];
        l = l <= 0 ? l * opt_.repeat_penalty : l / opt_.repeat_penalty;
        l -= float(count) * opt_.frequency_penalty + opt_.presence_penalty;
    }
    if (greedy_) {
        const float *best = std::max_element(logits, logits + n_ids);
        if (*best == -INFINITY)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "sampling: the logit bias bans every token");
        return int32_t(best - logits);
    }

    std::vector<Candidate> c;
    c.reserve(n_ids);
    for (size_t i = 0; i < n_ids; ++i)
        if (logits[i] != -INFINITY) c.push_back({int32_t(i), logits[i]});
    if (c.empty()) fail(VKLLM_ERR_INVALID_ARGUMENT, "sampling: the logit bias bans every token");
    size_t keep = c.size();
    if (opt_.top_k > 0) keep = std::min(keep, size_t(opt_.top_k));
    std::partial_sort(c.begin(), c.begin() + long(keep), c.end(), by_logit);
    c.resize(keep);
    if (opt_.typical_p < 1.0f) typical(c, opt_.typical_p);
    if (opt_.top_p < 1.0f) {  // the smallest prefix whose mass reaches top_p
        std::vector<double> p = softmax(c);
        double mass = 0;
        size_t n = 0;
        while (n < c.size()) {
            mass += p[n++];
            if (mass >= opt_.top_p) break;
        }
        c.resize(n);
    }
    if (opt_.min_p > 0.0f) {  // what is less likely than min_p times the best goes
        double floor = double(c[0].logit) + std::log(double(opt_.min_p));
        size_t n = 1;
        while (n < c.size() && double(c[n].logit) >= floor)
            ++n;
        c.resize(n);
    }
    for (Candidate &k : c)
        k.logit /= opt_.temperature;
    std::vector<double> p = softmax(c);
    // Stream 0 of the seed, as the device draws generate()'s tokens (device_sampling.h), and
    // in id order, as the device walks them: the same number gives the same token.
    double r = philox_uniform(seed_, 0, draws_++);
    std::vector<size_t> by_id(c.size());
    std::iota(by_id.begin(), by_id.end(), 0);
    std::sort(by_id.begin(), by_id.end(), [&](size_t a, size_t b) { return c[a].id < c[b].id; });
    for (size_t i : by_id) {
        r -= p[i];
        if (r < 0) return c[i].id;
    }
    return c[by_id.back()].id;
}

}  // namespace vkllm::engine
