// Which sampling options the device's sampling kernel (shaders/argmax/sample.comp) takes, and
// their rows in its layout, so that sampled decode steps can chain in one submission.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/sampler.h"

namespace vkllm::engine {

// Tokens of history the device keeps per sequence: the penalties' window may not be longer.
constexpr uint32_t kDeviceSamplingHistory = 1024;
// The largest vocabulary whose sweeps stay within llvmpipe's loop limit (env.h).
constexpr size_t kDeviceSamplingMaxVocab = 262144;

// Whether the kernel draws from the same distribution as Sampler for these options over a
// vocabulary of `n_vocab`: no grammar; a penalty window of 0 to kDeviceSamplingHistory tokens
// (not -1, all) when a penalty is on; a bias that leaves a token unbanned; and either greedy, a
// top-k of 1 to ArgmaxKernels::kMaxSampleTopK, or top-k off with neither typical nor top-p
// (those need the whole vocabulary sorted). Options must have passed check_sampling.
bool device_sampling_fits(const SamplingOptions &options, size_t n_vocab);

// The kernel's rows of options (SAMPLE_ROW_WORDS words each) and the bias pairs they point into.
struct DeviceSamplingRows {
    std::vector<uint32_t> options;
    std::vector<uint32_t> bias;  // (id, bias bits) pairs; at least one, the kernel binds it
};

// What Session::decode_sampled draws with, a row per sequence of the step in its order: the
// options, each row's penalty history (oldest first, at most kDeviceSamplingHistory tokens) and
// the draws its stream has made (the next draw's counter).
struct DeviceSamplingStep {
    DeviceSamplingRows rows;
    std::vector<std::vector<int32_t>> history;
    std::vector<uint32_t> draws;
};

// Appends a row for `options` drawing with `seed` (not kSeedRandom: the Sampler's resolved one)
// in the stream of `sequence`. Throws as check_sampling does (nothing appended) for options out
// of range, and VKLLM_ERR_UNSUPPORTED for options that do not fit. A token biased more than once
// gets the sum of its biases.
void add_sampling_row(DeviceSamplingRows &rows, const SamplingOptions &options, uint64_t seed,
                      uint32_t sequence, size_t n_vocab);

}  // namespace vkllm::engine
