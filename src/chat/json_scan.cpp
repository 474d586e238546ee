#include "chat/json_scan.h"

#include "chat/jinja_text.h"

#include <cstdint>

namespace vkllm::chat {

namespace {

constexpr int kMaxDepth = 512;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t skip_space(std::string_view s, size_t i) {
    while (i < s.size() && is_space(s[i]))
        ++i;
    return i;
}

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

class Scanner {
  public:
    explicit Scanner(std::string_view s) : s_(s) {}

    JsonScan value(size_t &i, int depth) {
        i = skip_space(s_, i);
        if (i >= s_.size()) return JsonScan::Incomplete;
        if (depth > kMaxDepth) return JsonScan::Invalid;
        char c = s_[i];
        if (c == '{' || c == '[') return container(i, depth);
        if (c == '"') return string(i);
        if (c == '-' || (c >= '0' && c <= '9')) return number(i);
        for (std::string_view word : {"true", "false", "null"}) {
            size_t n = std::min(word.size(), s_.size() - i);
            if (s_.substr(i, n) != word.substr(0, n)) continue;
            if (n < word.size()) return JsonScan::Incomplete;
            i += n;
            return JsonScan::Complete;
        }
        return JsonScan::Invalid;
    }

  private:
    JsonScan container(size_t &i, int depth) {
        const char close = s_[i] == '{' ? '}' : ']';
        const bool object = close == '}';
        ++i;
        i = skip_space(s_, i);
        if (i >= s_.size()) return JsonScan::Incomplete;
        if (s_[i] == close) {
            ++i;
            return JsonScan::Complete;
        }
        for (;;) {
            if (object) {
                i = skip_space(s_, i);
                if (i >= s_.size()) return JsonScan::Incomplete;
                if (s_[i] != '"') return JsonScan::Invalid;
                if (JsonScan r = string(i); r != JsonScan::Complete) return r;
                i = skip_space(s_, i);
                if (i >= s_.size()) return JsonScan::Incomplete;
                if (s_[i++] != ':') return JsonScan::Invalid;
            }
            if (JsonScan r = value(i, depth + 1); r != JsonScan::Complete) return r;
            i = skip_space(s_, i);
            if (i >= s_.size()) return JsonScan::Incomplete;
            if (s_[i] == close) {
                ++i;
                return JsonScan::Complete;
            }
            if (s_[i++] != ',') return JsonScan::Invalid;
        }
    }

    JsonScan string(size_t &i) {
        for (++i; i < s_.size(); ++i) {
            unsigned char c = uint8_t(s_[i]);
            if (c == '"') {
                ++i;
                return JsonScan::Complete;
            }
            if (c < 0x20) return JsonScan::Invalid;
            if (c != '\\') continue;
            if (++i >= s_.size()) return JsonScan::Incomplete;
            if (s_[i] == 'u') {
                for (int k = 0; k < 4; ++k) {
                    if (++i >= s_.size()) return JsonScan::Incomplete;
                    if (hex_digit(s_[i]) < 0) return JsonScan::Invalid;
                }
            } else if (std::string_view("\"\\/bfnrt").find(s_[i]) == std::string_view::npos) {
                return JsonScan::Invalid;
            }
        }
        return JsonScan::Incomplete;
    }

    // A number ends at the first character that cannot continue it; at the end of the text it
    // may still grow, so it is Incomplete there.
    JsonScan number(size_t &i) {
        size_t start = i;
        if (s_[i] == '-') ++i;
        auto digits = [&] {
            size_t from = i;
            while (i < s_.size() && s_[i] >= '0' && s_[i] <= '9')
                ++i;
            return i - from;
        };
        size_t whole = digits();
        if (i >= s_.size()) return JsonScan::Incomplete;
        if (whole == 0 || (whole > 1 && s_[start + (s_[start] == '-')] == '0'))
            return JsonScan::Invalid;
        if (s_[i] == '.') {
            ++i;
            if (digits() == 0) return i >= s_.size() ? JsonScan::Incomplete : JsonScan::Invalid;
            if (i >= s_.size()) return JsonScan::Incomplete;
        }
        if (s_[i] == 'e' || s_[i] == 'E') {
            ++i;
            if (i < s_.size() && (s_[i] == '+' || s_[i] == '-')) ++i;
            if (digits() == 0) return i >= s_.size() ? JsonScan::Incomplete : JsonScan::Invalid;
            if (i >= s_.size()) return JsonScan::Incomplete;
        }
        return JsonScan::Complete;
    }

