// SentencePiece-style BPE (tokenizer.ggml.model = "llama": Llama 2, TinyLlama, stories,
// Gemma): characters are merged by the score of the token they would form, highest first; what
// no token covers falls back to <0xXX> byte tokens. User-defined pieces (Gemma's runs of
// spaces) never get here: Tokenizer cuts them out of the text first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace vkllm::tokenizer {

class SpmEncoder {
  public:
    explicit SpmEncoder(const Vocab &vocab);

    // Appends the ids of `text`, in which spaces are already U+2581 ("▁").
    void encode(std::string_view text, std::vector<int32_t> &out) const;

    // The text a token stands for: "▁" as a space, <0xXX> as its byte.
    std::string decode(int32_t id) const;

  private:
    void emit(std::string_view text, std::vector<int32_t> &out) const;

    const Vocab &vocab_;
    int32_t byte_token_[256];
};

// SentencePiece's visible space: text with each ' ' as U+2581 ("▁"), and one more in front when
// `prefix` (the dummy prefix); and back.
std::string escape_spaces(std::string_view text, bool prefix);
std::string unescape_spaces(std::string_view text);

}  // namespace vkllm::tokenizer
