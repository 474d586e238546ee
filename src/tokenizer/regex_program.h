// The compiled form of a Regex, shared by its compiler (regex_compile.cpp) and its matcher
// (regex.cpp): character classes over code points and their properties, and the instructions.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

namespace regex_detail {

// A code point's properties, one bit each: its general category, then White_Space and Han.
constexpr uint32_t bit(Category c) {
    return 1u << uint32_t(c);
}
constexpr uint32_t kCategoryCount = uint32_t(Category::So) + 1;
constexpr uint32_t kWhite = 1u << kCategoryCount;
constexpr uint32_t kHan = kWhite << 1;
constexpr uint32_t kLetters = bit(Category::Lu) | bit(Category::Ll) | bit(Category::Lt) |
                              bit(Category::Lm) | bit(Category::Lo);
constexpr uint32_t kMarks = bit(Category::Mn) | bit(Category::Mc) | bit(Category::Me);
constexpr uint32_t kNumbers = bit(Category::Nd) | bit(Category::Nl) | bit(Category::No);
constexpr uint32_t kPunctuation = bit(Category::Pc) | bit(Category::Pd) | bit(Category::Ps) |
                                  bit(Category::Pe) | bit(Category::Pi) | bit(Category::Pf) |
                                  bit(Category::Po);
constexpr uint32_t kSymbols =
    bit(Category::Sm) | bit(Category::Sc) | bit(Category::Sk) | bit(Category::So);
// \w as Python's `regex` has it: Alphabetic (letters and letter numbers), marks, decimal digits
// and connector punctuation.
constexpr uint32_t kWord =
    kLetters | kMarks | bit(Category::Nd) | bit(Category::Nl) | bit(Category::Pc);

// The properties of a code point, as the bits above (a table for ASCII).
uint32_t properties(uint32_t cp);

// Simple case folding, as far as the patterns' (?i:...) parts can meet it: ASCII, the long s
// and the Kelvin sign (which fold to 's' and 'k' in the Rust and Python engines).
inline uint32_t fold(uint32_t cp) {
    if (cp >= 'A' && cp <= 'Z') return cp + ('a' - 'A');
    if (cp == 0x17F) return 's';
    if (cp == 0x212A) return 'k';
    return cp;
}

// A set of code points: the union of its items, intersected with each of `all_of`, maybe
// negated.
struct CharClass {
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    uint32_t any_props = 0;            // has one of these properties
    std::vector<uint32_t> none_props;  // lacks all of one of these (\S, \P{L}, ...)
    std::vector<CharClass> nested;
    std::vector<CharClass> all_of;
    bool negated = false;
    bool ignore_case = false;

    bool test_one(uint32_t cp, uint32_t props) const {
        if (props & any_props) return true;
        for (uint32_t mask : none_props)
            if (!(props & mask)) return true;
        for (const auto &[lo, hi] : ranges)
            if (cp >= lo && cp <= hi) return true;
        for (const CharClass &c : nested)
            if (c.test(cp, props)) return true;
        return false;
    }
    bool test(uint32_t cp, uint32_t props) const {
        bool in =
            test_one(cp, props) || (ignore_case && fold(cp) != cp && test_one(fold(cp), props));
        for (const CharClass &c : all_of)
            in = in && c.test(cp, props);
        return in != negated;
    }
};

enum class Op : uint8_t {
    Class,         // one code point of classes[x]
    Repeat,        // min..max code points of classes[x]; `possessive` never gives any back
    Split,         // try x, then y
    Jump,          // to x
    Look,          // the lookahead starting at x matches here (or, `negative`, does not)
    End,           // at the end of the text
    WordBoundary,  // \b
    Match,
};

struct Inst {
    Op op;
    bool flag = false;  // Repeat: possessive; Look: negative
    uint32_t x = 0, y = 0;
    uint32_t min = 0, max = 0;  // Split: min is its guard's index + 1 (0: none)
};

// What can start a match of a sub-pattern: a Split whose first branch cannot start with the
// next code point goes straight to its second, without a backtracking entry. On ASCII text
// that skips most alternatives of the patterns' long alternations at once.
struct First {
    std::array<uint64_t, 2> ascii{};
    bool non_ascii = false;
    bool nullable = true;  // can match nothing (then any next code point, or none, will do)

    void add(const First &o) {
        ascii[0] |= o.ascii[0];
        ascii[1] |= o.ascii[1];
        non_ascii = non_ascii || o.non_ascii;
    }
    bool admits(uint32_t cp) const {
        return nullable || (cp < 128 ? (ascii[cp >> 6] >> (cp & 63)) & 1 : non_ascii);
    }
};

constexpr uint32_t kUnbounded = UINT32_MAX;

}  // namespace regex_detail

struct Regex::Program {
    std::vector<regex_detail::CharClass> classes;
    std::vector<regex_detail::First> guards;
    std::vector<std::array<uint64_t, 2>> ascii;  // each class's ASCII members, a bit each
    std::vector<regex_detail::Inst> code;

    // Most text is mostly ASCII: those code points skip the class's items.
    bool test(uint32_t cls, uint32_t cp, uint32_t props) const {
        if (cp < 128) return (ascii[cls][cp >> 6] >> (cp & 63)) & 1;
        return classes[cls].test(cp, props);
    }
};

namespace regex_detail {

// Parses and compiles `pattern` into `p` (VKLLM_ERR_INTERNAL outside the syntax regex.h lists).
void compile(std::string_view pattern, Regex::Program &p);

}  // namespace regex_detail

}  // namespace vkllm::tokenizer
