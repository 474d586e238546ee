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

}  // namespace vkllm::chat
