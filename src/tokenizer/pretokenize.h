// The pre-tokenizers of BPE vocabularies: the rules, by tokenizer.ggml.pre name, that split
// text into the pieces BPE then encodes one by one. The rules are data (pretokenize_rules.cpp):
// each rule set is a sequence of regexes, as llama.cpp's vocabulary loader and the Hugging
// Face pre-tokenizers apply them: each regex splits every piece the previous ones left into
// its matches and the text between them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace vkllm::tokenizer {

enum PreTokenizerFlag : uint32_t {
    // BPE over the UTF-8 text, with <0xXX> byte tokens for what no token covers, rather than
    // byte-level BPE (GPT-2's byte-to-character table).
    kRawUtf8 = 1 << 0,
    // Spaces become U+2581 before splitting (SentencePiece-style BPE: Gemma 4, Sarvam).
    kEscapeSpaces = 1 << 1,
    // A piece that is itself a token is emitted whole, without merging (Llama 3, Tekken...).
    kIgnoreMerges = 1 << 2,
    // The text is NFC-normalised first, as these models' Hugging Face tokenizers do (llama.cpp
    // does not): set for qwen2, qwen, deepseek-r1-qwen and qwen35 (the Qwen tokenizer) only.
    kNfc = 1 << 3,
    // BOS is added when the file does not say (tokenizer.ggml.add_bos_token is absent).
    kAddBosByDefault = 1 << 4,
};

struct PreTokenizerRules {
    // The tokenizer.ggml.pre names that select these rules, separated by spaces.
    const char *names;
    // The regexes, applied in order; the unused ones are null. They are the models' own
    // tokenizer.json patterns, also where llama.cpp rewrote them for std::regex.
    const char *regexes[6];
    uint32_t flags;  // PreTokenizerFlag bits

    bool has(PreTokenizerFlag f) const { return (flags & f) != 0; }
};

// The rules for a tokenizer.ggml.pre name, or null for an unknown name. An empty name (the key
// is absent) gets llama.cpp's "default" rules.
const PreTokenizerRules *find_pretokenizer(std::string_view name);

// Every rule set, for listing and tests.
const std::vector<PreTokenizerRules> &all_pretokenizers();

// "default, gpt-2, ..." : every accepted name, for error messages.
std::string pretokenizer_names();

// A rule set's regexes, compiled once per tokenizer.
class PreTokenizer {
  public:
    explicit PreTokenizer(const PreTokenizerRules &rules);

    const PreTokenizerRules &rules() const { return rules_; }

    // Splits UTF-8 text (already NFC-normalised and space-escaped when the rules ask) into
    // pieces: consecutive, non-empty byte ranges of `text` that cover all of it, in order.
    // Invalid UTF-8 bytes are one U+FFFD each for matching and stay in the ranges as they are.
    std::vector<std::string_view> split(std::string_view text) const;

  private:
    const PreTokenizerRules &rules_;
    std::vector<Regex> regexes_;
};

}  // namespace vkllm::tokenizer
