#include "grammar/json_schema_charset.h"

#include "common/error.h"
#include "grammar/json_schema_rules.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar::schema::pattern {

namespace {

// The sets behind \s, \S, \D and \W (the header says which part of each engine's reading they
// take). Code points outside ASCII whose category the tables do not know (perhaps assigned in
// a newer Unicode) are left out of \D and \W.
const CharSet &space_both() {
    static const CharSet set = CharSet::of({{'\t', '\r'},
                                            {' ', ' '},
                                            {0xA0, 0xA0},
                                            {0x1680, 0x1680},
                                            {0x2000, 0x200A},
                                            {0x2028, 0x2029},
                                            {0x202F, 0x202F},
                                            {0x205F, 0x205F},
                                            {0x3000, 0x3000}});
    return set;
}

const CharSet &not_space() {
    static const CharSet set =
        space_both().with(CharSet::of({{0x1C, 0x1F}, {0x85, 0x85}, {0xFEFF, 0xFEFF}})).complement();
    return set;
}

bool unknown(uint32_t cp) {
    return cp > 0x7F && tokenizer::category(cp) == tokenizer::Category::Other &&
           !tokenizer::is_whitespace(cp);
}

const CharSet &not_digit() {
    static const CharSet set = CharSet::where([](uint32_t cp) {
        return !(cp >= '0' && cp <= '9') && !tokenizer::is_number(cp) && !unknown(cp);
    });
    return set;
}

const CharSet &not_word() {
    static const CharSet set = CharSet::where([](uint32_t cp) {
        return !word().contains(cp) && !tokenizer::is_letter(cp) && !tokenizer::is_mark(cp) &&
               !tokenizer::is_number(cp) && !unknown(cp);
    });
    return set;
}

// What the JSON text of a string writes escaped: controls, the quote, the backslash, and DEL
// (the converter's `char` never writes DEL raw). Surrogates are no characters of UTF-8 text.
const CharSet &escaped() {
    static const CharSet set = CharSet::of({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}});
    return set;
}

std::string class_member(uint32_t cp) {
    if ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z'))
        return std::string(1, char(cp));
    if (cp < 0x100) return sformat("\\x%02X", unsigned(cp));
    if (cp < 0x10000) return sformat("\\u%04X", unsigned(cp));
    return sformat("\\U%08X", unsigned(cp));
}

std::string class_text(const CharSet &set, bool negated) {
    std::string out = negated ? "[^" : "[";
    for (const auto &[lo, hi] : set.ranges()) {
        out += class_member(lo);
        if (hi > lo) out += (hi > lo + 1 ? "-" : "") + class_member(hi);
    }
    return out + "]";
}

// The JSON text of one escaped character, as a GBNF literal.
std::string escaped_char(uint32_t cp) {
    switch (cp) {
        case '"':
            return R"("\\\"")";
        case '\\':
            return R"("\\\\")";
        case '\b':
            return R"("\\b")";
        case '\f':
            return R"("\\f")";
        case '\n':
            return R"("\\n")";
        case '\r':
            return R"("\\r")";
        case '\t':
            return R"("\\t")";
        default:
            return sformat(R"("\\u%04x")", unsigned(cp));
    }
}

}  // namespace

const CharSet &digits() {
    static const CharSet set = CharSet::of({{'0', '9'}});
    return set;
}

const CharSet &word() {
    static const CharSet set = CharSet::of({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}});
    return set;
}

// `.`: any code point but the line terminators (ECMAScript's four; Python's is \n alone).
const CharSet &dot() {
    static const CharSet set =
        CharSet::of({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}).complement();
    return set;
}

const CharSet &surrogates() {
    static const CharSet set = CharSet::of({{0xD800, 0xDFFF}});
    return set;
}

// The JSON text of any character of `set`: a class for those written as they are, an escape
// for each of the others.
std::string set_text(const CharSet &set_in) {
    CharSet set = set_in.minus(surrogates());
    CharSet plain = set.minus(escaped());
    std::vector<std::string> alts;
    if (!plain.empty()) {
        CharSet outside = plain.complement().minus(escaped()).minus(surrogates());
        alts.push_back(outside.ranges().size() < plain.ranges().size()
                           ? class_text(outside.with(escaped()), true)
                           : class_text(plain, false));
    }
    for (const auto &[lo, hi] : set.ranges())
        for (uint32_t cp = lo; cp <= hi && cp <= 0x7F; ++cp)
            if (escaped().contains(cp)) alts.push_back(escaped_char(cp));
    if (alts.empty()) return "nothing";
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i)
        out += (i ? " | " : "") + alts[i];
    return out + ")";
}

std::string char_text(uint32_t cp) {
    if (escaped().contains(cp)) return escaped_char(cp);
    std::string utf8;
    tokenizer::utf8_append(utf8, cp);
    return gbnf_literal(utf8);
}

Sets same(uint32_t cp) {
    Sets s;
    s.lower.add(cp, cp);
    s.upper.add(cp, cp);
    return s;
}

Sets shorthand(uint32_t c) {
    switch (c) {
        case 'd':
            return {digits(), not_digit().complement()};
        case 'D':
            return {not_digit(), digits().complement()};
        case 'w':
            return {word(), not_word().complement()};
        case 'W':
            return {not_word(), word().complement()};
        case 's':
            return {space_both(), not_space().complement()};
        default:  // 'S'
            return {not_space(), space_both().complement()};
    }
}

}  // namespace vkllm::grammar::schema::pattern
