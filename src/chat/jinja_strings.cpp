#include "chat/jinja_strings.h"

#include <algorithm>
#include <cstdio>

#include "chat/jinja_builtins.h"
#include "chat/jinja_ops.h"
#include "chat/jinja_text.h"
#include "common/error.h"

namespace vkllm::chat {

std::string py_strip(const std::string &s, const std::optional<std::string> &chars,
                     StripSide side) {
    std::u32string cs = utf8_decode(s);
    std::u32string set = chars ? utf8_decode(*chars) : std::u32string();
    auto strip = [&](char32_t c) {
        return chars ? set.find(c) != std::u32string::npos : is_python_space(c);
    };
    size_t lo = 0, hi = cs.size();
    if (side != StripSide::Right)
        while (lo < hi && strip(cs[lo]))
            ++lo;
    if (side != StripSide::Left)
        while (hi > lo && strip(cs[hi - 1]))
            --hi;
    return utf8_encode(std::u32string_view(cs).substr(lo, hi - lo));
}

std::vector<std::string> py_split(const std::string &s, const std::optional<std::string> &sep,
                                  int64_t maxsplit, bool from_right) {
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: empty separator");
        if (!from_right) {
            size_t pos = 0;
            for (;;) {
                size_t hit = maxsplit >= 0 && int64_t(out.size()) >= maxsplit ? std::string::npos
                                                                              : s.find(*sep, pos);
                if (hit == std::string::npos) {
                    out.push_back(s.substr(pos));
                    return out;
                }
                out.push_back(s.substr(pos, hit - pos));
                pos = hit + sep->size();
            }
        }
        size_t end = s.size();
        for (;;) {
            size_t hit = std::string::npos;
            if (!(maxsplit >= 0 && int64_t(out.size()) >= maxsplit) && end >= sep->size())
                hit = s.rfind(*sep, end - sep->size());
            if (hit == std::string::npos) {
                out.insert(out.begin(), s.substr(0, end));
                return out;
            }
            out.insert(out.begin(), s.substr(hit + sep->size(), end - hit - sep->size()));
            end = hit;
        }
    }
    // Runs of whitespace separate; leading and trailing whitespace yields no empty strings.
    std::u32string cs = utf8_decode(s);
    if (!from_right) {
        size_t i = 0;
        while (i < cs.size()) {
            while (i < cs.size() && is_python_space(cs[i]))
                ++i;
            if (i == cs.size()) break;
            if (maxsplit >= 0 && int64_t(out.size()) >= maxsplit) {
                size_t end = cs.size();
                while (end > i && is_python_space(cs[end - 1]))
                    --end;
                out.push_back(utf8_encode(std::u32string_view(cs).substr(i, end - i)));
                break;
            }
            size_t j = i;
            while (j < cs.size() && !is_python_space(cs[j]))
                ++j;
            out.push_back(utf8_encode(std::u32string_view(cs).substr(i, j - i)));
            i = j;
        }
        return out;
    }
    size_t i = cs.size();
    while (i > 0) {
        while (i > 0 && is_python_space(cs[i - 1]))
            --i;
        if (i == 0) break;
        if (maxsplit >= 0 && int64_t(out.size()) >= maxsplit) {
            size_t start = 0;
            while (start < i && is_python_space(cs[start]))
                ++start;
            out.insert(out.begin(), utf8_encode(std::u32string_view(cs).substr(start, i - start)));
            break;
        }
        size_t j = i;
        while (j > 0 && !is_python_space(cs[j - 1]))
            --j;
        out.insert(out.begin(), utf8_encode(std::u32string_view(cs).substr(j, i - j)));
        i = j;
    }
    return out;
}

