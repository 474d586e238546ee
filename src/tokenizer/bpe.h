// Byte-level BPE (tokenizer.ggml.model = "gpt2": GPT-2, Qwen2, Llama 3, GPT-OSS): each byte of
// a pre-token is mapped to a printable code point, then the ranked merges are applied.
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
    BpeEncoder(const Vocab &vocab, bool ignore_merges);

    // Appends the ids of one pre-token (raw bytes).
    void encode(std::string_view piece, std::vector<int32_t> &out) const;

    // The raw bytes a token stands for (the byte mapping undone).
    std::string decode(int32_t id) const;

  private:
    struct Merge {
        int32_t rank;
        int32_t result;
    };
    const Vocab &vocab_;
    bool ignore_merges_;
    std::string byte_char_[256];                       // byte -> UTF-8 of its printable code point
    int32_t byte_token_[256];                          // byte -> id of that single character, or -1
    std::unordered_map<uint32_t, uint8_t> char_byte_;  // code point -> byte
    std::unordered_map<uint64_t, Merge> merges_;       // (left id, right id) -> merge
};

}  // namespace vkllm::tokenizer
