#include "chat/jinja_eval.h"

#include <algorithm>

#include "chat/jinja_builtins.h"
#include "chat/jinja_ops.h"
#include "chat/jinja_text.h"
#include "common/error.h"

namespace vkllm::chat {

const Value *Frame::find(const std::string &name) const {
    for (const Frame *f = this; f; f = f->parent.get()) {
        auto it = f->vars.find(name);
        if (it != f->vars.end()) return &it->second;
    }
    return nullptr;
}

namespace {

using E = Expr::Type;
using N = Node::Type;

// Makes `scope` a fresh child frame for the guard's lifetime.
struct ChildScope {
    Interpreter &in;
    std::shared_ptr<Frame> saved;
    explicit ChildScope(Interpreter &interp, std::shared_ptr<Frame> parent)
        : in(interp), saved(in.scope) {
        auto f = std::make_shared<Frame>();
        f->parent = std::move(parent);
        in.scope = std::move(f);
    }
    ~ChildScope() { in.scope = saved; }
};

// A macro, or a call block's body as `caller`: parameters bound in a frame under the scope
// it was defined in (so it sees that scope's later assignments too, as a Python closure does).
struct Macro : Callable {
    const Node &node;
    std::shared_ptr<Frame> closure;
    std::string name_;
    Macro(const Node &n, std::shared_ptr<Frame> c, std::string name)
        : node(n), closure(std::move(c)), name_(std::move(name)) {}
    std::string name() const override { return name_; }

    Value call(Interpreter &in, CallArgs &args) override {
        if (in.call_depth >= in.options().max_call_depth)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "RecursionError: macros nested deeper than %d calls",
                 in.options().max_call_depth);
        ++in.call_depth;
        struct Depth {
            int &d;
            ~Depth() { --d; }
        } depth{in.call_depth};
        ChildScope child(in, closure);
        auto &vars = in.scope->vars;
        std::vector<bool> bound(node.params.size(), false);
        List varargs;
        for (size_t i = 0; i < args.positional.size(); ++i) {
            if (i < node.params.size()) {
                vars[node.params[i].name] = args.positional[i];
                bound[i] = true;
            } else {
                varargs.push_back(args.positional[i]);
            }
        }
        auto kwargs = std::make_shared<Dict>();
        for (auto &kv : args.keywords) {
            bool found = false;
            for (size_t i = 0; i < node.params.size(); ++i)
                if (node.params[i].name == kv.first) {
                    if (bound[i])
                        type_error("macro '" + name_ + "' got multiple values for argument '" +
                                   kv.first + "'");
                    vars[kv.first] = kv.second;
                    bound[i] = found = true;
                }
            if (!found) {
                if (kv.first == "caller")
                    vars["caller"] = kv.second;
                else
                    kwargs->set(Value(kv.first), kv.second);
            }
        }
        for (size_t i = 0; i < node.params.size(); ++i)
            if (!bound[i])
                vars[node.params[i].name] =
                    node.params[i].default_value
                        ? in.eval(*node.params[i].default_value)
                        : Value::undefined("'" + node.params[i].name + "' is undefined");
        vars["varargs"] = Value(std::move(varargs), true);
        vars["kwargs"] = Value(kwargs);
        std::string out;
        in.exec(node.body, out);
        return Value(std::move(out));
    }
};

}  // namespace

Interpreter::Interpreter(const RenderOptions &options) : options_(options) {}

Interpreter::~Interpreter() {
    for (const auto &weak : closures_.items)
        if (auto frame = weak.lock()) frame->vars.clear();
    for (const auto &weak : dicts_.items)
        if (auto ns = weak.lock()) ns->items.clear();
}

template <typename T>
void Interpreter::WeakList<T>::add(const std::shared_ptr<T> &p) {
    if (items.size() >= next_sweep) {
        items.erase(
            std::remove_if(items.begin(), items.end(), [](const auto &w) { return w.expired(); }),
            items.end());
        next_sweep = std::max<size_t>(64, 2 * items.size());
    }
    items.push_back(p);
}

void Interpreter::track(const std::shared_ptr<Dict> &dict) {
    dicts_.add(dict);
}

void Interpreter::step(uint64_t n) {
    steps_ += n;
    if (steps_ > options_.max_steps)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "the template ran past its budget of %llu steps",
             static_cast<unsigned long long>(options_.max_steps));
}

void Interpreter::append(std::string &out, const std::string &text) {
    if (out.size() + text.size() > options_.max_output_bytes)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's output exceeds %zu bytes",
             options_.max_output_bytes);
    out += text;
}

