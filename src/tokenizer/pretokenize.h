// The regex pre-tokenizers of byte-level BPE tokenizers, as hand-written matchers: they split
// text into the pieces that BPE then encodes one by one.
#pragma once

#include <string_view>
#include <vector>

namespace vkllm::tokenizer {

// Each kind reproduces the splits of its model family's regex (leftmost-first alternation,
// greedy with backtracking, as in the Rust `regex` and Python `regex` engines):
enum class PreTokenizer {
    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    Gpt2,
    // Qwen2 with \p{N}{1,3} for \p{N}
    Llama3,
    // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
    // \s*[\r\n]+|\s+(?!\S)|\s+
    Qwen2,
    // gpt-4o and GPT-OSS, with C = (?i:'s|'t|'re|'ve|'m|'ll|'d), U =
    // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    // and W = [\p{Ll}\p{Lm}\p{Lo}\p{M}]:
    // [^\r\n\p{L}\p{N}]?U*W+C?|[^\r\n\p{L}\p{N}]?U+W*C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|
    // \s*[\r\n]+|\s+(?!\S)|\s+
    O200k,
};

// Splits UTF-8 text into pre-tokens: consecutive, non-empty byte ranges of `text` that cover
// all of it, in order. Invalid UTF-8 bytes are treated as one code point U+FFFD each for
// matching but stay in the ranges as their original bytes.
std::vector<std::string_view> pretokenize(PreTokenizer kind, std::string_view text);

}  // namespace vkllm::tokenizer
