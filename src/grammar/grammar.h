// A compiled GBNF grammar: every rule's alternatives as one flat array of elements, so that a
// parse position is a single index and a parse stack a short vector of indices (the engine copies
// stacks a lot; indices stay valid when the grammar is moved or copied, pointers would not).
//
// A rule is laid out as  alt_1 Alt alt_2 Alt ... alt_n End,  each alternative a sequence of
// terminals and rule references. A terminal is a character class: a leading Char (code point or
// the low end of a range), CharNot (the same, negated class) or CharAny ('.'), then CharUpper
// (the high end of the range just before it) and CharAlt (a further code point or range low end)
// elements. "abc" is three one-element classes in a row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vkllm::grammar {

enum class ElementType : uint8_t {
    End,        // end of the rule's last alternative
    Alt,        // end of an alternative; another follows
    RuleRef,    // value: the rule's index
    Char,       // value: a code point, or the low end of a range when a CharUpper follows
    CharNot,    // as Char, starting a negated class [^...]
    CharAny,    // '.': any code point
    CharUpper,  // value: the inclusive high end of the range whose low end precedes it
    CharAlt,    // value: a further code point (or range low end) of the same class
};

struct Element {
    ElementType type;
    uint32_t value;
};

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

struct Grammar {
    std::vector<Element> elements;     // every rule, back to back
    std::vector<uint32_t> rule_start;  // index of each rule's first element
    std::vector<std::string> names;    // each rule's name (helper rules: "base_N")
    uint32_t root = 0;

    size_t rule_count() const { return rule_start.size(); }
};

inline bool ends_alternative(ElementType t) {
    return t == ElementType::End || t == ElementType::Alt;
}

inline bool starts_class(ElementType t) {
    return t == ElementType::Char || t == ElementType::CharNot || t == ElementType::CharAny;
}

// The class starting at elements[pos] as closed intervals of code points; `negated` for [^...],
// `any` for '.' (no intervals); `next`: the index of the element after the class.
struct CharClass {
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    bool negated = false;
    bool any = false;
    uint32_t next = 0;
};
CharClass read_class(const std::vector<Element> &elements, uint32_t pos);

// Whether the class starting at elements[pos] matches `cp`; `next` receives the index of the
// element after the class.
bool class_matches(const std::vector<Element> &elements, uint32_t pos, uint32_t cp, uint32_t *next);

// Whether the class at elements[pos] matches some code point in [low, high] (the code points a
// partial UTF-8 sequence can still complete to).
bool class_may_match(const std::vector<Element> &elements, uint32_t pos, uint32_t low,
                     uint32_t high);

// The grammar as GBNF text again, every helper rule written out ("root-3 ::= ..."), one rule a
// line in rule order; it parses back to the same grammar (up to the order of the rules).
std::string to_gbnf(const Grammar &g);

}  // namespace vkllm::grammar