std::string Interpreter::render(const Body &body, std::shared_ptr<Frame> root) {
    scope = std::make_shared<Frame>();
    scope->parent = std::move(root);
    std::string out;
    exec(body, out);
    return out;
}

Interpreter::Flow Interpreter::render_scoped(const Body &body, std::string &text) {
    ChildScope child(*this, scope);
    return exec(body, text);
}

Interpreter::Flow Interpreter::exec(const Body &body, std::string &out) {
    for (const NodePtr &n : body) {
        Flow f = exec_node(*n, out);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

Interpreter::Flow Interpreter::exec_node(const Node &n, std::string &out) {
    step();
    last_offset_ = n.offset;
    switch (n.type) {
        case N::Text:
            append(out, n.text);
            return Flow::Normal;
        case N::Output:
            append(out, to_str(eval(*n.expr), options_.max_output_bytes));
            return Flow::Normal;
        case N::If:
            for (size_t i = 0; i < n.values.size(); ++i)
                if (eval(*n.values[i]).truthy()) return exec(n.branches[i], out);
            return exec(n.else_body, out);
        case N::For:
            return exec_for(n, out);
        case N::Set:
        case N::SetBlock:
            return exec_set(n);
        case N::Macro:
            define_macro(n);
            return Flow::Normal;
        case N::CallBlock:
            exec_call_block(n, out);
            return Flow::Normal;
        case N::FilterBlock: {
            // A break or continue inside leaves the block unfiltered and unwritten, as jinja2's
            // inlined loop body does.
            std::string text;
            if (Flow f = render_scoped(n.body, text); f != Flow::Normal) return f;
            ChildScope child(*this, scope);
            scope->vars[kBlockBodyName] = Value(std::move(text));
            append(out, to_str(eval(*n.filter), options_.max_output_bytes));
            return Flow::Normal;
        }
        case N::With: {
            std::vector<Value> values;
            for (const ExprPtr &e : n.values)
                values.push_back(eval(*e));
            ChildScope child(*this, scope);
            for (size_t i = 0; i < n.targets.size(); ++i)
                scope->vars[n.targets[i]] = values[i];
            return exec(n.body, out);
        }
        case N::Generation: {
            std::string text;
            render_scoped(n.body, text);  // the parser allows no break or continue in it
            append(out, text);
            return Flow::Normal;
        }
        case N::Break:
            return Flow::Break;
        case N::Continue:
            return Flow::Continue;
    }
    return Flow::Normal;
}

namespace {

void bind_targets(Frame &frame, const std::vector<std::string> &targets, const Value &v) {
    if (targets.size() == 1) {
        frame.vars[targets[0]] = v;
        return;
    }
    List items = iterate(v);
    if (items.size() < targets.size())
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "ValueError: not enough values to unpack (expected %zu, got %zu)", targets.size(),
             items.size());
    if (items.size() > targets.size())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "ValueError: too many values to unpack (expected %zu)",
             targets.size());
    for (size_t i = 0; i < targets.size(); ++i)
        frame.vars[targets[i]] = items[i];
}

// The `loop` variable: a fresh dict each iteration (values are immutable once built, which
// keeps their nesting depth exact); its keys and the cycle() and changed() functions are made
// once per loop. changed() remembers its last arguments in a dict the render empties at its
// end, since they may hold the loop itself.
class LoopObject {
  public:
    LoopObject(Interpreter &in, const List &items)
        : items_(items), state_(std::make_shared<State>()) {
        static const char *keys[] = {"index",  "index0", "revindex", "revindex0", "first",
                                     "last",   "length", "previtem", "nextitem",  "depth",
                                     "depth0", "cycle",  "changed"};
        for (const char *k : keys)
            keys_.emplace_back(k);
        in.track(state_->memory);
        std::shared_ptr<State> state = state_;
        cycle_ = make_native("cycle", [state](Interpreter &, CallArgs &a) {
            if (a.positional.empty()) type_error("no items for cycling given");
            return a.positional[state->index % a.positional.size()];
        });
        changed_ = make_native("changed", [state](Interpreter &interp, CallArgs &a) {
            Value now(a.positional);
            auto &memory = state->memory->items;
            uint64_t work = 0;
            bool same = !memory.empty() && equal(memory[0].second, now, &work);
            interp.step(work);
            if (same) return Value(false);
            memory.assign(1, {Value(), now});
            return Value(true);
        });
    }

    Value at(size_t i) {
        state_->index = i;
        int64_t n = int64_t(items_.size()), k = int64_t(i);
        Value values[] = {
            Value(k + 1),
            Value(k),
            Value(n - k),
            Value(n - k - 1),
            Value(k == 0),
            Value(k == n - 1),
            Value(n),
            k > 0 ? items_[i - 1] : Value::undefined("there is no previous item"),
            k + 1 < n ? items_[i + 1] : Value::undefined("there is no next item"),
            Value(int64_t(1)),
            Value(int64_t(0)),
            cycle_,
            changed_,
        };
        auto d = std::make_shared<Dict>();
        d->items.reserve(keys_.size());
        for (size_t j = 0; j < keys_.size(); ++j)
            d->items.emplace_back(keys_[j], std::move(values[j]));
        return Value(d);
    }

  private:
    struct State {
        size_t index = 0;
        std::shared_ptr<Dict> memory = std::make_shared<Dict>();
    };
    const List &items_;
    std::shared_ptr<State> state_;
    std::vector<Value> keys_;
    Value cycle_, changed_;
};

}  // namespace

