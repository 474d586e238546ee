#include "grammar/gbnf_parser.h"

#include <cstdarg>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "grammar/grammar_check.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar {

namespace {

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

class Parser {
  public:
    Parser(std::string_view text, const GbnfLimits &limits) : s_(text), limits_(limits) {}

    Grammar run(std::string_view root) {
        if (s_.size() > limits_.max_text_bytes)
            fail_at(0, "the grammar is %zu bytes, more than the limit of %zu", s_.size(),
                    limits_.max_text_bytes);
        skip_space(true);
        while (p_ < s_.size())
            parse_rule();
        return finish(root);
    }

  private:
    struct Symbol {
        std::string name;
        bool defined = false;
        size_t defined_at = 0;     // offset of the definition (helpers: of what made them)
        size_t referenced_at = 0;  // offset of the first reference
        bool referenced = false;
        std::string owner;  // the user's rule a helper belongs to
        std::vector<Element> body;
    };

    std::string_view s_;
    GbnfLimits limits_;
    size_t p_ = 0;
    std::vector<Symbol> symbols_;
    std::unordered_map<std::string, uint32_t> ids_;
    size_t elements_ = 0;  // elements emitted so far, a bound on the grammar's final size

    std::string position(size_t offset) const {
        size_t line = 1, column = 1;
        for (size_t i = 0; i < offset && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                column = 1;
            } else if ((uint8_t(s_[i]) & 0xc0) != 0x80) {
                ++column;
            }
        }
        return sformat("line %zu, column %zu", line, column);
    }

    // Throws "line L, column C: <message>" for the place `offset` of the text.
    [[noreturn]] VKLLM_PRINTF_LIKE(3, 4) void fail_at(size_t offset, const char *fmt, ...) const {
        va_list args;
        va_start(args, fmt);
        char what[512];
        std::vsnprintf(what, sizeof what, fmt, args);
        va_end(args);
        throw Error(VKLLM_ERR_INVALID_ARGUMENT, position(offset) + ": " + what);
    }

    char peek(size_t ahead = 0) const { return p_ + ahead < s_.size() ? s_[p_ + ahead] : '\0'; }
    bool at_end() const { return p_ >= s_.size(); }

