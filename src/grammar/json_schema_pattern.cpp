#include "grammar/json_schema_pattern.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "common/error.h"
#include "grammar/json_schema_rules.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar::schema {

namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// A set of code points as sorted, disjoint, non-adjacent closed ranges.
class CharSet {
  public:
    using Range = std::pair<uint32_t, uint32_t>;

    void add(uint32_t lo, uint32_t hi) {
        ranges_.emplace_back(lo, hi);
        normalize();
    }
    void add(const CharSet &other) {
        ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
        normalize();
    }
    CharSet complement() const {
        CharSet out;
        uint32_t next = 0;
        for (const Range &r : ranges_) {
            if (r.first > next) out.ranges_.emplace_back(next, r.first - 1);
            next = r.second + 1;
        }
        if (next <= kMaxCodePoint && !(ranges_.size() && ranges_.back().second == kMaxCodePoint))
            out.ranges_.emplace_back(next, kMaxCodePoint);
        return out;
    }
    CharSet minus(const CharSet &other) const { return complement().with(other).complement(); }
    CharSet with(const CharSet &other) const {
        CharSet out = *this;
        out.add(other);
        return out;
    }
    bool contains(uint32_t cp) const {
        for (const Range &r : ranges_)
            if (cp >= r.first && cp <= r.second) return true;
        return false;
    }
    bool empty() const { return ranges_.empty(); }
    const std::vector<Range> &ranges() const { return ranges_; }

    static CharSet of(std::initializer_list<Range> ranges) {
        CharSet out;
        for (const Range &r : ranges)
            out.ranges_.push_back(r);
        out.normalize();
        return out;
    }
    // The code points `keep` holds, as ranges (built once per shorthand class).
    template <typename Pred>
    static CharSet where(Pred keep) {
        CharSet out;
        bool open = false;
        uint32_t start = 0;
        for (uint32_t cp = 0; cp <= kMaxCodePoint + 1; ++cp) {
            bool in = cp <= kMaxCodePoint && keep(cp);
            if (in && !open) start = cp;
            if (!in && open) out.ranges_.emplace_back(start, cp - 1);
            open = in;
        }
        return out;
    }

  private:
    std::vector<Range> ranges_;

    void normalize() {
        std::sort(ranges_.begin(), ranges_.end());
        std::vector<Range> merged;
        for (const Range &r : ranges_) {
            if (!merged.empty() && r.first <= merged.back().second + 1)
                merged.back().second = std::max(merged.back().second, r.second);
            else
                merged.push_back(r);
        }
        ranges_ = std::move(merged);
    }
};

// The shorthand classes, each the part ECMAScript and Python's `re` agree on: \d is [0-9] in
// ECMAScript and every Unicode digit in Python, so \d is [0-9] and \D leaves out every Unicode
// number; \w and \W likewise with letters, marks and numbers; \s is the whitespace both
// define, and \S leaves out what either calls whitespace. Code points outside ASCII whose
// category the tables do not know (perhaps assigned in a newer Unicode) are left out of \D and
// \W.
const CharSet &digits() {
    static const CharSet set = CharSet::of({{'0', '9'}});
    return set;
}
const CharSet &word() {
    static const CharSet set = CharSet::of({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}});
    return set;
}
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
// `.`: any code point but the line terminators (ECMAScript's four; Python's is \n alone).
const CharSet &dot() {
    static const CharSet set =
        CharSet::of({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}).complement();
    return set;
}

