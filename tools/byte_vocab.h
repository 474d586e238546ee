// A minimal byte-level BPE vocabulary for files made by `vkllm make-model` without --vocab:
// the 256 byte tokens of GPT-2's byte-to-unicode mapping, a few merges (readers such as
// llama.cpp insist on a merges array for "gpt2" vocabularies) and the model's control tokens.
// Every text can be tokenized with it, byte by byte, which is all a benchmark needs. Unused
// tokens fill it up to the model's embedding rows: llama.cpp loads a file only when its token
// list is exactly as long, so the preset files run in both for side-by-side benchmarks.
#pragma once

#include <cstddef>

#include "format/gguf_writer.h"
#include "model_presets.h"

namespace vkllm_tool {

// Sets the tokenizer.ggml.* keys for a vocabulary of n_vocab tokens (at least the byte, merged
// and control tokens); returns the number of tokens.
size_t write_byte_vocab(const VocabStyle &style, size_t n_vocab, vkllm::format::GgufWriter &w);

}  // namespace vkllm_tool
