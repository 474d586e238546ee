// WordPiece (tokenizer.ggml.model = "bert": BERT, MiniLM, BGE and other encoder models): each
// word of bert_words() becomes its longest vocabulary piece from the left, then the longest
// continuation of the rest, and so on; a word that cannot be covered, or is longer than 100
// characters, becomes one unknown token. The vocabulary is in llama.cpp's GGUF form: a piece
// that starts a word carries a leading U+2581 ("▁the"), a continuation has no "##" ("ing" for
// "##ing"), control tokens ([CLS], [SEP]) are as they are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace vkllm::tokenizer {

class WordPieceEncoder {
  public:
    // Throws VKLLM_ERR_FORMAT for a vocabulary without an unknown token.
    explicit WordPieceEncoder(const Vocab &vocab);

    void encode(std::string_view text, std::vector<int32_t> &out) const;

    // The text of a token: "▁" as the space before a word; a continuation as it is.
    std::string decode(int32_t id) const;

  private:
    void encode_word(std::string_view word, std::vector<int32_t> &out) const;
    int32_t find_piece(std::string_view text) const;

    const Vocab &vocab_;
    int32_t unk_;
    size_t longest_token_ = 0;  // bytes
};

}  // namespace vkllm::tokenizer
