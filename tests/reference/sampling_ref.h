// CPU reference (double precision) for sampling: the host sampler's chain (logit bias,
// penalties, top-k, typical, top-p, min-p, temperature) as the probabilities it leaves, and the
// Philox-4x32-10 generator the device draws its uniform numbers from.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/sampler.h"

namespace ref {

// Philox-4x32-10 of counter `c` under key `k` (Salmon et al., SC'11; Random123's vectors).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k);

// The uniform number in [0, 1) of draw `draw` of `sequence` under `seed`: the first word's top
// 24 bits, as sample.comp takes it.
double sample_uniform(uint64_t seed, uint32_t sequence, uint32_t draw);

struct Candidate {
    int32_t id;
    double logit;  // after the bias and penalties, before the temperature
    double p;      // the probability of drawing it
};

// What the chain leaves of the first n logits, largest logit first (the lower id among
// equals): `history` is the penalties' window, oldest first. Greedy leaves the one largest.
std::vector<Candidate> sampling_chain(const float *logits, size_t n,
                                      const vkllm::engine::SamplingOptions &o,
                                      const std::vector<int32_t> &history);

}  // namespace ref
