// Generation for several sequences at once: each prompt prefilled, then one decode step per
// token for all the sequences still going, each row through its own sampler.
#pragma once

#include <vector>

#include "engine/generate.h"

namespace vkllm::engine {

struct BatchSequence {
    uint32_t seq = 0;
    std::vector<int32_t> prompt;
    Sampler *sampler = nullptr;   // not shared between sequences
    std::vector<int32_t> tokens;  // generated, the end token that stopped it not included
    StopReason reason = StopReason::MaxTokens;
};

// Throws VKLLM_ERR_INVALID_ARGUMENT (before anything runs) for an empty prompt or a sequence
// named twice, and VKLLM_ERR_CANCELLED after Session::cancel with each sequence's tokens so far
// in place; what was prefilled or decoded stays in the cache.
void generate_batch(Session &session, std::vector<BatchSequence> &seqs, uint32_t max_tokens,
                    bool ignore_eog);

}  // namespace vkllm::engine
