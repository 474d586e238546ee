// Choosing the next token from logits through llama.cpp's default chain: logit bias, penalties
// (repetition, presence, frequency), top-k, typical, top-p, min-p, temperature, then a draw from
// a seeded counter-based generator (philox.h, the device sampler's too) so that runs reproduce.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/constraint.h"

namespace vkllm::engine {

// Asks for a seed from the system's random source.
constexpr uint64_t kSeedRandom = UINT64_MAX;

struct SamplingOptions {
    float temperature = 0.0f;     // <= 0: greedy (argmax)
    int32_t top_k = 40;           // 0 or -1: all
    float top_p = 0.95f;          // >= 1: all
    float min_p = 0.05f;          // <= 0: off
    float typical_p = 1.0f;       // >= 1: off
    float repeat_penalty = 1.0f;  // 1: off
    int32_t repeat_last_n = 64;   // tokens of history the penalties look at; -1: all
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;
    std::vector<std::pair<int32_t, float>> logit_bias;  // -INFINITY bans the token
    uint64_t seed = 0;                                  // kSeedRandom: from the system
    // The text generated must follow it: the sampler checks the token its chain chose and
    // masks the logits only when that token is not allowed.
    std::shared_ptr<const grammar::CompiledGrammar> grammar;
};

// Throws VKLLM_ERR_INVALID_ARGUMENT naming the first option out of its range (NaN, a negative
// top_k other than -1, a repetition penalty <= 0, a bias of +infinity or NaN, a biased token
// outside 0 .. n_candidates - 1).
void check_sampling(const SamplingOptions &options, size_t n_candidates, const char *fn);

class Sampler {
  public:
    // A seed of kSeedRandom is replaced by one read from the system's random source.
    explicit Sampler(const SamplingOptions &options);

    // Greedy decoding with nothing that changes logits reads only the device's argmax.
    bool needs_logits() const { return !greedy_ || changes_logits_ || constraint_; }
    uint64_t seed() const { return seed_; }
    // The penalties' window: the last repeat_last_n tokens, oldest first (empty when no option
    // changes logits).
    const std::vector<int32_t> &recent() const { return recent_; }

    // Chooses among the first `n_ids` entries of `logits` (modified in place), the ids the
    // tokenizer knows, whatever follows them; `argmax` is the device's pick among those same
    // ids, used when needs_logits() is false.
    // Under a grammar that is finished, the first end token of the vocabulary.
    int32_t sample(float *logits, size_t n_ids, int32_t argmax);
    // A generated token: the penalties' history, and the grammar's state (which throws
    // VKLLM_ERR_INVALID_ARGUMENT, nothing changed, for a token it does not allow).
    void accept(int32_t token);
    // A prompt token: the penalties' history only.
    void accept_prompt(int32_t token);
    // Forgets the history, restarts the generator's count and the grammar from its start.
    void reset();

    // Complete when there is no grammar.
    grammar::Progress progress() const {
        return constraint_ ? constraint_->progress() : grammar::Progress::Complete;
    }
    // Where a fresh parse of `text` leaves the grammar (Complete when there is none).
    grammar::Progress progress_of(std::string_view text) const {
        return constraint_ ? constraint_->progress_of(text) : grammar::Progress::Complete;
    }
    // Sets -INFINITY on the logits of tokens the grammar does not allow next (none without one).
    void apply_grammar(float *logits, size_t n_ids);

  private:
    int32_t choose(float *logits, size_t n_ids, int32_t argmax);

    SamplingOptions opt_;
    bool greedy_;
    bool changes_logits_;
    uint64_t seed_;
    uint32_t draws_ = 0;                   // of philox_uniform(seed_, 0, .)
    std::vector<int32_t> recent_;          // the last repeat_last_n tokens, oldest first
    std::unordered_map<int32_t, int> in_;  // how often each token is in recent_
    std::optional<grammar::Constraint> constraint_;
    std::vector<float> unconstrained_;  // the row as given, for a second pass under the mask
};

}  // namespace vkllm::engine
