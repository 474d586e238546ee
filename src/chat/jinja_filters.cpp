// jinja2's filters, with transformers' tojson (Python's json.dumps).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "chat/jinja_builtins.h"
#include "chat/jinja_ops.h"
#include "chat/jinja_strings.h"
#include "chat/jinja_text.h"
#include "chat/json_value.h"
#include "common/error.h"

namespace vkllm::chat {

namespace {

using Filter = Value (*)(Interpreter &, const Value &, Args &);

std::string text(Interpreter &in, const Value &v) {
    return to_str(v, in.max_bytes());
}

void check_size(Interpreter &in, const std::string &s) {
    if (s.size() > in.max_bytes())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes", in.max_bytes());
}

// "a.b.0" looks up a, then b, then index 0 (jinja2's make_attrgetter).
Value attribute_path(Interpreter &in, const Value &v, const Value &path) {
    if (!path.is_str()) return get_item(in, v, path);
    Value cur = v;
    const std::string &p = path.str();
    size_t start = 0;
    for (;;) {
        size_t dot = p.find('.', start);
        std::string part =
            p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
        cur = numeric ? get_item(in, cur, Value(int64_t(std::strtoll(part.c_str(), nullptr, 10))))
                      : get_item(in, cur, Value(part));
        if (dot == std::string::npos) return cur;
        start = dot + 1;
    }
}

Value f_tojson(Interpreter &in, const Value &v, Args &a) {
    JsonOptions o;
    o.max_bytes = in.max_bytes();
    o.ensure_ascii = a.get_or(0, "ensure_ascii", Value(false)).truthy();
    Value indent = a.get_or(1, "indent", Value::none());
    Value separators = a.get_or(2, "separators", Value::none());
    o.sort_keys = a.get_or(3, "sort_keys", Value(false)).truthy();
    a.done(4);
    if (indent.is_str()) {
        o.indent = indent.str();
    } else if (indent.is_int() || indent.kind() == Value::Kind::Bool) {
        o.indent = std::string(
            size_t(std::max<int64_t>(0, std::min<int64_t>(indent.as_int(), 1024))), ' ');
    } else if (!indent.is_none()) {
        type_error("tojson: indent must be an int or a str");
    }
    if (o.indent) o.item_separator = ",";
    if (!separators.is_none()) {
        if (!separators.is_list() || separators.list().size() != 2 ||
            !separators.list()[0].is_str() || !separators.list()[1].is_str())
            fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: separators must be a pair of strings");
        o.item_separator = separators.list()[0].str();
        o.key_separator = separators.list()[1].str();
    }
    return Value(to_json(v, o));
}

Value f_trim(Interpreter &in, const Value &v, Args &a) {
    Value chars = a.get_or(0, "chars", Value::none());
    a.done(1);
    std::optional<std::string> set;
    if (chars.is_str()) set = chars.str();
    return Value(py_strip(text(in, v), set, StripSide::Both));
}

Value f_length(Interpreter &, const Value &v, Args &a) {
    a.done(0);
    std::optional<int64_t> n = length_of(v);
    if (!n) type_error("object of type '" + type_name(v) + "' has no len()");
    return Value(*n);
}

Value f_string(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    return Value(text(in, v));
}

Value f_default(Interpreter &, const Value &v, Args &a) {
    Value fallback = a.get_or(0, "default_value", Value(std::string()));
    bool boolean = a.get_or(1, "boolean", Value(false)).truthy();
    a.done(2);
    if (v.is_undefined() || (boolean && !v.truthy())) return fallback;
    return v;
}

Value f_items(Interpreter &, const Value &v, Args &a) {
    a.done(0);
    if (v.is_undefined()) return Value(List{});
    if (!v.is_dict())
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "FilterArgumentError: Can only get item pairs from a mapping.");
    List out;
    for (const auto &kv : v.dict().items)
        out.emplace_back(List{kv.first, kv.second}, true);
    return Value(std::move(out));
}

// Sort key of jinja2's filters: strings compared case-insensitively unless asked otherwise.
Value sort_key(const Value &v, bool case_sensitive) {
    if (!case_sensitive && v.is_str()) return Value(py_lower(v.str()));
    return v;
}

Value f_dictsort(Interpreter &in, const Value &v, Args &a) {
    bool case_sensitive = a.get_or(0, "case_sensitive", Value(false)).truthy();
    Value by = a.get_or(1, "by", Value("key"));
    bool reverse = a.get_or(2, "reverse", Value(false)).truthy();
    a.done(3);
    if (!v.is_dict())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "FilterArgumentError: dictsort needs a mapping");
    size_t pos = by.is_str() && by.str() == "value" ? 1 : 0;
    if (by.is_str() && by.str() != "key" && by.str() != "value")
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "FilterArgumentError: You can only sort by either 'key' or 'value'");
    std::vector<std::pair<Value, Value>> items = v.dict().items;
    in.step(items.size() * 8);
    std::stable_sort(items.begin(), items.end(), [&](const auto &x, const auto &y) {
        const Value &kx = pos ? x.second : x.first, &ky = pos ? y.second : y.first;
        uint64_t work = 0;
        bool less = compare("<", sort_key(reverse ? ky : kx, case_sensitive),
                            sort_key(reverse ? kx : ky, case_sensitive), &work);
        in.step(work);
        return less;
    });
    List out;
    for (auto &kv : items)
        out.emplace_back(List{kv.first, kv.second}, true);
    return Value(std::move(out));
}

