#include "chat/jinja_ops.h"

#include <cmath>

#include "chat/jinja_strings.h"
#include "chat/jinja_text.h"
#include "common/checked_int.h"
#include "common/error.h"

namespace vkllm::chat {

void type_error(const std::string &message) {
    fail(VKLLM_ERR_INVALID_ARGUMENT, "TypeError: %s", message.c_str());
}

void undefined_error(const Value &v) {
    fail(VKLLM_ERR_INVALID_ARGUMENT, "UndefinedError: %s",
         v.undefined_name().empty() ? "undefined value" : v.undefined_name().c_str());
}

namespace {

// The longest list `+` and `*` build (jinja2's sandbox caps range() the same way).
constexpr size_t kMaxListItems = 100000;

[[noreturn]] void unsupported(const std::string &op, const Value &a, const Value &b) {
    type_error("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" +
               type_name(b) + "'");
}

void check_overflow(bool overflow) {
    if (overflow) fail(VKLLM_ERR_INVALID_ARGUMENT, "OverflowError: integer result out of range");
}

int64_t floor_div(int64_t a, int64_t b) {
    check_overflow(b == -1 && a == INT64_MIN);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

Value repeat(const Value &seq, int64_t n, size_t max_bytes) {
    if (n <= 0) return seq.is_str() ? Value(std::string()) : Value(List{}, seq.is_tuple());
    if (seq.is_str()) {
        if (seq.str().size() * uint64_t(n) > max_bytes || uint64_t(n) > max_bytes)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes", max_bytes);
        std::string out;
        out.reserve(seq.str().size() * size_t(n));
        for (int64_t i = 0; i < n; ++i)
            out += seq.str();
        return Value(std::move(out));
    }
    if (seq.list().size() * uint64_t(n) > kMaxListItems || uint64_t(n) > kMaxListItems)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "MemoryError: a list longer than %zu items",
             kMaxListItems);
    List out;
    for (int64_t i = 0; i < n; ++i)
        out.insert(out.end(), seq.list().begin(), seq.list().end());
    return Value(std::move(out), seq.is_tuple());
}

}  // namespace

Value binary_op(const std::string &op, const Value &a, const Value &b, size_t max_bytes) {
    if (a.is_undefined()) undefined_error(a);
    if (b.is_undefined()) undefined_error(b);
    bool numbers = a.is_number() && b.is_number();
    bool ints = numbers && a.kind() != Value::Kind::Float && b.kind() != Value::Kind::Float;
    int64_t x = numbers ? a.as_int() : 0, y = numbers ? b.as_int() : 0, r = 0;
    double fx = a.as_float(), fy = b.as_float();
    if (op == "+") {
        if (ints) {
            check_overflow(!checked_add(x, y, &r));
            return Value(r);
        }
        if (numbers) return Value(fx + fy);
        if (a.is_str() && b.is_str()) {
            if (a.str().size() + b.str().size() > max_bytes)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes",
                     max_bytes);
            if (a.is_markup() == b.is_markup())
                return a.is_markup() ? Value::markup(a.str() + b.str()) : Value(a.str() + b.str());
            // Markup + str escapes the str (functionary's `"..."|safe + tojson` relies on it).
            std::string joined =
                a.is_markup() ? a.str() + html_escape(b.str()) : html_escape(a.str()) + b.str();
            if (joined.size() > max_bytes)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes",
                     max_bytes);
            return Value::markup(std::move(joined));
        }
        if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
            if (a.list().size() + b.list().size() > kMaxListItems)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "MemoryError: a list longer than %zu items",
                     kMaxListItems);
            List out = a.list();
            out.insert(out.end(), b.list().begin(), b.list().end());
            return Value(std::move(out), a.is_tuple());
        }
        if (a.is_str() || b.is_str())
            type_error(a.is_str()
                           ? "can only concatenate str (not \"" + type_name(b) + "\") to str"
                           : "unsupported operand type(s) for +: '" + type_name(a) + "' and 'str'");
        unsupported("+", a, b);
    }
    if (op == "-") {
        if (ints) {
            check_overflow(!checked_sub(x, y, &r));
            return Value(r);
        }
        if (numbers) return Value(fx - fy);
        unsupported("-", a, b);
    }
    if (op == "*") {
        if (ints) {
            check_overflow(!checked_mul(x, y, &r));
            return Value(r);
        }
        if (numbers) return Value(fx * fy);
        if ((a.is_str() || a.is_list()) && (b.is_int() || b.kind() == Value::Kind::Bool))
            return repeat(a, b.as_int(), max_bytes);
        if ((b.is_str() || b.is_list()) && (a.is_int() || a.kind() == Value::Kind::Bool))
            return repeat(b, a.as_int(), max_bytes);
        unsupported("*", a, b);
    }
    if (op == "/") {
        if (!numbers) unsupported("/", a, b);
        if (fy == 0) fail(VKLLM_ERR_INVALID_ARGUMENT, "ZeroDivisionError: division by zero");
        return Value(fx / fy);
    }
    if (op == "//" || op == "%") {
        if (!numbers) {
            if (op == "%" && a.is_str()) return Value(py_percent(a.str(), b, max_bytes));
            unsupported(op, a, b);
        }
        if (ints ? y == 0 : fy == 0)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "ZeroDivisionError: integer division or modulo by zero");
        if (ints) return Value(op == "//" ? floor_div(x, y) : floor_mod(x, y));
        double m = std::fmod(fx, fy);
        if (m != 0 && ((m < 0) != (fy < 0))) m += fy;
        if (op == "%") return Value(m);
        return Value(std::floor(fx / fy));
    }
    if (op == "**") {
        if (!numbers) unsupported("** or pow()", a, b);
        if (ints && y >= 0) {
            int64_t result = 1, base = x;
            for (int64_t e = y; e > 0; e >>= 1) {
                if (e & 1) check_overflow(!checked_mul(result, base, &result));
                if (e > 1) check_overflow(!checked_mul(base, base, &base));
            }
            return Value(result);
        }
        if (fx == 0 && fy < 0)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "ZeroDivisionError: 0.0 cannot be raised to a negative power");
        return Value(std::pow(fx, fy));
    }
    type_error("unknown operator " + op);
}

