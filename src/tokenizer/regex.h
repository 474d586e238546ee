// The regular expressions of the pre-tokenizers: the patterns of the models' tokenizer.json
// files, matched over code points with the semantics of the engines the Hugging Face tokenizers
// and Python's `regex` module use (leftmost-first alternation, backtracking quantifiers).
//
// The syntax is the subset those patterns use:
//   literals (UTF-8); escapes \r \n \t \f \v, \xHH, \x{H...}, and \ before any punctuation;
//   \s \S (White_Space), \d \D (\p{Nd}), \w \W (letters, marks, numbers, connector punctuation);
//   \p{X} \P{X} with X one of L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po
//   S Sm Sc Sk So Han; . (any code point but \n);
//   classes [...] with ranges, ^, nested classes, escapes, and && (intersection);
//   groups (...) and (?:...) (nothing is captured), (?i:...) (simple case folding), lookahead
//   (?=...) (?!...);
//   quantifiers ? * + {n} {n,} {n,m}, greedy; a possessive ?+ *+ ++ on a single character or
//   class; the anchor $ (the end of the text matched) and \b.
// A pattern outside it is refused with VKLLM_ERR_INTERNAL (patterns are vkllm's own constants;
// the fuzz target feeds arbitrary ones).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace vkllm::tokenizer {

// Text as code points with the properties the patterns ask about, computed once.
class CodePoints {
  public:
    // Invalid UTF-8 bytes are U+FFFD each (one byte per code point), as utf8_decode does.
    explicit CodePoints(std::string_view utf8);

    size_t size() const { return cps_.size(); }
    uint32_t cp(size_t i) const { return cps_[i]; }
    uint32_t props(size_t i) const { return props_[i]; }
    // Byte offset of code point i in the UTF-8 text; offset(size()) is the text's length.
    size_t offset(size_t i) const { return offsets_[i]; }

  private:
    std::vector<uint32_t> cps_;
    std::vector<uint32_t> props_;
    std::vector<size_t> offsets_;
};

class Regex {
  public:
    explicit Regex(std::string_view pattern);
    ~Regex();
    Regex(Regex &&) noexcept;
    Regex &operator=(Regex &&) noexcept;

    struct Match {
        size_t begin, end;  // code point indices; begin == end for an empty match
    };

    // Appends to `out` each leftmost-first match in [begin, end) of text, left to right, as
    // Python's finditer finds them: an empty match is reported too, and the next search starts
    // one code point after it. `$` and \b see only [begin, end).
    // Throws VKLLM_ERR_UNSUPPORTED when the matcher exceeds its step budget (a pathological
    // pattern: none of the pre-tokenizers' patterns comes near it).
    void find_all(const CodePoints &text, size_t begin, size_t end, std::vector<Match> &out) const;

    struct Program;  // the compiled instructions (regex_program.h)

  private:
    std::unique_ptr<Program> program_;
};

}  // namespace vkllm::tokenizer