std::vector<std::string> py_splitlines(const std::string &s, bool keepends) {
    std::u32string cs = utf8_decode(s);
    std::vector<std::string> out;
    size_t start = 0, i = 0;
    while (i < cs.size()) {
        char32_t c = cs[i];
        bool brk = c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e) ||
                   c == 0x85 || c == 0x2028 || c == 0x2029;
        if (!brk) {
            ++i;
            continue;
        }
        size_t end = i;
        ++i;
        if (c == '\r' && i < cs.size() && cs[i] == '\n') ++i;
        out.push_back(
            utf8_encode(std::u32string_view(cs).substr(start, (keepends ? i : end) - start)));
        start = i;
    }
    if (start < cs.size()) out.push_back(utf8_encode(std::u32string_view(cs).substr(start)));
    return out;
}

std::string py_replace(const std::string &s, const std::string &old, const std::string &with,
                       int64_t count, size_t max_bytes) {
    std::string out;
    auto grow = [&](const std::string &piece) {
        if (out.size() + piece.size() > max_bytes)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes", max_bytes);
        out += piece;
    };
    if (old.empty()) {
        // Python inserts `with` before every character and at the end.
        std::u32string cs = utf8_decode(s);
        int64_t n = 0;
        for (char32_t c : cs) {
            if (count < 0 || n < count) {
                grow(with);
                ++n;
            }
            std::string ch;
            utf8_append(ch, c);
            grow(ch);
        }
        if (count < 0 || n < count) grow(with);
        return out;
    }
    size_t pos = 0;
    int64_t n = 0;
    for (;;) {
        size_t hit = count >= 0 && n >= count ? std::string::npos : s.find(old, pos);
        if (hit == std::string::npos) break;
        grow(s.substr(pos, hit - pos));
        grow(with);
        pos = hit + old.size();
        ++n;
    }
    grow(s.substr(pos));
    return out;
}

namespace {

// One-to-one case mappings of the scripts chat text mostly uses (ASCII, Latin-1, Latin
// Extended-A, Greek, Cyrillic); other characters keep their case, where Python would map them
// by the full Unicode tables.
char32_t lower_of(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0x80) return c;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
    if ((c >= 0x100 && c <= 0x137 && c != 0x130) || (c >= 0x14A && c <= 0x177)) return c | 1;
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return c & 1 ? c + 1 : c;
    if (c == 0x178) return 0xFF;
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
    if (c == 0x386) return 0x3AC;  // Greek capitals with tonos
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    return c;
}

char32_t upper_of(char32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0x80) return c;
    if (c == 0xB5) return 0x39C;  // the micro sign's capital is Greek mu
    if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
    if (c == 0xFF) return 0x178;
    if (c == 0x131) return 'I';
    if (c == 0x17F) return 'S';
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177)) return c & ~char32_t(1);
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return c & 1 ? c : c - 1;
    if (c == 0x3C2) return 0x3A3;  // final sigma
    if (c >= 0x3B1 && c <= 0x3CB) return c - 32;
    if (c == 0x3AC) return 0x386;  // Greek small letters with tonos
    if (c >= 0x3AD && c <= 0x3AF) return c - 37;
    if (c == 0x3CC) return 0x38C;
    if (c == 0x3CD || c == 0x3CE) return c - 63;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
}

bool is_cased(char32_t c) {
    return lower_of(c) != c || upper_of(c) != c || c == 0xDF || c == 0x138 || c == 0x149;
}

// Python's special cases that become two characters.
void append_lower(std::string &out, char32_t c) {
    if (c == 0x130) {
        out += "i\xcc\x87";  // I with dot above: i + combining dot
        return;
    }
    utf8_append(out, lower_of(c));
}

void append_upper(std::string &out, char32_t c) {
    if (c == 0xDF) {
        out += "SS";
        return;
    }
    utf8_append(out, upper_of(c));
}

}  // namespace

std::string py_lower(const std::string &s) {
    std::u32string cs = utf8_decode(s);
    std::string out;
    for (size_t i = 0; i < cs.size(); ++i) {
        // Capital sigma ending a word becomes final sigma.
        if (cs[i] == 0x3A3 && i > 0 && is_cased(cs[i - 1]) &&
            (i + 1 == cs.size() || !is_cased(cs[i + 1])))
            utf8_append(out, 0x3C2);
        else
            append_lower(out, cs[i]);
    }
    return out;
}