// What the JSON text of a string writes escaped: controls, the quote, the backslash, and DEL
// (the converter's `char` never writes DEL raw). Surrogates are no characters of UTF-8 text.
const CharSet &escaped() {
    static const CharSet set = CharSet::of({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}, {0x7F, 0x7F}});
    return set;
}
const CharSet &surrogates() {
    static const CharSet set = CharSet::of({{0xD800, 0xDFFF}});
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

// A class item as two sets: the code points both engines match (`lower`) and those either may
// match (`upper`). A class uses `lower`; a negated one the complement of `upper`, so that it
// too holds only what both engines match.
struct Sets {
    CharSet lower, upper;
};

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

class PatternParser {
  public:
    PatternParser(std::string_view pattern, const std::string &where, const std::string &any_char,
                  const PatternLimits &limits)
        : where_(where), any_(any_char), limits_(limits) {
        size_t pos = 0;
        uint32_t cp;
        while (pos < pattern.size()) {
            if (!tokenizer::utf8_next(pattern, pos, cp)) invalid("it is not valid UTF-8");
            cps_.push_back(cp);
        }
    }

    std::string run() {
        std::string body = alternation(0);
        if (p_ < cps_.size()) invalid("unbalanced ')'");
        return body;
    }

  private:
    const std::string &where_;
    const std::string &any_;
    const PatternLimits &limits_;
    std::vector<uint32_t> cps_;
    size_t p_ = 0;
    // Whether the expression the last call returned can match the empty string: an unbounded
    // repetition of one would be a left-recursive rule.
    bool nullable_ = false;

    [[noreturn]] void invalid(const std::string &what) const {
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "JSON Schema at %s: 'pattern' is not a valid regular expression: %s (at character "
             "%zu)",
             where_.c_str(), what.c_str(), p_);
    }
    [[noreturn]] void unsupported(const std::string &what) const {
        fail(VKLLM_ERR_UNSUPPORTED,
             "JSON Schema keyword 'pattern' at %s is not supported with %s (at character %zu)",
             where_.c_str(), what.c_str(), p_);
    }

    bool at_end() const { return p_ >= cps_.size(); }
    uint32_t peek(size_t ahead = 0) const {
        return p_ + ahead < cps_.size() ? cps_[p_ + ahead] : 0xFFFFFFFF;
    }

    static std::string choice(const std::vector<std::string> &alts) {
        if (alts.size() == 1) return alts[0];
        std::string out = "(";
        for (size_t i = 0; i < alts.size(); ++i)
            out += (i ? " | " : "") + alts[i];
        return out + ")";
    }

    // Alternatives; at depth 0 each may begin with ^ and end with $, and one without them may
    // have any text before or after its match.
    std::string alternation(int depth) {
        if (depth > limits_.max_depth)
            invalid(sformat("groups nested deeper than %d", limits_.max_depth));
        std::vector<std::string> alts;
        bool nullable = false;
        for (;;) {
            bool start_anchor = false, end_anchor = false;
            if (depth == 0 && peek() == '^') {
                start_anchor = true;
                ++p_;
            }
            std::string seq = sequence(depth, end_anchor);
            nullable = nullable || nullable_;
            if (depth == 0) {
                std::string before = start_anchor ? "" : any_ + "* ";
                std::string after = end_anchor ? "" : " " + any_ + "*";
                seq = "(" + before + seq + after + ")";
            }
            alts.push_back(seq);
            if (peek() != '|') break;
            ++p_;
        }
        nullable_ = nullable;
        return choice(alts);
    }

    std::string sequence(int depth, bool &end_anchor) {
        std::vector<std::string> items;
        bool nullable = true;
        while (!at_end() && peek() != '|' && peek() != ')') {
            if (peek() == '$') {
                ++p_;
                if (depth == 0 && (at_end() || peek() == '|')) {
                    end_anchor = true;
                    break;
                }
                unsupported("'$' before the end of the pattern");
            }
            if (peek() == '^') unsupported("'^' after the start of the pattern");
            std::string item = atom(depth);
            items.push_back(quantified(item));
            nullable = nullable && nullable_;
        }
        nullable_ = nullable;
        if (items.empty()) return "\"\"";
        std::string out;
        for (size_t i = 0; i < items.size(); ++i)
            out += (i ? " " : "") + items[i];
        return items.size() == 1 ? out : "(" + out + ")";
    }

    // A count of {m,n}, or nullopt (then '{' is a literal, as ECMAScript's Annex B and Python
    // read it).
    bool read_count(size_t &at, size_t &value) const {
        size_t start = at;
        value = 0;
        while (at < cps_.size() && cps_[at] >= '0' && cps_[at] <= '9') {
            value = value * 10 + (cps_[at] - '0');
            if (value > limits_.max_count) value = limits_.max_count + 1;
            ++at;
        }
        return at > start;
    }

    std::string quantified(const std::string &item) {
        bool item_nullable = nullable_;
        size_t lo = 0, hi = 0;
        bool bounded = true;
        uint32_t c = peek();
        if (c == '*') {
            bounded = false;
            ++p_;
        } else if (c == '+') {
            lo = 1;
            bounded = false;
            ++p_;
        } else if (c == '?') {
            hi = 1;
            ++p_;
        } else if (c == '{') {
            size_t at = p_ + 1;
            if (at < cps_.size() && cps_[at] == ',')
                unsupported("'{,n}' (Python reads it as {0,n})");
            if (!read_count(at, lo)) return item;
            hi = lo;
            if (at < cps_.size() && cps_[at] == ',') {
                ++at;
                if (!read_count(at, hi)) bounded = false;
            }
            if (at >= cps_.size() || cps_[at] != '}') return item;
            p_ = at + 1;
            if (lo > limits_.max_count || (bounded && hi > limits_.max_count))
                invalid(sformat("a repetition count above %zu", limits_.max_count));
            if (bounded && hi < lo) invalid("a repetition {m,n} with n below m");
        } else {
            return item;
        }
        if (peek() == '?') ++p_;          // lazy: the same language
        if (item == "\"\"") return item;  // an empty group repeated is still empty
        if (!bounded && item_nullable)
            unsupported("an unbounded repetition of a part that can match the empty string");
        nullable_ = item_nullable || lo == 0;
        if (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{')
            invalid("nothing to repeat");
        const std::string &group = item;
        if (!bounded) {
            if (lo == 0) return group + "*";
            if (lo == 1) return group + "+";
            return group + sformat("{%zu,}", lo);
        }
        if (lo == 0 && hi == 1) return group + "?";
        if (lo == hi) return group + sformat("{%zu}", lo);
        return group + sformat("{%zu,%zu}", lo, hi);
    }

    std::string atom(int depth) {
        nullable_ = false;
        uint32_t c = peek();
        if (c == '(') {
            ++p_;
            if (peek() == '?') {
                if (peek(1) == ':') {
                    p_ += 2;
                } else if (peek(1) == '<' && peek(2) != '=' && peek(2) != '!') {
                    p_ += 2;  // a named group: its name does not change the language
                    while (!at_end() && peek() != '>')
                        ++p_;
                    if (at_end()) invalid("an unterminated group name");
                    ++p_;
                } else if (peek(1) == '=' || peek(1) == '!' || peek(1) == '<') {
                    unsupported("a lookaround assertion");
                } else {
                    invalid("'(?' followed by something other than ':', '<name>' or a lookaround");
                }
            }
            std::string inner = alternation(depth + 1);
            if (peek() != ')') invalid("an unclosed '('");
            ++p_;
            // Every expression written here is one item (a literal, a class, or parenthesized)
            // except a quantified one, which a further quantifier needs parenthesized.
            char last = inner.back();
            bool quantified = last == '*' || last == '+' || last == '?' || last == '}';
            return quantified ? "(" + inner + ")" : inner;
        }
        if (c == '*' || c == '+' || c == '?') invalid("nothing to repeat");
        if (c == '[') return set_text(char_class());
        if (c == '{') {
            size_t at = p_ + 1, n;
            if (read_count(at, n) || (at < cps_.size() && cps_[at] == ','))
                invalid("nothing to repeat");
        }
        if (c == '.') {
            ++p_;
            return set_text(dot());
        }
        if (c == '\\') {
            ++p_;
            Sets sets = escape(false);
            return set_text(sets.lower);
        }
        ++p_;
        return char_text(c);
    }

    // After a backslash: a shorthand class or one code point.
    Sets escape(bool in_class) {
        if (at_end()) invalid("a '\\' at the end");
        uint32_t c = cps_[p_++];
        switch (c) {
            case 'd':
            case 'D':
            case 'w':
            case 'W':
            case 's':
            case 'S':
                return shorthand(c);
            case 'b':
                if (in_class) return same('\b');
                unsupported("'\\b' (a word boundary)");
            case 'B':
                unsupported("'\\B' (a word boundary)");
            case 'p':
            case 'P':
                unsupported("a Unicode property class '\\p{...}'");
            case 'k':
                unsupported("a named backreference");
            case 'c':
                unsupported("a control escape '\\c'");
            case 't':
                return same('\t');
            case 'n':
                return same('\n');
            case 'r':
                return same('\r');
            case 'f':
                return same('\f');
            case 'v':
                return same('\v');
            case '0':
                if (peek() >= '0' && peek() <= '9') unsupported("an octal escape");
                return same(0);
            case 'x':
            case 'u': {
                size_t n = c == 'x' ? 2 : 4;
                if (c == 'u' && peek() == '{') unsupported("a '\\u{...}' escape");
                uint32_t v = 0;
                for (size_t i = 0; i < n; ++i) {
                    uint32_t h = peek();
                    int d = h >= '0' && h <= '9'   ? int(h - '0')
                            : h >= 'a' && h <= 'f' ? int(h - 'a' + 10)
                            : h >= 'A' && h <= 'F' ? int(h - 'A' + 10)
                                                   : -1;
                    if (d < 0) invalid(sformat("'\\%c' without %zu hex digits", char(c), n));
                    v = v * 16 + uint32_t(d);
                    ++p_;
                }
                if (v >= 0xD800 && v <= 0xDFFF) unsupported("a surrogate escape");
                return same(v);
            }
            default:
                if (c >= '1' && c <= '9') unsupported("a backreference");
                // Other letters and digits are errors under the 'u' flag and differ between
                // engines; punctuation stands for itself.
                if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
                    unsupported(sformat("the escape '\\%c'", char(c)));
                return same(c);
        }
    }

    CharSet char_class() {
        ++p_;  // '['
        bool negated = false;
        if (peek() == '^') {
            negated = true;
            ++p_;
        }
        // ECMAScript reads "[]" as no character and "[^]" as any, Python "[]...]" as a class
        // holding ']'.
        if (peek() == ']') unsupported("a class that begins with ']'");
        Sets sets;
        while (!at_end() && peek() != ']') {
            Sets lo = item_in_class();
            if (peek() == '-' && peek(1) != ']' && peek(1) != 0xFFFFFFFF) {
                ++p_;
                Sets hi = item_in_class();
                if (lo.lower.ranges().size() != 1 ||
                    lo.lower.ranges()[0].first != lo.lower.ranges()[0].second ||
                    lo.upper.ranges().size() != 1 || hi.lower.ranges().size() != 1 ||
                    hi.lower.ranges()[0].first != hi.lower.ranges()[0].second ||
                    hi.upper.ranges().size() != 1)
                    unsupported("a class range with a class at one end");
                uint32_t a = lo.lower.ranges()[0].first, b = hi.lower.ranges()[0].first;
                if (b < a) invalid("a class range out of order");
                sets.lower.add(a, b);
                sets.upper.add(a, b);
            } else {
                sets.lower.add(lo.lower);
                sets.upper.add(lo.upper);
            }
        }
        if (at_end()) invalid("an unterminated '['");
        ++p_;  // ']'
        CharSet set = negated ? sets.upper.complement() : sets.lower;
        if (set.minus(surrogates()).empty()) unsupported("a class that matches no character");
        return set;
    }

    Sets item_in_class() {
        uint32_t c = cps_[p_++];
        if (c == '\\') return escape(true);
        if (c == '[' && (peek() == ':' || peek() == '=' || peek() == '.'))
            unsupported("a POSIX class '[:...:]'");
        return same(c);
    }
};

}  // namespace

std::string pattern_to_gbnf(std::string_view pattern, const std::string &where,
                            const std::string &any_char, const PatternLimits &limits) {
    if (pattern.size() > limits.max_bytes)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "JSON Schema at %s: 'pattern' is longer than %zu bytes (the limit)", where.c_str(),
             limits.max_bytes);
    return PatternParser(pattern, where, any_char, limits).run();
}

}  // namespace vkllm::grammar::schema
