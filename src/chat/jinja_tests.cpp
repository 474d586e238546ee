// jinja2's tests (`x is defined`, `x is divisibleby 3`, and the ones select() names).
#include "chat/jinja_builtins.h"
#include "chat/jinja_ops.h"
#include "chat/jinja_strings.h"
#include "chat/jinja_text.h"
#include "common/error.h"

namespace vkllm::chat {

namespace {

Value argument(Args &a, const char *name) {
    std::optional<Value> v = a.get(0, name);
    a.done(1);
    if (!v) type_error(std::string("test needs an argument '") + name + "'");
    return *v;
}

}  // namespace

bool call_test(Interpreter &in, const std::string &name, const Value &v, CallArgs &args) {
    using K = Value::Kind;
    Args a(name.c_str(), args);
    auto no_args = [&](bool result) {
        a.done(0);
        return result;
    };
    if (name == "defined") return no_args(!v.is_undefined());
    if (name == "undefined") return no_args(v.is_undefined());
    if (name == "none") return no_args(v.is_none());
    if (name == "boolean") return no_args(v.kind() == K::Bool);
    if (name == "true") return no_args(v.kind() == K::Bool && v.as_bool());
    if (name == "false") return no_args(v.kind() == K::Bool && !v.as_bool());
    if (name == "integer") return no_args(v.kind() == K::Int);
    if (name == "float") return no_args(v.kind() == K::Float);
    if (name == "number") return no_args(v.is_number());
    if (name == "string") return no_args(v.is_str());
    if (name == "mapping") return no_args(v.is_dict());
    if (name == "iterable")
        return no_args(v.is_str() || v.is_list() || v.is_dict() || v.is_undefined());
    // Undefined has a length and a __getitem__, so jinja2 counts it a sequence.
    if (name == "sequence")
        return no_args(v.is_str() || v.is_list() || v.is_dict() || v.is_undefined());
    if (name == "callable") return no_args(v.kind() == K::Callable);
    if (name == "escaped") return no_args(false);
    if (name == "lower") return no_args(py_is_case(to_str(v, in.max_bytes()), true));
    if (name == "upper") return no_args(py_is_case(to_str(v, in.max_bytes()), false));
    if (name == "odd" || name == "even") {
        a.done(0);
        // jinja2 tests value % 2 (== 1 for odd, == 0 for even), floats included.
        Value rest = binary_op("%", v, Value(int64_t(2)), in.max_bytes());
        return equal(rest, Value(int64_t(name == "odd" ? 1 : 0)));
    }
    if (name == "divisibleby") {
        Value n = argument(a, "num");
        if (!v.is_number() || !n.is_number()) type_error("divisibleby needs numbers");
        if (n.as_int() == 0)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "ZeroDivisionError: integer division or modulo by zero");
        return equal(binary_op("%", v, n, 1), Value(int64_t(0)));
    }
    if (name == "sameas") {
        Value other = argument(a, "other");
        if (v.kind() != other.kind()) return false;
        // Python's `is`: None, booleans, small ints and literal strings are one object each.
        if (v.is_none() || v.kind() == K::Bool || v.is_int() || v.is_str()) return equal(v, other);
        return (v.is_dict() || v.kind() == K::Namespace) && v.dict_ptr() == other.dict_ptr();
    }
    uint64_t work = 0;
    auto charged = [&](bool result) {
        in.step(work);
        return result;
    };
    if (name == "in") return charged(contains(argument(a, "seq"), v, &work));
    static const std::pair<const char *, const char *> comparisons[] = {
        {"eq", "=="}, {"equalto", "=="},    {"==", "=="}, {"ne", "!="}, {"!=", "!="},
        {"lt", "<"},  {"lessthan", "<"},    {"<", "<"},   {"le", "<="}, {"<=", "<="},
        {"gt", ">"},  {"greaterthan", ">"}, {">", ">"},   {"ge", ">="}, {">=", ">="},
    };
    for (const auto &c : comparisons)
        if (name == c.first) return charged(compare(c.second, v, argument(a, "other"), &work));
    fail(VKLLM_ERR_INVALID_ARGUMENT, "TemplateAssertionError: No test named '%s'.", name.c_str());
}

}  // namespace vkllm::chat
