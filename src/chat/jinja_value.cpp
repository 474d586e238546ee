#include "chat/jinja_value.h"

#include <algorithm>

#include "common/error.h"

namespace vkllm::chat {

const std::string Value::empty_;

Value Value::none() {
    Value v;
    v.kind_ = Kind::None;
    return v;
}

Value Value::undefined(std::string hint) {
    Value v;
    v.s_ = std::make_shared<const std::string>(std::move(hint));
    return v;
}

Value Value::markup(std::string s) {
    Value v(std::move(s));
    v.markup_ = true;
    return v;
}

Value::Value(bool b) : kind_(Kind::Bool), b_(b) {}
Value::Value(int64_t i) : kind_(Kind::Int), i_(i) {}
Value::Value(double f) : kind_(Kind::Float), f_(f) {}
Value::Value(std::string s)
    : kind_(Kind::Str), s_(std::make_shared<const std::string>(std::move(s))) {}
Value::Value(List items, bool tuple) : kind_(Kind::Sequence), tuple_(tuple) {
    for (const Value &v : items)
        depth_ = std::max(depth_, v.depth_);
    check_depth();
    l_ = std::make_shared<const List>(std::move(items));
}

Value::Value(std::shared_ptr<Dict> dict, Kind kind) : kind_(kind), d_(std::move(dict)) {
    if (kind != Kind::Dict) return;
    for (const auto &kv : d_->items)
        depth_ = std::max({depth_, kv.first.depth_, kv.second.depth_});
    check_depth();
}

void Value::check_depth() {
    if (++depth_ > kMaxValueDepth)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "values nested deeper than %d lists and dicts",
             kMaxValueDepth);
}
Value::Value(std::shared_ptr<Callable> callable) : kind_(Kind::Callable), c_(std::move(callable)) {}

double Value::as_float() const {
    switch (kind_) {
        case Kind::Float:
            return f_;
        case Kind::Int:
            return double(i_);
        case Kind::Bool:
            return b_ ? 1.0 : 0.0;
        default:
            return 0;
    }
}

bool Value::truthy() const {
    switch (kind_) {
        case Kind::Undefined:
        case Kind::None:
            return false;
        case Kind::Bool:
            return b_;
        case Kind::Int:
            return i_ != 0;
        case Kind::Float:
            return f_ != 0;
        case Kind::Str:
            return !s_->empty();
        case Kind::Sequence:
            return !l_->empty();
        case Kind::Dict:
            return !d_->items.empty();
        case Kind::Namespace:
        case Kind::Callable:
            return true;
    }
    return false;
}

const Value *Dict::find(const Value &key) const {
    if (!hashable(key)) return nullptr;
    for (const auto &kv : items)
        if (equal(kv.first, key)) return &kv.second;
    return nullptr;
}

const Value *Dict::find(const std::string &key) const {
    for (const auto &kv : items)
        if (kv.first.is_str() && kv.first.str() == key) return &kv.second;
    return nullptr;
}

void Dict::set(const Value &key, Value value) {
    for (auto &kv : items)
        if (equal(kv.first, key)) {
            kv.second = std::move(value);
            return;
        }
    items.emplace_back(key, std::move(value));
}

Value make_dict(std::vector<std::pair<Value, Value>> items) {
    auto d = std::make_shared<Dict>();
    d->items = std::move(items);
    return Value(std::move(d));
}

Value make_native(std::string name, NativeCallable::Fn fn) {
    return Value(std::shared_ptr<Callable>(
        std::make_shared<NativeCallable>(std::move(name), std::move(fn))));
}

namespace {

bool equal_counted(const Value &a, const Value &b, uint64_t &visits) {
    if (++visits > kMaxCompareVisits)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "a comparison visits more than %llu values",
             static_cast<unsigned long long>(kMaxCompareVisits));
    using K = Value::Kind;
    if (a.is_number() && b.is_number()) {
        if (a.kind() != K::Float && b.kind() != K::Float) return a.as_int() == b.as_int();
        return a.as_float() == b.as_float();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case K::Undefined:
        case K::None:
            return true;
        case K::Str:
            return a.str() == b.str();
        case K::Sequence: {
            if (a.same_list(b)) return a.is_tuple() == b.is_tuple();
            if (a.is_tuple() != b.is_tuple() || a.list().size() != b.list().size()) return false;
            for (size_t i = 0; i < a.list().size(); ++i)
                if (!equal_counted(a.list()[i], b.list()[i], visits)) return false;
            return true;
        }
        case K::Dict: {
            if (a.dict_ptr() == b.dict_ptr()) return true;
            if (a.dict().items.size() != b.dict().items.size()) return false;
            for (const auto &kv : a.dict().items) {
                const Value *other = b.dict().find(kv.first);
                if (!other || !equal_counted(kv.second, *other, visits)) return false;
            }
            return true;
        }
        case K::Namespace:
            return a.dict_ptr() == b.dict_ptr();
        case K::Callable:
            return &a.callable() == &b.callable();
        default:
            return false;
    }
}

}  // namespace

bool equal(const Value &a, const Value &b, uint64_t *work) {
    uint64_t visits = 0;
    bool result = equal_counted(a, b, visits);
    if (work) *work += visits;
    return result;
}

bool hashable(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Str:
        case Value::Kind::Int:
        case Value::Kind::Float:
        case Value::Kind::Bool:
        case Value::Kind::None:
            return true;
        default:
            return false;
    }
}

std::string type_name(const Value &v) {
    switch (v.kind()) {
        case Value::Kind::Undefined:
            return "Undefined";
        case Value::Kind::None:
            return "NoneType";
        case Value::Kind::Bool:
            return "bool";
        case Value::Kind::Int:
            return "int";
        case Value::Kind::Float:
            return "float";
        case Value::Kind::Str:
            return "str";
        case Value::Kind::Sequence:
            return v.is_tuple() ? "tuple" : "list";
        case Value::Kind::Dict:
            return "dict";
        case Value::Kind::Namespace:
            return "Namespace";
        case Value::Kind::Callable:
            return "function";
    }
    return "object";
}

}  // namespace vkllm::chat