std::string py_upper(const std::string &s) {
    std::string out;
    for (char32_t c : utf8_decode(s))
        append_upper(out, c);
    return out;
}

std::string py_title(const std::string &s) {
    std::string out;
    bool previous_cased = false;
    for (char32_t c : utf8_decode(s)) {
        if (previous_cased)
            append_lower(out, c);
        else
            append_upper(out, c);
        previous_cased = is_cased(c);
    }
    return out;
}

bool py_is_case(const std::string &s, bool lower) {
    bool cased = false;
    for (char32_t c : utf8_decode(s)) {
        bool is_upper = lower_of(c) != c, is_lower = upper_of(c) != c || c == 0xDF || c == 0x138;
        if (lower ? is_upper : is_lower) return false;
        cased = cased || is_upper || is_lower;
    }
    return cased;
}

std::string jinja_title(const std::string &s) {
    std::string out;
    bool word_start = true;
    for (char32_t c : utf8_decode(s)) {
        bool separator =
            is_python_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
        if (separator)
            utf8_append(out, c);
        else if (word_start)
            append_upper(out, c);
        else
            append_lower(out, c);
        word_start = separator;
    }
    return out;
}

std::string py_capitalize(const std::string &s) {
    std::string out;
    bool first = true;
    for (char32_t c : utf8_decode(s)) {
        if (first)
            append_upper(out, c);
        else
            append_lower(out, c);
        first = false;
    }
    return out;
}

std::string py_percent(const std::string &format, const Value &args, size_t max_bytes) {
    List values = args.is_tuple() ? args.list() : List{args};
    size_t next = 0;
    std::string out;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') {
            out += format[i];
            continue;
        }
        if (++i == format.size()) fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: incomplete format");
        int precision = -1;
        if (format[i] == '.') {
            precision = 0;
            while (++i < format.size() && format[i] >= '0' && format[i] <= '9')
                precision = std::min(precision * 10 + (format[i] - '0'), 100);
            if (i == format.size())
                fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: incomplete format");
        }
        char c = format[i];
        if (c == '%') {
            out += '%';
            continue;
        }
        if (next >= values.size()) type_error("not enough arguments for format string");
        const Value &v = values[next++];
        if (c == 's') {
            out += to_str(v, max_bytes);
        } else if (c == 'r') {
            out += to_repr(v, max_bytes);
        } else if (c == 'd' || c == 'i') {
            if (!v.is_number())
                type_error("%d format: a real number is required, not " + type_name(v));
            out +=
                std::to_string(v.kind() == Value::Kind::Float ? int64_t(v.as_float()) : v.as_int());
        } else if (c == 'f') {
            if (!v.is_number()) type_error("must be real number, not " + type_name(v));
            char buf[512];
            std::snprintf(buf, sizeof buf, "%.*f", precision < 0 ? 6 : precision, v.as_float());
            out += buf;
        } else {
            fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: unsupported format character '%c'", c);
        }
        if (out.size() > max_bytes)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes", max_bytes);
    }
    if (next < values.size()) type_error("not all arguments converted during string formatting");
    return out;
}

