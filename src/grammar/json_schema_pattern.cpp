#include "grammar/json_schema_pattern.h"

#include <string>
#include <vector>

#include "common/error.h"
#include "grammar/json_schema_charset.h"
#include "grammar/json_schema_rules.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar::schema {

namespace {

using pattern::char_text;
using pattern::CharSet;
using pattern::digits;
using pattern::dot;
using pattern::same;
using pattern::set_text;
using pattern::Sets;
using pattern::shorthand;
using pattern::surrogates;
using pattern::word;

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
