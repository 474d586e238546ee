#include "chat/jinja_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/error.h"

namespace vkllm::chat {

std::string python_float(double f) {
    if (std::isnan(f)) return "nan";
    if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
    // Shortest round-trip digits in scientific form, then laid out as Python's repr does:
    // positional for exponents -4 <= e < 16, scientific (two-digit exponent at least) beyond.
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
    std::string sci(buf, r.ptr);
    bool negative = sci[0] == '-';
    if (negative) sci.erase(0, 1);
    size_t e = sci.find('e');
    int exponent = std::atoi(sci.c_str() + e + 1);
    std::string digits;
    for (size_t i = 0; i < e; ++i)
        if (sci[i] != '.') digits += sci[i];
    std::string out = negative ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            out += "0." + std::string(size_t(-exponent - 1), '0') + digits;
        } else if (size_t(exponent) + 1 >= digits.size()) {
            out += digits + std::string(size_t(exponent) + 1 - digits.size(), '0') + ".0";
        } else {
            out +=
                digits.substr(0, size_t(exponent) + 1) + "." + digits.substr(size_t(exponent) + 1);
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp;
}

namespace {

void check(const std::string &out, size_t max_bytes) {
    if (out.size() > max_bytes)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes", max_bytes);
}

void repr_str(std::string &out, const std::string &s) {
    bool has_single = s.find('\'') != std::string::npos;
    bool has_double = s.find('"') != std::string::npos;
    char quote = has_single && !has_double ? '"' : '\'';
    out += quote;
    for (unsigned char c : s) {
        if (c == uint8_t(quote) || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    out += quote;
}

void write(std::string &out, const Value &v, bool repr, size_t max_bytes) {
    using K = Value::Kind;
    switch (v.kind()) {
        case K::Undefined:
            break;
        case K::None:
            out += "None";
            break;
        case K::Bool:
            out += v.as_bool() ? "True" : "False";
            break;
        case K::Int:
            out += std::to_string(v.as_int());
            break;
        case K::Float:
            out += python_float(v.as_float());
            break;
        case K::Str:
            if (repr)
                repr_str(out, v.str());
            else
                out += v.str();
            break;
        case K::Sequence: {
            out += v.is_tuple() ? '(' : '[';
            const List &l = v.list();
            for (size_t i = 0; i < l.size(); ++i) {
                if (i) out += ", ";
                write(out, l[i], true, max_bytes);
                check(out, max_bytes);
            }
            if (v.is_tuple() && l.size() == 1) out += ',';
            out += v.is_tuple() ? ')' : ']';
            break;
        }
        case K::Dict: {
            out += '{';
            bool first = true;
            for (const auto &kv : v.dict().items) {
                if (!first) out += ", ";
                first = false;
                write(out, kv.first, true, max_bytes);
                out += ": ";
                write(out, kv.second, true, max_bytes);
                check(out, max_bytes);
            }
            out += '}';
            break;
        }
        case K::Namespace:
            out += "<Namespace>";
            break;
        case K::Callable:
            out += "<function " + v.callable().name() + ">";
            break;
    }
    check(out, max_bytes);
}

}  // namespace

std::string to_str(const Value &v, size_t max_bytes) {
    if (v.is_str()) return v.str();
    std::string out;
    write(out, v, false, max_bytes);
    return out;
}

std::string to_repr(const Value &v, size_t max_bytes) {
    std::string out;
    write(out, v, true, max_bytes);
    return out;
}

std::string html_escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&#34;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::u32string utf8_decode(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    size_t i = 0;
    while (i < s.size()) {
        unsigned char c = uint8_t(s[i]);
        int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
        char32_t cp = n == 0 ? c : n == 1 ? (c & 0x1f) : n == 2 ? (c & 0x0f) : (c & 0x07);
        bool ok = n >= 0 && i + size_t(n) < s.size() + (n == 0 ? 1 : 0);
        for (int k = 1; ok && k <= n; ++k) {
            unsigned char cc = uint8_t(s[i + size_t(k)]);
            if ((cc & 0xc0) != 0x80) ok = false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if (ok && n > 0 &&
            ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
             (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp < 0xe000)))
            ok = false;
        if (!ok) {
            out += char32_t(0xdc00 + c);
            ++i;
            continue;
        }
        out += cp;
        i += size_t(n) + 1;
    }
    return out;
}

void utf8_append(std::string &out, char32_t c) {
    if (c >= 0xdc80 && c <= 0xdcff) {
        out += char(c - 0xdc00);  // an undecodable byte, restored
    } else if (c < 0x80) {
        out += char(c);
    } else if (c < 0x800) {
        out += char(0xc0 | (c >> 6));
        out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        out += char(0xe0 | (c >> 12));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    } else {
        out += char(0xf0 | (c >> 18));
        out += char(0x80 | ((c >> 12) & 0x3f));
        out += char(0x80 | ((c >> 6) & 0x3f));
        out += char(0x80 | (c & 0x3f));
    }
}

std::string utf8_encode(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s)
        utf8_append(out, c);
    return out;
}

size_t utf8_length(std::string_view s) {
    bool ascii = true;
    for (char c : s)
        if (uint8_t(c) >= 0x80) ascii = false;
    return ascii ? s.size() : utf8_decode(s).size();
}

bool is_python_space(char32_t c) {
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
           c == 0x202f || c == 0x205f || c == 0x3000;
}

}  // namespace vkllm::chat