namespace {

std::optional<std::string> opt_str(Args &a, size_t i, const char *name) {
    std::optional<Value> v = a.get(i, name);
    if (!v || v->is_none()) return std::nullopt;
    if (!v->is_str()) type_error(std::string(name) + " must be str or None, not " + type_name(*v));
    return v->str();
}

std::string req_str(Args &a, size_t i, const char *name) {
    std::optional<Value> v = a.get(i, name);
    if (!v) type_error(std::string("missing required argument '") + name + "'");
    if (!v->is_str()) type_error(std::string("must be str, not ") + type_name(*v));
    return v->str();
}

int64_t opt_int(Args &a, size_t i, const char *name, int64_t fallback) {
    std::optional<Value> v = a.get(i, name);
    if (!v || v->is_none()) return fallback;
    if (!(v->is_int() || v->kind() == Value::Kind::Bool))
        type_error(std::string("'") + type_name(*v) +
                   "' object cannot be interpreted as an integer");
    return v->as_int();
}

Value string_list(const std::vector<std::string> &parts) {
    List out;
    for (const std::string &p : parts)
        out.emplace_back(p);
    return Value(std::move(out));
}

// startswith/endswith take a string or a tuple of strings.
bool affix(const std::string &s, const Value &what, bool prefix) {
    auto one = [&](const Value &v) {
        if (!v.is_str()) type_error("startswith first arg must be str or a tuple of str");
        const std::string &p = v.str();
        if (p.size() > s.size()) return false;
        return prefix ? s.compare(0, p.size(), p) == 0
                      : s.compare(s.size() - p.size(), p.size(), p) == 0;
    };
    if (what.is_list()) {
        for (const Value &v : what.list())
            if (one(v)) return true;
        return false;
    }
    return one(what);
}

bool all_chars(const std::string &s, bool (*pred)(char32_t)) {
    std::u32string cs = utf8_decode(s);
    if (cs.empty()) return false;
    for (char32_t c : cs)
        if (!pred(c)) return false;
    return true;
}

// str.format with {} / {0} / {name} fields (no format specs).
std::string format(Interpreter &in, const std::string &s, CallArgs &args) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '{' && i + 1 < s.size() && s[i + 1] == '{') {
            out += '{';
            ++i;
        } else if (c == '}' && i + 1 < s.size() && s[i + 1] == '}') {
            out += '}';
            ++i;
        } else if (c == '{') {
            size_t end = s.find('}', i);
            if (end == std::string::npos)
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "ValueError: Single '{' encountered in format string");
            std::string field = s.substr(i + 1, end - i - 1);
            if (field.find_first_of(":!.[") != std::string::npos)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "format: field '%s' is not supported",
                     field.c_str());
            const Value *v = nullptr;
            if (field.empty() || (field[0] >= '0' && field[0] <= '9')) {
                size_t k = field.empty() ? auto_index++ : size_t(std::stoul(field));
                if (k >= args.positional.size())
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "IndexError: Replacement index %zu out of range", k);
                v = &args.positional[k];
            } else {
                for (const auto &kv : args.keywords)
                    if (kv.first == field) v = &kv.second;
                if (!v) fail(VKLLM_ERR_INVALID_ARGUMENT, "KeyError: '%s'", field.c_str());
            }
            out += to_str(*v, in.max_bytes());
            if (out.size() > in.max_bytes())
                fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes",
                     in.max_bytes());
            i = end;
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