Value negate(const Value &v) {
    if (v.is_undefined()) undefined_error(v);
    if (v.kind() == Value::Kind::Float) return Value(-v.as_float());
    if (v.is_number()) {
        check_overflow(v.as_int() == INT64_MIN);
        return Value(-v.as_int());
    }
    type_error("bad operand type for unary -: '" + type_name(v) + "'");
}

namespace {

// -1, 0, 1 for a < b, a == b, a > b; TypeError when Python cannot order them.
int order(const Value &a, const Value &b, const std::string &op, uint64_t *work) {
    if (a.is_number() && b.is_number()) {
        if (a.kind() != Value::Kind::Float && b.kind() != Value::Kind::Float)
            return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
        double x = a.as_float(), y = b.as_float();
        return x < y ? -1 : x > y;
    }
    if (a.is_str() && b.is_str()) {
        int c = a.str().compare(b.str());
        return c < 0 ? -1 : c > 0;
    }
    if (a.is_list() && b.is_list()) {
        const List &x = a.list(), &y = b.list();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i)
            if (!equal(x[i], y[i], work)) return order(x[i], y[i], op, work);
        return x.size() < y.size() ? -1 : x.size() > y.size();
    }
    if (a.is_undefined()) undefined_error(a);
    if (b.is_undefined()) undefined_error(b);
    type_error("'" + op + "' not supported between instances of '" + type_name(a) + "' and '" +
               type_name(b) + "'");
}

}  // namespace

bool compare(const std::string &op, const Value &a, const Value &b, uint64_t *work) {
    if (op == "==") return equal(a, b, work);
    if (op == "!=") return !equal(a, b, work);
    int c = order(a, b, op, work);
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
}

