// Session::hidden_states: one step whose output is every token's final hidden state, what
// embeddings are made of (engine/embed.h).
#include <cstring>

#include "common/error.h"
#include "engine/session.h"

namespace vkllm::engine {

using models::Act;
using models::LogitRows;

void Session::hidden_states(const int32_t *tokens, const uint32_t *seqs, size_t n, float *out) {
    if (n == 0 || n > opt_.n_batch)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "a step of %zu tokens (1 to the session's n_batch %u)", n,
             opt_.n_batch);
    bool encoder = model_.config().encoder;
    std::vector<uint32_t> count(opt_.n_seq, 0);
    for (size_t i = 0; i < n; ++i) {
        check_seq(seqs[i]);
        if (encoder && n_past_[seqs[i]] > 0)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "sequence %u holds %u tokens: an encoder attends over its whole input in one "
                 "step, so the sequence must be empty",
                 seqs[i], n_past_[seqs[i]]);
        ++count[seqs[i]];
    }
    for (uint32_t s = 0; s < opt_.n_seq; ++s)
        if (count[s]) check_fits(s, count[s]);
    int32_t vocab = int32_t(model_.config().n_vocab);
    for (size_t i = 0; i < n; ++i)
        if (tokens[i] < 0 || tokens[i] >= vocab)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "token %d at index %zu is outside the vocabulary (0 to %d, the embedding's rows)",
                 tokens[i], i, vocab - 1);
    Tokens t{std::vector<int32_t>(tokens, tokens + n), std::vector<uint32_t>(seqs, seqs + n)};
    step(t, LogitRows::Hidden, nullptr, nullptr, stats_.prefill_ms, stats_.tokens_prefilled);
    std::memcpy(out, acts_[size_t(Act::Hidden)].mapped(),
                n * model_.config().n_embd * sizeof(float));
}

}  // namespace vkllm::engine