std::optional<Value> string_method(const std::string &s, const std::string &name) {
    using Fn = std::function<Value(Interpreter &, Args &)>;
    auto method = [&](Fn fn) {
        std::string n = name;
        return make_native("str." + name, [s, n, fn](Interpreter &in, CallArgs &call) {
            Args a(n.c_str(), call);
            return fn(in, a);
        });
    };
    auto strip_method = [&](StripSide side) {
        return method([s, side](Interpreter &, Args &a) {
            auto chars = opt_str(a, 0, "chars");
            a.done(1);
            return Value(py_strip(s, chars, side));
        });
    };
    if (name == "strip") return strip_method(StripSide::Both);
    if (name == "lstrip") return strip_method(StripSide::Left);
    if (name == "rstrip") return strip_method(StripSide::Right);
    if (name == "split" || name == "rsplit") {
        bool right = name == "rsplit";
        return method([s, right](Interpreter &, Args &a) {
            auto sep = opt_str(a, 0, "sep");
            int64_t maxsplit = opt_int(a, 1, "maxsplit", -1);
            a.done(2);
            return string_list(py_split(s, sep, maxsplit, right));
        });
    }
    if (name == "splitlines")
        return method([s](Interpreter &, Args &a) {
            bool keep = a.get_or(0, "keepends", Value(false)).truthy();
            a.done(1);
            return string_list(py_splitlines(s, keep));
        });
    if (name == "startswith" || name == "endswith") {
        bool prefix = name == "startswith";
        return method([s, prefix](Interpreter &, Args &a) {
            std::optional<Value> what = a.get(0, prefix ? "prefix" : "suffix");
            a.done(1);
            if (!what) type_error("missing argument");
            return Value(affix(s, *what, prefix));
        });
    }
    if (name == "replace")
        return method([s](Interpreter &in, Args &a) {
            std::string old = req_str(a, 0, "old"), with = req_str(a, 1, "new");
            int64_t count = opt_int(a, 2, "count", -1);
            a.done(3);
            return Value(py_replace(s, old, with, count, in.max_bytes()));
        });
    if (name == "removeprefix" || name == "removesuffix") {
        bool prefix = name == "removeprefix";
        return method([s, prefix](Interpreter &, Args &a) {
            std::string p = req_str(a, 0, prefix ? "prefix" : "suffix");
            a.done(1);
            if (!affix(s, Value(p), prefix)) return Value(s);
            return Value(prefix ? s.substr(p.size()) : s.substr(0, s.size() - p.size()));
        });
    }
    using Transform = std::string (*)(const std::string &);
    auto transform = [&](Transform t) {
        return method([s, t](Interpreter &, Args &a) {
            a.done(0);
            return Value(t(s));
        });
    };
    if (name == "lower") return transform(py_lower);
    if (name == "upper") return transform(py_upper);
    if (name == "title") return transform(py_title);
    if (name == "capitalize") return transform(py_capitalize);
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex" ||
        name == "count") {
        std::string n = name;
        return method([s, n](Interpreter &, Args &a) {
            std::string sub = req_str(a, 0, "sub");
            a.done(1);
            if (n == "count") {
                if (sub.empty()) return Value(int64_t(utf8_length(s) + 1));
                int64_t c = 0;
                for (size_t p = s.find(sub); p != std::string::npos;
                     p = s.find(sub, p + sub.size()))
                    ++c;
                return Value(c);
            }
            size_t p = n[0] == 'r' ? s.rfind(sub) : s.find(sub);
            if (p == std::string::npos) {
                if (n == "index" || n == "rindex")
                    fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: substring not found");
                return Value(int64_t(-1));
            }
            return Value(int64_t(utf8_length(s.substr(0, p))));
        });
    }
    if (name == "join")
        return method([s](Interpreter &in, Args &a) {
            std::optional<Value> items = a.get(0, "iterable");
            a.done(1);
            if (!items) type_error("join() takes exactly one argument");
            std::string out;
            bool first = true;
            for (const Value &v : iterate(*items)) {
                if (!v.is_str())
                    type_error("sequence item: expected str instance, " + type_name(v) + " found");
                if (!first) out += s;
                first = false;
                out += v.str();
                if (out.size() > in.max_bytes())
                    fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes",
                         in.max_bytes());
            }
            return Value(std::move(out));
        });
    if (name == "format")
        return make_native("str.format", [s](Interpreter &in, CallArgs &call) {
            return Value(format(in, s, call));
        });
    using Pred = bool (*)(char32_t);
    auto predicate = [&](Pred p) {
        return method([s, p](Interpreter &, Args &a) {
            a.done(0);
            return Value(all_chars(s, p));
        });
    };
    if (name == "isspace") return predicate(is_python_space);
    if (name == "isdigit") return predicate([](char32_t c) { return c >= '0' && c <= '9'; });
    if (name == "isalpha")
        return predicate(
            [](char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); });
    if (name == "isalnum")
        return predicate([](char32_t c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        });
    if (name == "islower" || name == "isupper") {
        bool lower = name == "islower";
        return method([s, lower](Interpreter &, Args &a) {
            a.done(0);
            return Value(py_is_case(s, lower));
        });
    }
    return std::nullopt;
}

}  // namespace vkllm::chat