Value f_join(Interpreter &in, const Value &v, Args &a) {
    std::string sep = text(in, a.get_or(0, "d", Value(std::string())));
    Value attribute = a.get_or(1, "attribute", Value::none());
    a.done(2);
    std::string out;
    bool first = true;
    for (const Value &item : iterate(v)) {
        in.step();
        if (!first) out += sep;
        first = false;
        out += text(in, attribute.is_none() ? item : attribute_path(in, item, attribute));
        check_size(in, out);
    }
    return Value(std::move(out));
}

Value f_indent(Interpreter &in, const Value &v, Args &a) {
    Value width = a.get_or(0, "width", Value(int64_t(4)));
    bool first = a.get_or(1, "first", Value(false)).truthy();
    bool blank = a.get_or(2, "blank", Value(false)).truthy();
    a.done(3);
    std::string indention =
        width.is_str() ? width.str()
                       : std::string(size_t(std::clamp<int64_t>(width.as_int(), 0, 1024)), ' ');
    // jinja2 appends "\n" to the value itself: anything but a string fails there.
    if (!v.is_str()) type_error("can only concatenate " + type_name(v) + " and str for indent");
    std::vector<std::string> lines = py_splitlines(v.str() + "\n", false);
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i > 0) {
            out += '\n';
            if (blank || !lines[i].empty()) out += indention;
        }
        out += lines[i];
        check_size(in, out);
    }
    if (first) out = indention + out;
    return Value(std::move(out));
}

Value f_list(Interpreter &, const Value &v, Args &a) {
    a.done(0);
    return Value(iterate(v));
}