    std::string_view s_;
};

}  // namespace

JsonScan json_scan(std::string_view s, size_t begin, size_t *end) {
    size_t i = begin;
    JsonScan r = Scanner(s).value(i, 0);
    if (r == JsonScan::Complete) *end = i;
    return r;
}

bool json_members(std::string_view s, std::vector<std::pair<std::string, std::string_view>> *out) {
    out->clear();
    size_t end = 0;
    size_t i = skip_space(s, 0);
    if (i >= s.size() || s[i] != '{' || json_scan(s, i, &end) != JsonScan::Complete ||
        skip_space(s, end) != s.size())
        return false;
    // The whole object is valid, so the walk below needs no checks of its own.
    i = skip_space(s, i + 1);
    while (s[i] != '}') {
        size_t key_end = 0, value_end = 0;
        json_scan(s, i, &key_end);
        std::string key;
        json_string(s.substr(i, key_end - i), &key);
        size_t v = skip_space(s, skip_space(s, key_end) + 1);
        json_scan(s, v, &value_end);
        out->emplace_back(std::move(key), s.substr(v, value_end - v));
        i = skip_space(s, value_end);
        if (s[i] == ',') i = skip_space(s, i + 1);
    }
    return true;
}

bool json_elements(std::string_view s, std::vector<std::string_view> *out) {
    out->clear();
    size_t end = 0;
    size_t i = skip_space(s, 0);
    if (i >= s.size() || s[i] != '[' || json_scan(s, i, &end) != JsonScan::Complete ||
        skip_space(s, end) != s.size())
        return false;
    i = skip_space(s, i + 1);
    while (s[i] != ']') {
        size_t value_end = 0;
        json_scan(s, i, &value_end);
        out->push_back(s.substr(i, value_end - i));
        i = skip_space(s, value_end);
        if (s[i] == ',') i = skip_space(s, i + 1);
    }
    return true;
}

bool json_string(std::string_view s, std::string *out) {
    size_t end = 0;
    if (s.empty() || s[0] != '"' || json_scan(s, 0, &end) != JsonScan::Complete || end != s.size())
        return false;
    out->clear();
    for (size_t i = 1; i + 1 < s.size(); ++i) {
        if (s[i] != '\\') {
            out->push_back(s[i]);
            continue;
        }
        char e = s[++i];
        switch (e) {
            case 'b':
                out->push_back('\b');
                break;
            case 'f':
                out->push_back('\f');
                break;
            case 'n':
                out->push_back('\n');
                break;
            case 'r':
                out->push_back('\r');
                break;
            case 't':
                out->push_back('\t');
                break;
            case 'u': {
                uint32_t cp = 0;
                for (int k = 0; k < 4; ++k)
                    cp = cp * 16 + uint32_t(hex_digit(s[++i]));
                // A surrogate pair makes one code point; a lone surrogate becomes U+FFFD.
                if (cp >= 0xD800 && cp < 0xDC00 && i + 6 < s.size() && s[i + 1] == '\\' &&
                    s[i + 2] == 'u') {
                    uint32_t lo = 0;
                    bool ok = true;
                    for (int k = 0; k < 4; ++k) {
                        int d = hex_digit(s[i + 3 + k]);
                        ok = ok && d >= 0;
                        lo = lo * 16 + uint32_t(d < 0 ? 0 : d);
                    }
                    if (ok && lo >= 0xDC00 && lo < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        i += 6;
                    }
                }
                if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
                *out += utf8_encode(std::u32string(1, char32_t(cp)));
                break;
            }
            default:
                out->push_back(e);
                break;  // " \ /
        }
    }
    return true;
}

std::string json_quote(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                if (uint8_t(c) < 0x20) {
                    static const char digits[] = "0123456789abcdef";
                    out += "\\u00";
                    out.push_back(digits[uint8_t(c) >> 4]);
                    out.push_back(digits[uint8_t(c) & 15]);
                } else {
                    out.push_back(c);
                }
        }
    }
    return out + "\"";
}

}  // namespace vkllm::chat
