// BPE (tokenizer.ggml.model = "gpt2": GPT-2, Qwen2, Llama 3, GPT-OSS...). Byte-level: each byte
// of a pre-token is mapped to a printable code point, then the ranked merges are applied. Or,
// for SentencePiece-style BPE vocabularies, merges over the UTF-8 characters themselves, with
// <0xXX> byte tokens for any character the vocabulary lacks.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace vkllm::tokenizer {

class BpeEncoder {
  public:
    // ignore_merges: a pre-token that is itself a token is emitted whole (Llama 3, o200k).
    BpeEncoder(const Vocab &vocab, bool ignore_merges, bool byte_level);

    // Appends the ids of one pre-token (raw bytes).
    void encode(std::string_view piece, std::vector<int32_t> &out) const;

    // The raw bytes a token stands for: the byte mapping undone, or for UTF-8 BPE a byte token's
    // byte and U+2581 as a space.
    std::string decode(int32_t id) const;

  private:
    struct Merge {
        int32_t rank;
        int32_t result;
    };
    void fallback(std::string_view text, std::vector<int32_t> &out) const;

    const Vocab &vocab_;
    bool ignore_merges_;
    bool byte_level_;
    std::string byte_char_[256];  // byte -> UTF-8 of its printable code point
    int32_t byte_token_[256];     // byte -> its token (the mapped character, or <0xXX>), or -1
    std::unordered_map<uint32_t, uint8_t> char_byte_;  // code point -> byte
    std::unordered_map<uint64_t, Merge> merges_;       // (left id, right id) -> merge
};

}  // namespace vkllm::tokenizer
