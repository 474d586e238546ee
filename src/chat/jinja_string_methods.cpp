// The bound str methods a template calls (`s.split(",")`, `s.startswith(("a", "b"))`,
// `"{}".format(x)`): argument checking and dispatch onto the Python string algorithms of
// jinja_strings.cpp.
#include <algorithm>
#include <functional>

#include "chat/jinja_builtins.h"
#include "chat/jinja_ops.h"
#include "chat/jinja_strings.h"
#include "chat/jinja_text.h"
#include "common/error.h"

namespace vkllm::chat {

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
