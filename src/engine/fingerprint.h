// What identifies a model file for a saved session state: a state restores only into a model
// with the same fingerprint.
#pragma once

#include <cstdint>

#include "format/gguf.h"

namespace vkllm::engine {

// A hash of every metadata key with its type and value bytes (architecture, hyper-parameters,
// tokenizer and all), every tensor's name, type and shape, and three 256-byte samples of each
// tensor's data (its start, middle and end). Cheap (no pass over the weights) and blind only
// to edits of weight bytes outside the samples.
uint64_t model_fingerprint(const format::GgufFile &file);

}  // namespace vkllm::engine