    // Blanks and comments; newlines too where the rule goes on (inside parentheses, after `|`).
    void skip_space(bool newlines) {
        while (p_ < s_.size()) {
            char c = s_[p_];
            if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
                ++p_;
            } else if (c == '#') {
                while (p_ < s_.size() && s_[p_] != '\n' && s_[p_] != '\r')
                    ++p_;
            } else {
                break;
            }
        }
    }

    void count_elements(size_t n) {
        elements_ += n;
        if (elements_ > limits_.max_elements)
            fail_at(p_,
                    "the grammar grows past %zu elements (repetitions are expanded: use "
                    "smaller counts)",
                    limits_.max_elements);
    }

    uint32_t symbol(const std::string &name, size_t offset) {
        auto [it, added] = ids_.emplace(name, uint32_t(symbols_.size()));
        if (added) new_symbol(name, offset);
        return it->second;
    }

    uint32_t helper(const std::string &owner, size_t offset) {
        // Names no user rule can have (a user name cannot contain '#'), so they never clash.
        std::string name = owner + "#" + std::to_string(symbols_.size());
        uint32_t id = symbol(name, offset);
        symbols_[id].owner = owner;
        symbols_[id].defined = true;
        symbols_[id].defined_at = offset;
        return id;
    }

    void new_symbol(const std::string &name, size_t offset) {
        if (symbols_.size() >= limits_.max_rules)
            fail_at(offset, "more than %zu rules (repetitions and groups count as rules)",
                    limits_.max_rules);
        Symbol sym;
        sym.name = name;
        sym.owner = name;
        symbols_.push_back(std::move(sym));
    }

    std::string parse_name() {
        size_t start = p_;
        while (is_name_char(peek()))
            ++p_;
        if (p_ == start) fail_at(start, "expected a rule name");
        return std::string(s_.substr(start, p_ - start));
    }

    void parse_rule() {
        size_t start = p_;
        if (!is_name_char(peek()))
            fail_at(p_, "expected a rule name at the start of a rule, found %s",
                    describe().c_str());
        std::string name = parse_name();
        skip_space(false);
        if (s_.substr(p_, 3) != "::=")
            fail_at(p_, "expected '::=' after rule name '%s'", name.c_str());
        p_ += 3;
        uint32_t id = symbol(name, start);
        Symbol &sym = symbols_[id];
        if (sym.defined)
            fail_at(start, "rule '%s' is defined twice (first at %s)", name.c_str(),
                    position(sym.defined_at).c_str());
        sym.defined = true;
        sym.defined_at = start;
        skip_space(true);
        parse_alternatives(name, id, false, 0);
        if (peek() == '\r') {
            ++p_;
            if (peek() == '\n') ++p_;
        } else if (peek() == '\n') {
            ++p_;
        } else if (!at_end()) {
            fail_at(p_, "unexpected %s in rule '%s'", describe().c_str(), name.c_str());
        }
        skip_space(true);
    }

    std::string describe() const {
        if (at_end()) return "end of grammar";
        char c = peek();
        if (uint8_t(c) >= 0x20 && uint8_t(c) < 0x7f) return sformat("'%c'", c);
        return sformat("byte 0x%02X", unsigned(uint8_t(c)));
    }

    void parse_alternatives(const std::string &owner, uint32_t id, bool nested, int depth) {
        std::vector<Element> body;
        parse_sequence(owner, body, nested, depth);
        while (peek() == '|') {
            body.push_back({ElementType::Alt, 0});
            ++p_;
            skip_space(true);
            parse_sequence(owner, body, nested, depth);
        }
        body.push_back({ElementType::End, 0});
        count_elements(2);
        symbols_[id].body = std::move(body);
    }

    uint32_t parse_char(const char *where) {
        size_t start = p_;
        if (at_end()) fail_at(p_, "unterminated %s", where);
        char c = s_[p_];
        if (c != '\\') {
            tokenizer::Utf8Char u = tokenizer::utf8_decode(s_, p_);
            if (!u.valid) fail_at(p_, "invalid UTF-8 in %s", where);
            p_ += u.len;
            return u.cp;
        }
        char e = peek(1);
        p_ += 2;
        switch (e) {
            case 'x':
                return parse_hex(2, start);
            case 'u':
                return parse_hex(4, start);
            case 'U':
                return parse_hex(8, start);
            case 't':
                return '\t';
            case 'n':
                return '\n';
            case 'r':
                return '\r';
            case '\\':
            case '"':
            case '[':
            case ']':
            case '-':
                return uint32_t(e);
            default:
                break;
        }
        if (e == '\0' && p_ > s_.size()) fail_at(start, "unterminated %s", where);
        fail_at(start, "unknown escape '\\%c' in %s", e, where);
    }

    uint32_t parse_hex(int digits, size_t start) {
        uint32_t v = 0;
        for (int i = 0; i < digits; ++i) {
            char c = peek();
            uint32_t d;
            if (c >= '0' && c <= '9') {
                d = uint32_t(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                d = uint32_t(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                d = uint32_t(c - 'A' + 10);
            } else {
                fail_at(start, "expected %d hex digits after '\\%c'", digits, s_[start + 1]);
            }
            v = v * 16 + d;
            ++p_;
        }
        if (v > kMaxCodePoint) fail_at(start, "code point 0x%X is beyond U+10FFFF", v);
        return v;
    }

    void parse_literal(std::vector<Element> &body) {
        size_t start = p_++;
        while (peek() != '"') {
            if (at_end()) fail_at(start, "unterminated string");
            body.push_back({ElementType::Char, parse_char("string")});
            count_elements(1);
        }
        ++p_;
    }

    void parse_class(std::vector<Element> &body) {
        size_t start = p_++;
        ElementType first = ElementType::Char;
        if (peek() == '^') {
            first = ElementType::CharNot;
            ++p_;
        }
        size_t begin = body.size();
        while (peek() != ']') {
            if (at_end()) fail_at(start, "unterminated character class");
            size_t item = p_;
            uint32_t low = parse_char("character class");
            body.push_back({body.size() == begin ? first : ElementType::CharAlt, low});
            count_elements(1);
            if (peek() == '-' && peek(1) != ']' && p_ + 1 < s_.size()) {
                ++p_;
                uint32_t high = parse_char("character class");
                if (high < low)
                    fail_at(item, "range end U+%04X is before its start U+%04X", high, low);
                body.push_back({ElementType::CharUpper, high});
                count_elements(1);
            }
        }
        if (body.size() == begin) fail_at(start, "empty character class");
        ++p_;
    }

    uint32_t parse_count() {
        size_t start = p_;
        uint64_t v = 0;
        while (is_digit(peek())) {
            v = v * 10 + uint64_t(peek() - '0');
            if (v > limits_.max_repetition)
                fail_at(start, "repetition count is above the limit of %u", limits_.max_repetition);
            ++p_;
        }
        if (p_ == start) fail_at(start, "expected a number, found %s", describe().c_str());
        return uint32_t(v);
    }

    // S{min,max} (max UINT32_MAX: unbounded) replaces the last item S of `body`, which starts at
    // `item`: S repeated min times, then helpers for the optional rest. Bounded:
    // S' ::= S S'' |, ... , S''' ::= S |; unbounded: S' ::= S S' |.
    void repeat(const std::string &owner, std::vector<Element> &body, size_t item, uint32_t min,
                uint32_t max, size_t at) {
        if (item == body.size()) fail_at(at, "a repetition operator needs an item before it");
        std::vector<Element> s(body.begin() + long(item), body.end());
        body.resize(item);
        for (uint32_t i = 0; i < min; ++i) {
            count_elements(s.size());
            body.insert(body.end(), s.begin(), s.end());
        }
        bool unbounded = max == UINT32_MAX;
        uint32_t optional = unbounded ? 1 : max - min;
        uint32_t inner = 0;
        for (uint32_t i = 0; i < optional; ++i) {
            uint32_t id = helper(owner, at);
            std::vector<Element> rest = s;
            if (unbounded)
                rest.push_back({ElementType::RuleRef, id});
            else if (i > 0)
                rest.push_back({ElementType::RuleRef, inner});
            rest.push_back({ElementType::Alt, 0});
            rest.push_back({ElementType::End, 0});
            count_elements(rest.size());
            symbols_[id].body = std::move(rest);
            inner = id;
        }
        if (optional > 0) {
            body.push_back({ElementType::RuleRef, inner});
            count_elements(1);
        }
    }

    void parse_sequence(const std::string &owner, std::vector<Element> &body, bool nested,
                        int depth) {
        size_t item = body.size();  // where the last item starts, for a repetition after it
        while (!at_end()) {
            char c = peek();
            size_t at = p_;
            if (c == '"') {
                item = body.size();
                parse_literal(body);
            } else if (c == '[') {
                item = body.size();
                parse_class(body);
            } else if (is_name_char(c)) {
                std::string name = parse_name();
                uint32_t id = symbol(name, at);
                if (!symbols_[id].referenced) {
                    symbols_[id].referenced = true;
                    symbols_[id].referenced_at = at;
                }
                item = body.size();
                body.push_back({ElementType::RuleRef, id});
                count_elements(1);
            } else if (c == '(') {
                if (depth + 1 > limits_.max_nesting)
                    fail_at(at, "parentheses nested deeper than %d", limits_.max_nesting);
                ++p_;
                skip_space(true);
                uint32_t id = helper(owner, at);
                parse_alternatives(owner, id, true, depth + 1);
                if (peek() != ')')
                    fail_at(p_, "expected ')' to close the '(' at %s, found %s",
                            position(at).c_str(), describe().c_str());
                ++p_;
                item = body.size();
                body.push_back({ElementType::RuleRef, id});
                count_elements(1);
            } else if (c == '.') {
                ++p_;
                item = body.size();
                body.push_back({ElementType::CharAny, 0});
                count_elements(1);
            } else if (c == '*' || c == '+' || c == '?') {
                ++p_;
                uint32_t min = c == '+' ? 1 : 0;
                uint32_t max = c == '?' ? 1 : UINT32_MAX;
                repeat(owner, body, item, min, max, at);
            } else if (c == '{') {
                ++p_;
                skip_space(nested);
                uint32_t min = parse_count();
                uint32_t max = min;
                skip_space(nested);
                if (peek() == ',') {
                    ++p_;
                    skip_space(nested);
                    max = is_digit(peek()) ? parse_count() : UINT32_MAX;
                    skip_space(nested);
                }
                if (peek() != '}')
                    fail_at(p_, "expected '}' to close the '{' at %s, found %s",
                            position(at).c_str(), describe().c_str());
                ++p_;
                if (max < min)
                    fail_at(at, "repetition {%u,%u} has its maximum below its minimum", min, max);
                repeat(owner, body, item, min, max, at);
            } else if (c == '<' || c == '!') {
                fail_at(at, "token references (<...>, !<...>) are not supported");
            } else {
                break;
            }
            skip_space(nested);
        }
    }

    Grammar finish(std::string_view root) {
        for (const Symbol &sym : symbols_)
            if (!sym.defined) fail_at(sym.referenced_at, "undefined rule '%s'", sym.name.c_str());
        auto it = ids_.find(std::string(root));
        if (it == ids_.end())
            throw Error(VKLLM_ERR_INVALID_ARGUMENT,
                        sformat("the grammar defines no rule '%.*s' to start from",
                                int(root.size()), root.data()));
        Grammar g;
        g.root = it->second;
        g.elements.reserve(elements_);
        for (Symbol &sym : symbols_) {
            g.rule_start.push_back(uint32_t(g.elements.size()));
            g.elements.insert(g.elements.end(), sym.body.begin(), sym.body.end());
            g.names.push_back(sym.name);
        }
        int64_t left = find_left_recursion(g);
        if (left >= 0) {
            const Symbol &sym = symbols_[size_t(left)];
            fail_at(sym.defined_at,
                    "rule '%s' is left-recursive: it can reach itself before "
                    "matching a character (write it with repetition instead)",
                    sym.owner.c_str());
        }
        return g;
    }
};

}  // namespace

Grammar parse_gbnf(std::string_view text, std::string_view root, const GbnfLimits &limits) {
    return Parser(text, limits).run(root);
}

}  // namespace vkllm::grammar
