// vkllm_sampling_params as the engine's sampling options, and the vkllm_sampler handle.
#pragma once

#include <memory>
#include <vector>

#include "engine/sampler.h"
#include "vkllm.h"

struct vkllm_sampler {
    vkllm::engine::Sampler impl;
    size_t n_candidates;     // the tokenizer's ids; 0: every entry of a row
    std::vector<float> row;  // the row being sampled, which the chain changes
};

namespace vkllm::api {

// Reads `given` (NULL: the defaults) by its struct_size and checks every field; a logit bias
// names ids below `n_candidates` (0: unchecked). Throws VKLLM_ERR_INVALID_ARGUMENT.
engine::SamplingOptions sampling_options(const vkllm_sampling_params *given, size_t n_candidates,
                                         const char *fn);

// What a grammar handle holds (NULL for NULL), for the samplers that keep it.
std::shared_ptr<const grammar::CompiledGrammar> compiled_grammar(const vkllm_grammar *grammar);

}  // namespace vkllm::api
