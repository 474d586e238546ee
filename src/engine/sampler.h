// Choosing the next token from logits: greedy, or temperature with top-k, top-p and min-p
// filtering and a repetition penalty, from a seeded generator so that runs reproduce.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace vkllm::engine {

struct SamplingOptions {
    float temperature = 0.0f;     // <= 0: greedy (argmax)
    int32_t top_k = 40;           // <= 0: all
    float top_p = 0.95f;          // >= 1: all
    float min_p = 0.05f;          // <= 0: off
    float repeat_penalty = 1.0f;  // 1: off
    int32_t repeat_last_n = 64;
    uint64_t seed = 0;
};

class Sampler {
  public:
    explicit Sampler(const SamplingOptions &options);

    // Greedy decoding reads only the device's argmax, never the logits.
    bool needs_logits() const { return !greedy_ || opt_.repeat_penalty != 1.0f; }

    // Chooses among the first `n_ids` entries of `logits` (modified in place), the ids the
    // tokenizer knows, whatever follows them; `argmax` is the device's pick among those same
    // ids, used when needs_logits() is false.
    int32_t sample(float *logits, size_t n_ids, int32_t argmax);
    // Tokens seen so far, for the repetition penalty.
    void accept(int32_t token);

  private:
    SamplingOptions opt_;
    bool greedy_;
    std::mt19937_64 rng_;
    std::vector<int32_t> recent_;
};

}  // namespace vkllm::engine
