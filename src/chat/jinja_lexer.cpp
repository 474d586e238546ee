#include "chat/jinja_lexer.h"

#include <cstring>

#include "chat/jinja_text.h"
#include "common/error.h"

namespace vkllm::chat {

std::string position_of(std::string_view text, size_t offset) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else if ((uint8_t(text[i]) & 0xc0) != 0x80) {
            ++column;
        }
    }
    return sformat("line %zu, column %zu", line, column);
}

namespace {

// Python's whitespace (what jinja2's \s matches), as the length of its UTF-8 bytes at s[p]
// (space_at) or ending at s[end] (space_before); 0 when there is none.
size_t space_length(std::string_view s) {
    if (s.empty()) return 0;
    unsigned char c = uint8_t(s[0]);
    if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) return 1;
    static const char *wide[] = {"\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80", "\xe2\x80\xa8",
                                 "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
    for (const char *w : wide)
        if (s.substr(0, std::strlen(w)) == w) return std::strlen(w);
    // U+2000..U+200A
    if (s.size() >= 3 && c == 0xe2 && uint8_t(s[1]) == 0x80 && uint8_t(s[2]) >= 0x80 &&
        uint8_t(s[2]) <= 0x8a)
        return 3;
    return 0;
}

size_t space_at(std::string_view s, size_t p) {
    return p < s.size() ? space_length(s.substr(p)) : 0;
}

size_t space_before(std::string_view s, size_t end) {
    for (size_t n = 1; n <= 3 && n <= end; ++n)
        if (space_length(s.substr(end - n, n)) == n) return n;
    return 0;
}

size_t skip_space(std::string_view s, size_t p) {
    while (size_t n = space_at(s, p))
        p += n;
    return p;
}

void rstrip(std::string &text) {
    while (size_t n = space_before(text, text.size()))
        text.resize(text.size() - n);
}

bool name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool digit(char c) {
    return c >= '0' && c <= '9';
}

std::string normalise(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == '\r') {
            out += '\n';
            if (i + 1 < in.size() && in[i + 1] == '\n') ++i;
        } else {
            out += in[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

class Lexer {
  public:
    explicit Lexer(std::string_view source) { result_.source = normalise(source); }

    LexedTemplate run() {
        const std::string &s = result_.source;
        size_t pos = 0;
        bool line_starting = true;
        while (pos < s.size()) {
            size_t start = find_tag(pos);
            if (start == std::string::npos) {
                emit_text(s.substr(pos));
                break;
            }
            std::string text = s.substr(pos, start - pos);
            char kind = s[start + 1];
            size_t p = start + 2;
            if (p < s.size() && s[p] == '-') {
                rstrip(text);
                ++p;
            } else if (kind != '{' && p < s.size() && s[p] == '+') {
                ++p;  // "{%+": no lstrip
            } else if (kind != '{') {
                lstrip(text, line_starting);
            }
            emit_text(text);
            if (kind == '#') {
                size_t end = s.find("#}", p);
                if (end == std::string::npos) error(start, "unterminated comment");
                bool minus = end > p && s[end - 1] == '-';
                bool keep = end > p && s[end - 1] == '+';
                pos = after_tag(end + 2, minus, !keep, line_starting);
                continue;
            }
            if (kind == '%' && raw_block(start, p, pos, line_starting)) continue;
            push(kind == '{' ? Token::Type::VarBegin : Token::Type::BlockBegin, "", start);
            pos = tag(p, kind == '{', line_starting);
        }
        push(Token::Type::End, "", s.size());
        return std::move(result_);
    }

  private:
    LexedTemplate result_;

    [[noreturn]] void error(size_t offset, const char *what) {
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s", position_of(result_.source, offset).c_str(),
             what);
    }

    void push(Token::Type type, std::string text, size_t offset) {
        result_.tokens.push_back(Token{type, std::move(text), offset});
    }

    void emit_text(std::string text) {
        if (!text.empty()) push(Token::Type::Text, std::move(text), 0);
    }

    size_t find_tag(size_t from) const {
        const std::string &s = result_.source;
        for (size_t i = s.find('{', from); i != std::string::npos; i = s.find('{', i + 1))
            if (i + 1 < s.size() && (s[i + 1] == '{' || s[i + 1] == '%' || s[i + 1] == '#'))
                return i;
        return std::string::npos;
    }

    // lstrip_blocks: whitespace between the line's start and a block or comment tag goes.
    static void lstrip(std::string &text, bool line_starting) {
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if (l_pos == 0 && !line_starting) return;
        if (l_pos == text.size()) return;
        if (skip_space(text, l_pos) != text.size()) return;
        text.resize(l_pos);
    }

    // After a tag's closing delimiter: "-" eats all following whitespace, trim_blocks one
    // newline (block and comment tags only). Returns the position of the next text.
    size_t after_tag(size_t pos, bool minus, bool trim, bool &line_starting) {
        const std::string &s = result_.source;
        size_t start = pos;
        if (minus) {
            pos = skip_space(s, pos);
        } else if (trim && pos < s.size() && s[pos] == '\n') {
            ++pos;
        }
        line_starting = pos > start && s[pos - 1] == '\n';
        return pos;
    }

    // {% raw %}...{% endraw %}: the inside is text. Returns false when the tag is not "raw".
    bool raw_block(size_t start, size_t p, size_t &pos, bool &line_starting) {
        const std::string &s = result_.source;
        size_t q = p;
        q = skip_space(s, q);
        if (s.compare(q, 3, "raw") != 0 ||
            (q + 3 < s.size() && (name_start(s[q + 3]) || digit(s[q + 3]))))
            return false;
        q += 3;
        q = skip_space(s, q);
        bool minus = s.compare(q, 3, "-%}") == 0;
        if (!minus && s.compare(q, 2, "%}") != 0) error(q, "expected '%}' after 'raw'");
        // jinja2 trims no newline after {% raw %} (its pattern has no block suffix there).
        size_t body = after_tag(q + (minus ? 3 : 2), minus, false, line_starting);
        for (size_t e = s.find("{%", body); e != std::string::npos; e = s.find("{%", e + 2)) {
            size_t r = e + 2;
            char before = r < s.size() ? s[r] : '\0';
            if (before == '-' || before == '+') ++r;
            r = skip_space(s, r);
            if (s.compare(r, 6, "endraw") != 0) continue;
            r = skip_space(s, r + 6);
            char after = s.compare(r, 3, "-%}") == 0   ? '-'
                         : s.compare(r, 3, "+%}") == 0 ? '+'
                                                       : '\0';
            if (!after && s.compare(r, 2, "%}") != 0) continue;
            std::string text = s.substr(body, e - body);
            if (before == '-')
                rstrip(text);
            else if (before != '+')
                lstrip(text, line_starting);
            emit_text(text);
            pos = after_tag(r + (after ? 3 : 2), after == '-', after != '+', line_starting);
            return true;
        }
        error(start, "unterminated raw block");
    }

    // The tokens of one {{ }} or {% %} tag; returns the position after it.
    size_t tag(size_t p, bool variable, bool &line_starting) {
        const std::string &s = result_.source;
        int depth = 0;  // open brackets: "}}" inside {{ {'a': {'b': 1}} }} does not end the tag
        for (;;) {
            p = skip_space(s, p);
            if (p >= s.size())
                error(p, variable ? "unexpected end of template, expected '}}'"
                                  : "unexpected end of template, expected '%}'");
            if (depth == 0) {
                const char *close = variable ? "}}" : "%}";
                bool minus = s[p] == '-' && s.compare(p + 1, 2, close) == 0;
                bool plus = !variable && s[p] == '+' && s.compare(p + 1, 2, close) == 0;
                if (minus || plus || s.compare(p, 2, close) == 0) {
                    push(variable ? Token::Type::VarEnd : Token::Type::BlockEnd, "", p);
                    size_t end = p + (minus || plus ? 3 : 2);
                    return after_tag(end, minus, !variable && !plus, line_starting);
                }
            }
            char c = s[p];
            if (name_start(c)) {
                size_t q = p;
                while (q < s.size() && (name_start(s[q]) || digit(s[q])))
                    ++q;
                push(Token::Type::Name, s.substr(p, q - p), p);
                p = q;
            } else if (digit(c)) {
                p = number(p);
            } else if (c == '\'' || c == '"') {
                p = string(p);
            } else {
                static const char *two[] = {"**", "//", "==", "!=", "<=", ">="};
                std::string op(1, c);
                for (const char *t : two)
                    if (s.compare(p, 2, t) == 0) op = t;
                if (op.size() == 1 && !std::strchr("+-*/%~()[]{}<>=.:|,", c))
                    error(p, sformat("unexpected char '%c'", c).c_str());
                if (op == "(" || op == "[" || op == "{") ++depth;
                if ((op == ")" || op == "]" || op == "}") && depth > 0) --depth;
                push(Token::Type::Op, op, p);
                p += op.size();
            }
        }
    }

    size_t number(size_t p) {
        const std::string &s = result_.source;
        size_t q = p;
        auto digits = [&] {
            while (q < s.size() &&
                   (digit(s[q]) || (s[q] == '_' && q + 1 < s.size() && digit(s[q + 1]))))
                ++q;
        };
        digits();
        // After "." (x.0.1) a number is an index, never a float.
        bool after_dot = !result_.tokens.empty() && result_.tokens.back().type == Token::Type::Op &&
                         result_.tokens.back().text == ".";
        bool is_float = false;
        if (!after_dot && q + 1 < s.size() && s[q] == '.' && digit(s[q + 1])) {
            ++q;
            digits();
            is_float = true;
        }
        if (!after_dot && q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
            size_t r = q + 1;
            if (r < s.size() && (s[r] == '+' || s[r] == '-')) ++r;
            if (r < s.size() && digit(s[r])) {
                q = r;
                digits();
                is_float = true;
            }
        }
        std::string text;
        for (size_t i = p; i < q; ++i)
            if (s[i] != '_') text += s[i];
        push(is_float ? Token::Type::Float : Token::Type::Int, text, p);
        return q;
    }

    // A quoted string with Python's escapes (\n \t \xhh \uXXXX ...; unknown ones kept).
    size_t string(size_t p) {
        const std::string &s = result_.source;
        char quote = s[p];
        std::string out;
        size_t q = p + 1;
        for (;;) {
            if (q >= s.size()) error(p, "unterminated string");
            char c = s[q];
            if (c == quote) break;
            if (c != '\\') {
                out += c;
                ++q;
                continue;
            }
            if (q + 1 >= s.size()) error(p, "unterminated string");
            char e = s[q + 1];
            q += 2;
            switch (e) {
                case '\n':
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '\'':
                    out += '\'';
                    break;
                case '"':
                    out += '"';
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case 'x':
                case 'u':
                case 'U': {
                    size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    char32_t v = 0;
                    for (size_t i = 0; i < n; ++i) {
                        char h = q + i < s.size() ? s[q + i] : '\0';
                        int d = digit(h)                 ? h - '0'
                                : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                                : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                         : -1;
                        if (d < 0) error(q - 2, "truncated \\x, \\u or \\U escape");
                        v = v * 16 + char32_t(d);
                    }
                    if (v > 0x10ffff) error(q - 2, "illegal Unicode character");
                    q += n;
                    utf8_append(out, v);
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        char32_t v = char32_t(e - '0');
                        for (int i = 0; i < 2 && q < s.size() && s[q] >= '0' && s[q] <= '7'; ++i)
                            v = v * 8 + char32_t(s[q++] - '0');
                        utf8_append(out, v);
                    } else {
                        out += '\\';
                        out += e;
                    }
            }
        }
        push(Token::Type::String, out, p);
        return q + 1;
    }
};

}  // namespace

LexedTemplate lex_template(std::string_view source) {
    return Lexer(source).run();
}

}  // namespace vkllm::chat
