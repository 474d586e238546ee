// Attribute and item lookup (jinja2's sandboxed getattr/getitem), the methods of dict and list,
// and Args, the binding of a builtin's arguments.
#include "chat/jinja_builtins.h"
#include "chat/jinja_ops.h"
#include "chat/jinja_strings.h"
#include "chat/jinja_text.h"
#include "common/error.h"

namespace vkllm::chat {

std::optional<Value> Args::get(size_t i, const char *name) {
    if (i < args_.positional.size()) return args_.positional[i];
    for (const auto &kv : args_.keywords)
        if (kv.first == name) {
            ++keywords_used_;
            return kv.second;
        }
    return std::nullopt;
}

Value Args::get_or(size_t i, const char *name, Value fallback) {
    std::optional<Value> v = get(i, name);
    return v ? *v : fallback;
}

void Args::done(size_t n) {
    if (args_.positional.size() > n)
        type_error(std::string(function_) + "() takes at most " + std::to_string(n) +
                   " positional argument(s) (" + std::to_string(args_.positional.size()) +
                   " given)");
    if (keywords_used_ < args_.keywords.size())
        type_error(std::string(function_) + "() got an unexpected keyword argument");
}

namespace {

bool unsafe_method(const Value &obj, const std::string &name) {
    static const char *list_mutators[] = {"append", "extend", "insert", "pop",
                                          "remove", "clear",  "sort",   "reverse"};
    static const char *dict_mutators[] = {"update", "pop", "popitem", "setdefault", "clear"};
    if (obj.is_list() && !obj.is_tuple())
        for (const char *m : list_mutators)
            if (name == m) return true;
    if (obj.is_dict())
        for (const char *m : dict_mutators)
            if (name == m) return true;
    return false;
}

std::optional<Value> dict_method(const Value &obj, const std::string &name) {
    auto d = obj.dict_ptr();
    if (name == "items")
        return make_native("dict.items", [d](Interpreter &, CallArgs &call) {
            Args("items", call).done(0);
            List out;
            for (const auto &kv : d->items)
                out.emplace_back(List{kv.first, kv.second}, true);
            return Value(std::move(out));
        });
    if (name == "keys" || name == "values") {
        bool keys = name == "keys";
        return make_native("dict." + name, [d, keys](Interpreter &, CallArgs &call) {
            Args(keys ? "keys" : "values", call).done(0);
            List out;
            for (const auto &kv : d->items)
                out.push_back(keys ? kv.first : kv.second);
            return Value(std::move(out));
        });
    }
    if (name == "get")
        return make_native("dict.get", [d](Interpreter &, CallArgs &call) {
            Args a("get", call);
            std::optional<Value> key = a.get(0, "key");
            Value fallback = a.get_or(1, "default", Value::none());
            a.done(2);
            if (!key) type_error("get expected at least 1 argument, got 0");
            const Value *v = d->find(*key);
            return v ? *v : fallback;
        });
    if (name == "copy")
        return make_native("dict.copy", [d](Interpreter &, CallArgs &call) {
            Args("copy", call).done(0);
            return make_dict(d->items);
        });
    return std::nullopt;
}

std::optional<Value> list_method(const Value &obj, const std::string &name) {
    if (name != "index" && name != "count") return std::nullopt;
    bool count = name == "count";
    return make_native("list." + name, [obj, count](Interpreter &in, CallArgs &call) {
        Args a(count ? "count" : "index", call);
        std::optional<Value> x = a.get(0, "value");
        a.done(1);
        if (!x) type_error("expected 1 argument, got 0");
        int64_t n = 0;
        for (size_t i = 0; i < obj.list().size(); ++i) {
            uint64_t work = 0;
            bool same = equal(obj.list()[i], *x, &work);
            in.step(work);
            if (!same) continue;
            if (!count) return Value(int64_t(i));
            ++n;
        }
        if (!count) fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: value is not in list");
        return Value(n);
    });
}

}  // namespace

Value get_attr(Interpreter &, const Value &obj, const std::string &name) {
    if (obj.is_undefined()) undefined_error(obj);
    if (unsafe_method(obj, name)) {
        std::string type = type_name(obj);
        return make_native(name, [name, type](Interpreter &, CallArgs &) -> Value {
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "SecurityError: access to attribute '%s' of '%s' object is unsafe.", name.c_str(),
                 type.c_str());
        });
    }
    std::optional<Value> method;
    if (obj.is_str()) method = string_method(obj.str(), name);
    if (obj.is_dict()) method = dict_method(obj, name);
    if (obj.is_list()) method = list_method(obj, name);
    if (method) return *method;
    if (obj.is_dict() || obj.kind() == Value::Kind::Namespace) {
        if (const Value *v = obj.dict().find(name)) return *v;
        return Value::undefined("'" + std::string(obj.is_dict() ? "dict" : "Namespace") +
                                " object' has no attribute '" + name + "'");
    }
    return Value::undefined("'" + type_name(obj) + " object' has no attribute '" + name + "'");
}

Value get_item(Interpreter &in, const Value &obj, const Value &key) {
    if (obj.is_undefined()) undefined_error(obj);
    if (obj.is_dict() || obj.kind() == Value::Kind::Namespace) {
        if (const Value *v = obj.dict().find(key)) return *v;
    } else if (obj.is_list() || obj.is_str()) {
        if (key.is_int() || key.kind() == Value::Kind::Bool) return index(obj, key);
    }
    if (key.is_str()) return get_attr(in, obj, key.str());
    return Value::undefined("'" + type_name(obj) + " object' has no item " + to_repr(key, 256));
}

}  // namespace vkllm::chat
