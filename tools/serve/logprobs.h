// Log-probabilities of a row of logits as the library defines them (vkllm.h, "Session: logits
// of every position"): the log-softmax over the tokenizer's ids in double precision, NaN
// logits taking no part; the most likely ids largest first, the lowest id first on ties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine.h"
#include "vkllm.h"

namespace serve {

// `token`'s logprob under `row` (its first n_vocab entries: the tokenizer's ids) and the
// n_top most likely ids, with the token's bytes.
TokenLogprob token_logprob(const vkllm_tokenizer *tokenizer, const float *row, size_t n_vocab,
                           int32_t token, int32_t n_top);

// The bytes of a token (part of a UTF-8 character for byte tokens); "" for an unknown id.
std::string token_piece(const vkllm_tokenizer *tokenizer, int32_t token);

}  // namespace serve