bool contains(const Value &container, const Value &item, uint64_t *work) {
    switch (container.kind()) {
        case Value::Kind::Str:
            if (!item.is_str())
                type_error("'in <string>' requires string as left operand, not " + type_name(item));
            return container.str().find(item.str()) != std::string::npos;
        case Value::Kind::Sequence:
            for (const Value &v : container.list())
                if (equal(v, item, work)) return true;
            return false;
        case Value::Kind::Dict:
        case Value::Kind::Namespace:
            if (!hashable(item)) type_error("unhashable type: '" + type_name(item) + "'");
            return container.dict().find(item) != nullptr;
        case Value::Kind::Undefined:
            return false;
        default:
            type_error("argument of type '" + type_name(container) + "' is not iterable");
    }
}

List iterate(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Sequence:
            return v.list();
        case Value::Kind::Dict: {
            List keys;
            for (const auto &kv : v.dict().items)
                keys.push_back(kv.first);
            return keys;
        }
        case Value::Kind::Str: {
            List chars;
            for (char32_t c : utf8_decode(v.str())) {
                std::string s;
                utf8_append(s, c);
                chars.emplace_back(std::move(s));
            }
            return chars;
        }
        case Value::Kind::Undefined:
            return {};
        default:
            type_error("'" + type_name(v) + "' object is not iterable");
    }
}

std::optional<int64_t> length_of(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Str:
            return int64_t(utf8_length(v.str()));
        case Value::Kind::Sequence:
            return int64_t(v.list().size());
        case Value::Kind::Dict:
            return int64_t(v.dict().items.size());
        case Value::Kind::Undefined:
            return 0;
        default:
            return std::nullopt;
    }
}

Value index(const Value &v, const Value &key) {
    if (!(key.is_int() || key.kind() == Value::Kind::Bool)) return Value::undefined("");
    int64_t i = key.as_int();
    if (v.is_list()) {
        int64_t n = int64_t(v.list().size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Value::undefined("");
        return v.list()[size_t(i)];
    }
    std::u32string chars = utf8_decode(v.str());
    int64_t n = int64_t(chars.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::undefined("");
    std::string s;
    utf8_append(s, chars[size_t(i)]);
    return Value(std::move(s));
}

namespace {

int64_t slice_bound(const Value &v, const char *what) {
    if (v.is_int() || v.kind() == Value::Kind::Bool) return v.as_int();
    type_error(std::string("slice ") + what + " must be an integer or None");
}

}  // namespace

Value slice(const Value &v, const Value &start, const Value &stop, const Value &step) {
    bool has_start = !(start.is_undefined() || start.is_none());
    bool has_stop = !(stop.is_undefined() || stop.is_none());
    int64_t st = step.is_undefined() || step.is_none() ? 1 : slice_bound(step, "step");
    if (st == 0) fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: slice step cannot be zero");
    std::u32string chars;
    int64_t n;
    if (v.is_str()) {
        chars = utf8_decode(v.str());
        n = int64_t(chars.size());
    } else if (v.is_list()) {
        n = int64_t(v.list().size());
    } else {
        if (v.is_undefined()) undefined_error(v);
        type_error("'" + type_name(v) + "' object is not subscriptable");
    }
    // Python's PySlice_AdjustIndices.
    auto adjust = [&](bool has, const Value &b, int64_t dflt) {
        if (!has) return dflt;
        int64_t x = slice_bound(b, "indices");
        if (x < 0) {
            x += n;
            if (x < 0) x = st < 0 ? -1 : 0;
        } else if (x >= n) {
            x = st < 0 ? n - 1 : n;
        }
        return x;
    };
    int64_t lo = adjust(has_start, start, st < 0 ? n - 1 : 0);
    int64_t hi = adjust(has_stop, stop, st < 0 ? -1 : n);
    List items;
    std::u32string out;
    for (int64_t i = lo; st > 0 ? i < hi : i > hi; i += st) {
        if (v.is_str())
            out += chars[size_t(i)];
        else
            items.push_back(v.list()[size_t(i)]);
    }
    if (v.is_str()) return Value(utf8_encode(out));
    return Value(std::move(items), v.is_tuple());
}

}  // namespace vkllm::chat