Value f_first(Interpreter &, const Value &v, Args &a) {
    a.done(0);
    List items = iterate(v);
    return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(Interpreter &, const Value &v, Args &a) {
    a.done(0);
    List items = iterate(v);
    return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_lower(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    return Value(py_lower(text(in, v)));
}

Value f_upper(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    return Value(py_upper(text(in, v)));
}

Value f_title(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    return Value(jinja_title(text(in, v)));
}

Value f_capitalize(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    return Value(py_capitalize(text(in, v)));
}

Value f_replace(Interpreter &in, const Value &v, Args &a) {
    std::string old = text(in, a.get_or(0, "old", Value(std::string())));
    std::string with = text(in, a.get_or(1, "new", Value(std::string())));
    Value count = a.get_or(2, "count", Value::none());
    a.done(3);
    return Value(
        py_replace(text(in, v), old, with, count.is_none() ? -1 : count.as_int(), in.max_bytes()));
}

Value f_safe(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    return Value::markup(text(in, v));
}

Value f_escape(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    if (v.is_markup()) return v;
    std::string out = html_escape(text(in, v));
    check_size(in, out);
    return Value::markup(std::move(out));
}

Value f_forceescape(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    std::string out = html_escape(text(in, v));
    check_size(in, out);
    return Value::markup(std::move(out));
}

Value f_reverse(Interpreter &, const Value &v, Args &a) {
    a.done(0);
    if (v.is_str()) {
        std::u32string cs = utf8_decode(v.str());
        std::reverse(cs.begin(), cs.end());
        return Value(utf8_encode(cs));
    }
    List items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value(std::move(items));
}

Value f_unique(Interpreter &in, const Value &v, Args &a) {
    bool case_sensitive = a.get_or(0, "case_sensitive", Value(false)).truthy();
    Value attribute = a.get_or(1, "attribute", Value::none());
    a.done(2);
    List out, seen;
    for (const Value &item : iterate(v)) {
        Value key = sort_key(attribute.is_none() ? item : attribute_path(in, item, attribute),
                             case_sensitive);
        uint64_t work = 0;
        bool dup = false;
        for (const Value &s : seen)
            if (!dup && equal(s, key, &work)) dup = true;
        in.step(work + 1);
        if (dup) continue;
        seen.push_back(key);
        out.push_back(item);
    }
    return Value(std::move(out));
}

Value f_sort(Interpreter &in, const Value &v, Args &a) {
    bool reverse = a.get_or(0, "reverse", Value(false)).truthy();
    bool case_sensitive = a.get_or(1, "case_sensitive", Value(false)).truthy();
    Value attribute = a.get_or(2, "attribute", Value::none());
    a.done(3);
    List items = iterate(v);
    in.step(items.size() * 8);
    std::stable_sort(items.begin(), items.end(), [&](const Value &x, const Value &y) {
        Value kx =
            sort_key(attribute.is_none() ? x : attribute_path(in, x, attribute), case_sensitive);
        Value ky =
            sort_key(attribute.is_none() ? y : attribute_path(in, y, attribute), case_sensitive);
        uint64_t work = 0;
        bool less = reverse ? compare("<", ky, kx, &work) : compare("<", kx, ky, &work);
        in.step(work);
        return less;
    });
    return Value(std::move(items));
}

// select / reject / selectattr / rejectattr: keep the items whose test (or truthiness) agrees.
Value select(Interpreter &in, const Value &v, CallArgs &call, bool attr, bool keep) {
    size_t k = 0;
    Value attribute;
    if (attr) {
        if (call.positional.empty()) type_error("selectattr needs an attribute");
        attribute = call.positional[k++];
    }
    std::optional<std::string> test;
    if (k < call.positional.size()) {
        if (!call.positional[k].is_str()) type_error("test name must be a string");
        test = call.positional[k++].str();
    }
    CallArgs test_args;
    test_args.positional.assign(call.positional.begin() + std::ptrdiff_t(k), call.positional.end());
    test_args.keywords = call.keywords;
    List out;
    if (!v.truthy()) return Value(std::move(out));  // jinja2 visits a falsy sequence as empty
    for (const Value &item : iterate(v)) {
        in.step();
        Value subject = attr ? attribute_path(in, item, attribute) : item;
        CallArgs copy = test_args;
        bool ok = test ? call_test(in, *test, subject, copy) : subject.truthy();
        if (ok == keep) out.push_back(item);
    }
    return Value(std::move(out));
}

Value f_map(Interpreter &in, const Value &v, CallArgs &call) {
    List out;
    if (!v.truthy()) return Value(std::move(out));  // jinja2 maps a falsy sequence to nothing
    Value attribute, fallback;
    bool by_attribute = false;
    for (const auto &kv : call.keywords) {
        if (kv.first == "attribute") {
            attribute = kv.second;
            by_attribute = true;
        } else if (kv.first == "default") {
            fallback = kv.second;
        }
    }
    if (by_attribute) {
        for (const Value &item : iterate(v)) {
            in.step();
            Value r = attribute_path(in, item, attribute);
            out.push_back(r.is_undefined() && !fallback.is_undefined() ? fallback : r);
        }
        return Value(std::move(out));
    }
    if (call.positional.empty() || !call.positional[0].is_str())
        type_error("map needs a filter name or attribute=");
    std::string name = call.positional[0].str();
    CallArgs rest;
    rest.positional.assign(call.positional.begin() + 1, call.positional.end());
    rest.keywords = call.keywords;
    for (const Value &item : iterate(v)) {
        in.step();
        CallArgs copy = rest;
        out.push_back(call_filter(in, name, item, copy));
    }
    return Value(std::move(out));
}

Value f_int(Interpreter &, const Value &v, Args &a) {
    Value fallback = a.get_or(0, "default", Value(int64_t(0)));
    int64_t base = a.get_or(1, "base", Value(int64_t(10))).as_int();
    a.done(2);
    if (v.is_int() || v.kind() == Value::Kind::Bool) return Value(v.as_int());
    if (v.kind() == Value::Kind::Float) {
        double f = v.as_float();
        if (!std::isfinite(f) || std::fabs(f) > 9e18) return fallback;
        return Value(int64_t(f));
    }
    if (v.is_str()) {
        std::string s = py_strip(v.str(), std::nullopt, StripSide::Both);
        if (s.empty()) return fallback;
        char *end = nullptr;
        errno = 0;
        long long x = std::strtoll(s.c_str(), &end, int(base >= 2 && base <= 36 ? base : 10));
        if (*end == '\0' && errno == 0) return Value(int64_t(x));
        double f = std::strtod(s.c_str(), &end);
        if (*end == '\0' && std::isfinite(f) && std::fabs(f) < 9e18) return Value(int64_t(f));
    }
    return fallback;
}

Value f_float(Interpreter &, const Value &v, Args &a) {
    Value fallback = a.get_or(0, "default", Value(0.0));
    a.done(1);
    if (v.is_number()) return Value(v.as_float());
    if (v.is_str()) {
        std::string s = py_strip(v.str(), std::nullopt, StripSide::Both);
        char *end = nullptr;
        double f = std::strtod(s.c_str(), &end);
        if (!s.empty() && *end == '\0') return Value(f);
    }
    return fallback;
}

Value f_abs(Interpreter &, const Value &v, Args &a) {
    a.done(0);
    if (v.kind() == Value::Kind::Float) return Value(std::fabs(v.as_float()));
    if (v.is_number()) return v.as_int() < 0 ? negate(v) : Value(v.as_int());
    type_error("bad operand type for abs(): '" + type_name(v) + "'");
}

Value f_round(Interpreter &, const Value &v, Args &a) {
    int64_t precision = a.get_or(0, "precision", Value(int64_t(0))).as_int();
    Value method_value = a.get_or(1, "method", Value("common"));
    std::string method = method_value.is_str() ? method_value.str() : "common";
    a.done(2);
    if (!v.is_number()) type_error("round needs a number");
    // Python's round() keeps an int an int.
    if (v.kind() != Value::Kind::Float && method == "common" && precision >= 0)
        return Value(v.as_int());
    double scale = std::pow(10.0, double(std::clamp<int64_t>(precision, -300, 300)));
    double x = v.as_float() * scale;
    // Python's round() takes halves to even, as nearbyint does in the default rounding mode.
    double r = method == "ceil"    ? std::ceil(x)
               : method == "floor" ? std::floor(x)
                                   : std::nearbyint(x);
    return Value(r / scale);
}

Value f_sum(Interpreter &in, const Value &v, Args &a) {
    Value attribute = a.get_or(0, "attribute", Value::none());
    Value total = a.get_or(1, "start", Value(int64_t(0)));
    a.done(2);
    for (const Value &item : iterate(v)) {
        in.step();
        total =
            binary_op("+", total, attribute.is_none() ? item : attribute_path(in, item, attribute),
                      in.max_bytes());
    }
    return total;
}

Value min_max(Interpreter &in, const Value &v, Args &a, bool want_max) {
    bool case_sensitive = a.get_or(0, "case_sensitive", Value(false)).truthy();
    Value attribute = a.get_or(1, "attribute", Value::none());
    a.done(2);
    List items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    const Value *best = &items[0];
    for (const Value &item : items) {
        in.step();
        Value k = sort_key(attribute.is_none() ? item : attribute_path(in, item, attribute),
                           case_sensitive);
        Value b = sort_key(attribute.is_none() ? *best : attribute_path(in, *best, attribute),
                           case_sensitive);
        uint64_t work = 0;
        if (compare(want_max ? ">" : "<", k, b, &work)) best = &item;
        in.step(work);
    }
    return *best;
}

Value f_min(Interpreter &in, const Value &v, Args &a) {
    return min_max(in, v, a, false);
}
Value f_max(Interpreter &in, const Value &v, Args &a) {
    return min_max(in, v, a, true);
}

Value f_attr(Interpreter &in, const Value &v, Args &a) {
    Value name = a.get_or(0, "name", Value::none());
    a.done(1);
    if (!name.is_str()) type_error("attr name must be a string");
    return get_attr(in, v, name.str());
}

Value f_wordcount(Interpreter &in, const Value &v, Args &a) {
    a.done(0);
    return Value(int64_t(py_split(text(in, v), std::nullopt, -1, false).size()));
}

Value f_center(Interpreter &in, const Value &v, Args &a) {
    int64_t width = std::min<int64_t>(a.get_or(0, "width", Value(int64_t(80))).as_int(),
                                      int64_t(in.max_bytes()));
    a.done(1);
    std::string s = text(in, v);
    int64_t n = int64_t(utf8_length(s));
    if (width <= n) return Value(s);
    int64_t pad = width - n, left = pad / 2 + (pad & width & 1);
    return Value(std::string(size_t(left), ' ') + s + std::string(size_t(pad - left), ' '));
}

// "%s and %s" | format(a, b): Python's % formatting.
Value f_format(Interpreter &in, const Value &v, CallArgs &call) {
    if (!call.keywords.empty()) type_error("format: keyword arguments are not supported");
    return Value(py_percent(text(in, v), Value(call.positional, true), in.max_bytes()));
}

Value f_batch(Interpreter &, const Value &v, Args &a) {
    int64_t size = a.get_or(0, "linecount", Value(int64_t(1))).as_int();
    Value fill = a.get_or(1, "fill_with", Value::none());
    a.done(2);
    if (size <= 0) fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: batch size must be positive");
    List out, cur;
    for (const Value &item : iterate(v)) {
        cur.push_back(item);
        if (int64_t(cur.size()) == size) {
            out.emplace_back(std::move(cur));
            cur.clear();
        }
    }
    if (!cur.empty()) {
        if (!fill.is_none())
            while (int64_t(cur.size()) < size)
                cur.push_back(fill);
        out.emplace_back(std::move(cur));
    }
    return Value(std::move(out));
}

const std::map<std::string, Filter> &filters() {
    static const std::map<std::string, Filter> table = {
        {"tojson", f_tojson},
        {"trim", f_trim},
        {"length", f_length},
        {"count", f_length},
        {"string", f_string},
        {"default", f_default},
        {"d", f_default},
        {"items", f_items},
        {"dictsort", f_dictsort},
        {"join", f_join},
        {"indent", f_indent},
        {"list", f_list},
        {"first", f_first},
        {"last", f_last},
        {"lower", f_lower},
        {"upper", f_upper},
        {"title", f_title},
        {"capitalize", f_capitalize},
        {"replace", f_replace},
        {"safe", f_safe},
        {"escape", f_escape},
        {"e", f_escape},
        {"forceescape", f_forceescape},
        {"reverse", f_reverse},
        {"unique", f_unique},
        {"sort", f_sort},
        {"int", f_int},
        {"float", f_float},
        {"abs", f_abs},
        {"round", f_round},
        {"sum", f_sum},
        {"min", f_min},
        {"max", f_max},
        {"attr", f_attr},
        {"wordcount", f_wordcount},
        {"center", f_center},
        {"batch", f_batch},
    };
    return table;
}

}  // namespace

Value call_filter(Interpreter &in, const std::string &name, const Value &v, CallArgs &args) {
    if (name == "map") return f_map(in, v, args);
    if (name == "format") return f_format(in, v, args);
    if (name == "select" || name == "reject" || name == "selectattr" || name == "rejectattr") {
        return select(in, v, args, name.size() > 6, name[0] == 's');
    }
    auto it = filters().find(name);
    if (it == filters().end())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "TemplateAssertionError: No filter named '%s'.",
             name.c_str());
    Args a(name.c_str(), args);
    return it->second(in, v, a);
}

}  // namespace vkllm::chat
