#include "chat/json_value.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja_text.h"
#include "common/error.h"

namespace vkllm::chat {

namespace {

class Reader {
  public:
    Reader(std::string_view text, int max_depth) : t_(text), max_depth_(max_depth) {}

    Value document() {
        Value v = value(0);
        space();
        if (p_ != t_.size()) error("trailing data");
        return v;
    }

  private:
    std::string_view t_;
    size_t p_ = 0;
    int max_depth_;

    [[noreturn]] void error(const char *what) {
        fail(VKLLM_ERR_INVALID_ARGUMENT, "JSON: %s at byte %zu", what, p_);
    }

    void space() {
        while (p_ < t_.size() &&
               (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r'))
            ++p_;
    }

    bool literal(std::string_view word) {
        if (t_.substr(p_, word.size()) != word) return false;
        p_ += word.size();
        return true;
    }

    Value value(int depth) {
        if (depth > max_depth_) error("nesting too deep");
        space();
        if (p_ >= t_.size()) error("unexpected end");
        char c = t_[p_];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') return Value(string());
        if (literal("true")) return Value(true);
        if (literal("false")) return Value(false);
        if (literal("null")) return Value::none();
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        error("unexpected character");
    }

    Value object(int depth) {
        ++p_;
        auto d = std::make_shared<Dict>();
        space();
        if (p_ < t_.size() && t_[p_] == '}') {
            ++p_;
            return Value(d);
        }
        for (;;) {
            space();
            if (p_ >= t_.size() || t_[p_] != '"') error("expected a string key");
            std::string key = string();
            space();
            if (p_ >= t_.size() || t_[p_] != ':') error("expected ':'");
            ++p_;
            d->set(Value(std::move(key)), value(depth + 1));
            space();
            if (p_ < t_.size() && t_[p_] == ',') {
                ++p_;
                continue;
            }
            if (p_ < t_.size() && t_[p_] == '}') {
                ++p_;
                return Value(d);
            }
            error("expected ',' or '}'");
        }
    }

    Value array(int depth) {
        ++p_;
        List items;
        space();
        if (p_ < t_.size() && t_[p_] == ']') {
            ++p_;
            return Value(std::move(items));
        }
        for (;;) {
            items.push_back(value(depth + 1));
            space();
            if (p_ < t_.size() && t_[p_] == ',') {
                ++p_;
                continue;
            }
            if (p_ < t_.size() && t_[p_] == ']') {
                ++p_;
                return Value(std::move(items));
            }
            error("expected ',' or ']'");
        }
    }

    unsigned hex4() {
        if (p_ + 4 > t_.size()) error("short \\u escape");
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
            char c = t_[p_++];
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0) error("bad \\u escape");
            v = v * 16 + unsigned(d);
        }
        return v;
    }

    std::string string() {
        ++p_;
        std::string out;
        for (;;) {
            if (p_ >= t_.size()) error("unterminated string");
            char c = t_[p_++];
            if (c == '"') return out;
            if (uint8_t(c) < 0x20) error("control character in string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (p_ >= t_.size()) error("unterminated string");
            char e = t_[p_++];
            switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
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
                case 'u': {
                    char32_t cp = hex4();
                    if (cp >= 0xd800 && cp < 0xdc00 && t_.substr(p_, 2) == "\\u") {
                        size_t save = p_;
                        p_ += 2;
                        unsigned low = hex4();
                        if (low >= 0xdc00 && low < 0xe000)
                            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                        else
                            p_ = save;
                    }
                    // A lone surrogate cannot be UTF-8; it becomes U+FFFD.
                    if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;
                    utf8_append(out, cp);
                    break;
                }
                default:
                    error("bad escape");
            }
        }
    }

    Value number() {
        size_t start = p_;
        if (t_[p_] == '-') ++p_;
        auto digits = [&] {
            size_t s = p_;
            while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9')
                ++p_;
            return p_ - s;
        };
        if (digits() == 0) error("bad number");
        bool is_float = false;
        if (p_ < t_.size() && t_[p_] == '.') {
            ++p_;
            is_float = true;
            if (digits() == 0) error("bad number");
        }
        if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
            ++p_;
            is_float = true;
            if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
            if (digits() == 0) error("bad number");
        }
        std::string text(t_.substr(start, p_ - start));
        if (!is_float) {
            errno = 0;
            long long v = std::strtoll(text.c_str(), nullptr, 10);
            if (errno == 0) return Value(int64_t(v));
        }
        return Value(std::strtod(text.c_str(), nullptr));
    }
};

class Writer {
  public:
    explicit Writer(const JsonOptions &o) : o_(o) {}
    std::string out;