Interpreter::Flow Interpreter::exec_for(const Node &n, std::string &out) {
    Value source = eval(*n.expr);
    List all = iterate(source);
    List items;
    if (n.filter) {
        for (const Value &item : all) {
            step();
            ChildScope child(*this, scope);
            bind_targets(*scope, n.targets, item);
            if (eval(*n.filter).truthy()) items.push_back(item);
        }
    } else {
        items = std::move(all);
    }
    // jinja2 runs the else body unless some iteration ran its body to the end: its flag is
    // cleared at the end of the body, so a break or continue before it leaves the flag set.
    bool completed = false;
    if (!items.empty()) {
        LoopObject loop(*this, items);
        std::shared_ptr<Frame> outer = scope;
        for (size_t i = 0; i < items.size(); ++i) {
            step();
            ChildScope child(*this, outer);
            bind_targets(*scope, n.targets, items[i]);
            scope->vars["loop"] = loop.at(i);
            Flow f = exec(n.body, out);
            if (f == Flow::Break) break;
            if (f == Flow::Normal) completed = true;
        }
    }
    if (completed || n.else_body.empty()) return Flow::Normal;
    // The else body is outside the loop: a break there ends an enclosing loop.
    std::string text;
    Flow f = render_scoped(n.else_body, text);
    append(out, text);
    return f;
}

Interpreter::Flow Interpreter::exec_set(const Node &n) {
    Value v;
    if (n.type == N::SetBlock) {
        std::string text;
        if (Flow f = render_scoped(n.body, text); f != Flow::Normal) return f;
        v = Value(std::move(text));
        if (n.filter) {
            ChildScope child(*this, scope);
            scope->vars[kBlockBodyName] = v;
            v = eval(*n.filter);
        }
    } else {
        v = eval(*n.expr);
    }
    if (!n.attr.empty()) {
        const Value *ns = scope->find(n.targets[0]);
        if (!ns || ns->kind() != Value::Kind::Namespace)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "TemplateRuntimeError: cannot assign attribute on non-namespace object");
        if (n.attr[0] == '_')
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "SecurityError: Chat templates cannot store underscore-prefixed attributes on a "
                 "namespace, but got '%s'.",
                 n.attr.c_str());
        ns->dict().set(Value(n.attr), std::move(v));
        return Flow::Normal;
    }
    bind_targets(*scope, n.targets, v);
    return Flow::Normal;
}

void Interpreter::define_macro(const Node &n) {
    closures_.add(scope);
    scope->vars[n.text] =
        Value(std::shared_ptr<Callable>(std::make_shared<Macro>(n, scope, n.text)));
}

void Interpreter::exec_call_block(const Node &n, std::string &out) {
    closures_.add(scope);
    Value caller(std::shared_ptr<Callable>(std::make_shared<Macro>(n, scope, "caller")));
    const Expr &call_expr = *n.expr;
    Value callee = eval(*call_expr.args[0]);
    CallArgs args;
    for (size_t i = 1; i < call_expr.args.size(); ++i)
        args.positional.push_back(eval(*call_expr.args[i]));
    for (const auto &kv : call_expr.kwargs)
        args.keywords.emplace_back(kv.first, eval(*kv.second));
    args.keywords.emplace_back("caller", caller);
    append(out, to_str(call(callee, args), options_.max_output_bytes));
}

Value Interpreter::call(const Value &callee, CallArgs &args) {
    if (callee.kind() == Value::Kind::Callable) return callee.callable().call(*this, args);
    if (callee.is_undefined()) undefined_error(callee);
    type_error("'" + type_name(callee) + "' object is not callable");
}

