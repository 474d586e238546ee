#include "reference/sampling_ref.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace ref {

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
    for (int round = 0; round < 10; ++round) {
        uint64_t a = uint64_t(0xD2511F53u) * c[0], b = uint64_t(0xCD9E8D57u) * c[2];
        c = {uint32_t(b >> 32) ^ c[1] ^ k[0], uint32_t(b), uint32_t(a >> 32) ^ c[3] ^ k[1],
             uint32_t(a)};
        k[0] += 0x9E3779B9u;
        k[1] += 0xBB67AE85u;
    }
    return c;
}

double sample_uniform(uint64_t seed, uint32_t sequence, uint32_t draw) {
    std::array<uint32_t, 4> w =
        philox4x32_10({draw, sequence, 0, 0}, {uint32_t(seed), uint32_t(seed >> 32)});
    return double(w[0] >> 8) / 16777216.0;
}

namespace {

std::vector<double> softmax(const std::vector<Candidate> &c, double t) {
    std::vector<double> p(c.size());
    double sum = 0;
    for (size_t i = 0; i < c.size(); ++i)
        sum += p[i] = std::exp((c[i].logit - c[0].logit) / t);
    for (double &v : p)
        v /= sum;
    return p;
}

}  // namespace

std::vector<Candidate> sampling_chain(const float *logits, size_t n,
                                      const vkllm::engine::SamplingOptions &o,
                                      const std::vector<int32_t> &history) {
    std::vector<double> l(logits, logits + n);
    for (auto [token, bias] : o.logit_bias)
        l[size_t(token)] += double(bias);
    std::map<int32_t, int> count;
    for (int32_t t : history)
        ++count[t];
    for (auto [t, k] : count) {
        double &v = l[size_t(t)];
        v = v <= 0 ? v * o.repeat_penalty : v / o.repeat_penalty;
        v -= k * double(o.frequency_penalty) + o.presence_penalty;
    }
    std::vector<Candidate> c;
    for (size_t i = 0; i < n; ++i)
        if (!std::isnan(l[i]) && l[i] != -INFINITY) c.push_back({int32_t(i), l[i], 0});
    std::sort(c.begin(), c.end(), [](const Candidate &a, const Candidate &b) {
        return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
    });
    if (o.temperature <= 0) {
        c.resize(std::min<size_t>(c.size(), 1));
        if (!c.empty()) c[0].p = 1;
        return c;
    }
    if (o.top_k > 0 && size_t(o.top_k) < c.size()) c.resize(size_t(o.top_k));
    if (o.typical_p < 1) {
        std::vector<double> p = softmax(c, 1);
        double entropy = 0;
        for (double v : p)
            if (v > 0) entropy -= v * std::log(v);
        std::vector<size_t> order(c.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return std::fabs(-std::log(p[a]) - entropy) < std::fabs(-std::log(p[b]) - entropy);
        });
        double mass = 0;
        size_t keep = order.size();
        for (size_t i = 0; i < order.size(); ++i)
            if ((mass += p[order[i]]) > o.typical_p) {
                keep = i + 1;
                break;
            }
        std::vector<bool> kept(c.size());
        for (size_t i = 0; i < keep; ++i)
            kept[order[i]] = true;
        std::vector<Candidate> k;
        for (size_t i = 0; i < c.size(); ++i)
            if (kept[i]) k.push_back(c[i]);
        c.swap(k);
    }
    if (o.top_p < 1) {
        std::vector<double> p = softmax(c, 1);
        double mass = 0;
        size_t keep = 0;
        while (keep < c.size()) {
            mass += p[keep++];
            if (mass >= o.top_p) break;
        }
        c.resize(keep);
    }
    if (o.min_p > 0) {
        double floor = c[0].logit + std::log(double(o.min_p));
        size_t keep = 1;
        while (keep < c.size() && c[keep].logit >= floor)
            ++keep;
        c.resize(keep);
    }
    std::vector<double> p = softmax(c, o.temperature);
    for (size_t i = 0; i < c.size(); ++i)
        c[i].p = p[i];
    return c;
}

}  // namespace ref