    void value(const Value &v, int level) {
        if (out.size() > o_.max_bytes)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "tojson: the text exceeds %zu bytes", o_.max_bytes);

        using K = Value::Kind;
        switch (v.kind()) {
            case K::None:
                out += "null";
                return;
            case K::Bool:
                out += v.as_bool() ? "true" : "false";
                return;
            case K::Int:
                out += std::to_string(v.as_int());
                return;
            case K::Float:
                out += number(v.as_float());
                return;
            case K::Str:
                string(v.str());
                return;
            case K::Sequence: {
                if (v.list().empty()) {
                    out += "[]";
                    return;
                }
                out += '[';
                bool first = true;
                for (const Value &item : v.list()) {
                    separate(first, level + 1);
                    value(item, level + 1);
                }
                newline(level);
                out += ']';
                return;
            }
            case K::Dict: {
                if (v.dict().items.empty()) {
                    out += "{}";
                    return;
                }
                std::vector<std::pair<std::string, const Value *>> items;
                for (const auto &kv : v.dict().items)
                    items.emplace_back(key(kv.first), &kv.second);
                if (o_.sort_keys)
                    std::stable_sort(items.begin(), items.end(), [](const auto &a, const auto &b) {
                        return a.first < b.first;
                    });
                out += '{';
                bool first = true;
                for (const auto &kv : items) {
                    separate(first, level + 1);
                    string(kv.first);
                    out += o_.key_separator;
                    value(*kv.second, level + 1);
                }
                newline(level);
                out += '}';
                return;
            }
            default:
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "TypeError: Object of type %s is not JSON serializable", type_name(v).c_str());
        }
    }

  private:
    const JsonOptions &o_;

    void newline(int level) {
        if (!o_.indent) return;
        out += '\n';
        for (int i = 0; i < level; ++i)
            out += *o_.indent;
    }

    void separate(bool &first, int level) {
        if (!first) out += o_.item_separator;
        first = false;
        newline(level);
    }

    static std::string number(double f) {
        if (std::isnan(f)) return "NaN";
        if (std::isinf(f)) return f < 0 ? "-Infinity" : "Infinity";
        return python_float(f);
    }

    std::string key(const Value &k) {
        switch (k.kind()) {
            case Value::Kind::Str:
                return k.str();
            case Value::Kind::Bool:
                return k.as_bool() ? "true" : "false";
            case Value::Kind::None:
                return "null";
            case Value::Kind::Int:
                return std::to_string(k.as_int());
            case Value::Kind::Float:
                return number(k.as_float());
            default:
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "TypeError: keys must be str, int, float, bool or None, not %s",
                     type_name(k).c_str());
        }
    }

    void escape_unit(unsigned u) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\\u%04x", u);
        out += buf;
    }

    void string(const std::string &s) {
        out += '"';
        if (!o_.ensure_ascii) {
            for (char c : s)
                plain(c);
        } else {
            for (char32_t c : utf8_decode(s)) {
                if (c < 0x80) {
                    plain(char(c));
                } else if (c >= 0xdc80 && c <= 0xdcff) {
                    escape_unit(unsigned(c));  // an undecodable byte, as Python's surrogate
                } else if (c < 0x10000) {
                    escape_unit(unsigned(c));
                } else {
                    unsigned v = unsigned(c) - 0x10000;
                    escape_unit(0xd800 + (v >> 10));
                    escape_unit(0xdc00 + (v & 0x3ff));
                }
            }
        }
        out += '"';
    }

    void plain(char c) {
        switch (c) {
            case '"':
                out += "\\\"";
                return;
            case '\\':
                out += "\\\\";
                return;
            case '\n':
                out += "\\n";
                return;
            case '\r':
                out += "\\r";
                return;
            case '\t':
                out += "\\t";
                return;
            case '\b':
                out += "\\b";
                return;
            case '\f':
                out += "\\f";
                return;
            default:
                if (uint8_t(c) < 0x20)
                    escape_unit(uint8_t(c));
                else
                    out += c;
        }
    }
};

}  // namespace

Value parse_json(std::string_view text, int max_depth) {
    return Reader(text, max_depth).document();
}

std::string to_json(const Value &v, const JsonOptions &options) {
    Writer w(options);
    w.value(v, 0);
    if (w.out.size() > options.max_bytes)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "tojson: the text exceeds %zu bytes", options.max_bytes);
    return std::move(w.out);
}

}  // namespace vkllm::chat
