// The values a chat template computes with, shaped like Python's: none, bool, int, float, str,
// list (and tuple), dict (insertion-ordered), plus jinja2's lenient undefined, namespace objects
// and callables (macros, globals, bound methods). Lists and dicts are shared and never mutated
// once wrapped in a Value (the sandbox is immutable); a namespace is the one mutable object,
// shared by reference as in Python.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vkllm::chat {

class Value;
struct Dict;
struct Callable;

using List = std::vector<Value>;

// Deepest nesting of lists and dicts a value may have (JSON input allows 128).
inline constexpr int kMaxValueDepth = 200;

class Value {
  public:
    // Sequence: a list or a tuple.
    enum class Kind { Undefined, None, Bool, Int, Float, Str, Sequence, Dict, Namespace, Callable };

    Value() = default;  // undefined
    static Value none();
    static Value undefined(std::string hint);
    // A string marked safe (jinja2's Markup, from `safe` or `escape`): `+` with a plain string
    // HTML-escapes the plain one.
    static Value markup(std::string s);
    Value(bool b);
    Value(int64_t i);
    Value(int i) : Value(int64_t(i)) {}
    Value(double f);
    Value(std::string s);
    Value(const char *s) : Value(std::string(s)) {}
    Value(List items, bool tuple = false);
    Value(std::shared_ptr<Dict> dict, Kind kind = Kind::Dict);
    Value(std::shared_ptr<Callable> callable);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::Undefined; }
    bool is_none() const { return kind_ == Kind::None; }
    bool is_str() const { return kind_ == Kind::Str; }
    bool is_int() const { return kind_ == Kind::Int; }  // bool is not an int here
    bool is_number() const {
        return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool;
    }
    bool is_list() const { return kind_ == Kind::Sequence; }
    bool is_tuple() const { return kind_ == Kind::Sequence && tuple_; }
    bool is_dict() const { return kind_ == Kind::Dict; }
    bool is_markup() const { return kind_ == Kind::Str && markup_; }
    // Lists and dicts inside one another (namespaces, which may hold themselves, count 0: no
    // walk looks inside them). Bounded by kMaxValueDepth, so that printing, comparing and
    // freeing a value recurse a bounded depth.
    int depth() const { return depth_; }

    bool as_bool() const { return b_; }
    int64_t as_int() const { return kind_ == Kind::Bool ? int64_t(b_) : i_; }
    double as_float() const;
    const std::string &str() const { return *s_; }
    const List &list() const { return *l_; }
    // Whether two sequences are one object (Python's `is`).
    bool same_list(const Value &other) const { return l_ == other.l_; }
    Dict &dict() const { return *d_; }
    const std::shared_ptr<Dict> &dict_ptr() const { return d_; }
    Callable &callable() const { return *c_; }
    // For undefined values: why it is undefined ("'x' is undefined"), for error messages.
    const std::string &undefined_name() const { return s_ ? *s_ : empty_; }

    // Python truthiness (undefined is false).
    bool truthy() const;

  private:
    Kind kind_ = Kind::Undefined;
    bool b_ = false;
    bool tuple_ = false;
    bool markup_ = false;
    int depth_ = 0;
    int64_t i_ = 0;
    double f_ = 0;
    std::shared_ptr<const std::string> s_;
    std::shared_ptr<const List> l_;
    std::shared_ptr<Dict> d_;
    std::shared_ptr<Callable> c_;
    static const std::string empty_;

    void check_depth();
};

// Insertion-ordered mapping. Lookup is linear: template dicts hold a handful of keys.
struct Dict {
    std::vector<std::pair<Value, Value>> items;

    const Value *find(const Value &key) const;
    const Value *find(const std::string &key) const;
    void set(const Value &key, Value value);
};

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keywords;
};

class Interpreter;

// Something a template can call: a macro, a global function, a bound method.
struct Callable {
    virtual ~Callable() = default;
    virtual Value call(Interpreter &interp, CallArgs &args) = 0;
    virtual std::string name() const = 0;
};

// A callable made of a C++ function; `self` carries a bound method's object.
struct NativeCallable : Callable {
    using Fn = std::function<Value(Interpreter &, CallArgs &)>;
    NativeCallable(std::string n, Fn f) : name_(std::move(n)), fn(std::move(f)) {}
    Value call(Interpreter &interp, CallArgs &args) override { return fn(interp, args); }
    std::string name() const override { return name_; }
    std::string name_;
    Fn fn;
};

Value make_dict(std::vector<std::pair<Value, Value>> items = {});
Value make_native(std::string name, NativeCallable::Fn fn);

// Python's equality (1 == 1.0 == True, lists and dicts element-wise; a list is equal to
// itself without a look inside, as in Python). Adds the values visited to *work when given,
// so that callers charge it to the render's budget; one comparison visiting more than
// kMaxCompareVisits values fails (shared sublists describe exponentially large trees).
bool equal(const Value &a, const Value &b, uint64_t *work = nullptr);
inline constexpr uint64_t kMaxCompareVisits = 1'000'000;
// Dict keys are what Python hashes: str, int, float, bool, None (tuples are not allowed).
bool hashable(const Value &v);
// Python's type name, for messages ("str", "NoneType", "list", ...).
std::string type_name(const Value &v);

}  // namespace vkllm::chat