Value Interpreter::eval_call(const Expr &e) {
    Value callee = eval(*e.args[0]);
    CallArgs args;
    for (size_t i = 1; i < e.args.size(); ++i)
        args.positional.push_back(eval(*e.args[i]));
    for (const auto &kv : e.kwargs)
        args.keywords.emplace_back(kv.first, eval(*kv.second));
    return call(callee, args);
}

Value Interpreter::eval_filter_or_test(const Expr &e) {
    Value v = eval(*e.args[0]);
    CallArgs args;
    for (size_t i = 1; i < e.args.size(); ++i)
        args.positional.push_back(eval(*e.args[i]));
    for (const auto &kv : e.kwargs)
        args.keywords.emplace_back(kv.first, eval(*kv.second));
    if (e.type == E::Filter) return call_filter(*this, e.name, v, args);
    return Value(call_test(*this, e.name, v, args) != e.negated);
}

Value Interpreter::eval(const Expr &e) {
    step();
    last_offset_ = e.offset;
    switch (e.type) {
        case E::Const:
            return e.value;
        case E::Name: {
            const Value *v = scope->find(e.name);
            return v ? *v : Value::undefined("'" + e.name + "' is undefined");
        }
        case E::ListLiteral:
        case E::TupleLiteral: {
            List items;
            for (const ExprPtr &a : e.args)
                items.push_back(eval(*a));
            return Value(std::move(items), e.type == E::TupleLiteral);
        }
        case E::DictLiteral: {
            auto d = std::make_shared<Dict>();
            for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
                Value key = eval(*e.args[i]);
                if (!hashable(key)) type_error("unhashable type: '" + type_name(key) + "'");
                d->set(key, eval(*e.args[i + 1]));
            }
            return Value(d);
        }
        case E::Attr:
            return get_attr(*this, eval(*e.args[0]), e.name);
        case E::Item: {
            Value obj = eval(*e.args[0]);
            const Expr &key = *e.args[1];
            if (key.type != E::Slice) return get_item(*this, obj, eval(key));
            auto bound = [&](size_t i) { return key.args[i] ? eval(*key.args[i]) : Value::none(); };
            Value start = bound(0), stop = bound(1), stride = bound(2);
            return slice(obj, start, stop, stride);
        }
        case E::Slice:
            type_error("slice outside of a subscript");
        case E::Call:
            return eval_call(e);
        case E::Filter:
        case E::Test:
            return eval_filter_or_test(e);
        case E::Not:
            return Value(!eval(*e.args[0]).truthy());
        case E::Neg:
            return negate(eval(*e.args[0]));
        case E::Pos: {
            Value v = eval(*e.args[0]);
            if (v.is_undefined()) undefined_error(v);
            if (!v.is_number()) type_error("bad operand type for unary +: '" + type_name(v) + "'");
            return v;
        }
        case E::Binary: {
            Value a = eval(*e.args[0]);
            Value b = eval(*e.args[1]);
            return binary_op(e.name, a, b, options_.max_output_bytes);
        }
        case E::Concat: {
            std::string s;
            for (const ExprPtr &a : e.args) {
                s += to_str(eval(*a), options_.max_output_bytes);
                if (s.size() > options_.max_output_bytes)
                    fail(VKLLM_ERR_INVALID_ARGUMENT, "the template's text exceeds %zu bytes",
                         options_.max_output_bytes);
            }
            return Value(std::move(s));
        }
        case E::Compare: {
            Value left = eval(*e.args[0]);
            for (size_t i = 0; i < e.ops.size(); ++i) {
                Value right = eval(*e.args[i + 1]);
                const std::string &op = e.ops[i];
                uint64_t work = 0;
                bool ok = op == "in"      ? contains(right, left, &work)
                          : op == "notin" ? !contains(right, left, &work)
                                          : compare(op, left, right, &work);
                step(work);
                if (!ok) return Value(false);
                left = std::move(right);
            }
            return Value(true);
        }
        case E::And: {
            Value a = eval(*e.args[0]);
            return a.truthy() ? eval(*e.args[1]) : a;
        }
        case E::Or: {
            Value a = eval(*e.args[0]);
            return a.truthy() ? a : eval(*e.args[1]);
        }
        case E::CondExpr:
            if (eval(*e.args[0]).truthy()) return eval(*e.args[1]);
            return e.args[2] ? eval(*e.args[2]) : Value::undefined("");
    }
    return Value();
}

}  // namespace vkllm::chat
