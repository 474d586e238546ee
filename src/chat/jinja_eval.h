// The tree-walking evaluator of a parsed template: scopes as jinja2 has them (a for loop's
// body, a macro and a call block each get their own; if does not), loop.* variables,
// break/continue, macros and caller(), and the render's budget of steps, output and depth.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "chat/jinja.h"
#include "chat/jinja_ast.h"

namespace vkllm::chat {

struct Frame {
    std::shared_ptr<Frame> parent;
    std::unordered_map<std::string, Value> vars;
    const Value *find(const std::string &name) const;
};

class Interpreter {
  public:
    explicit Interpreter(const RenderOptions &options);
    // Breaks the reference cycles a render can make (a macro in the frame it closes over, a
    // namespace holding itself): everything the render created is unreachable afterwards.
    ~Interpreter();
    Interpreter(const Interpreter &) = delete;
    Interpreter &operator=(const Interpreter &) = delete;

    // Renders body with the given root scope (globals and context).
    std::string render(const Body &body, std::shared_ptr<Frame> root);

    // Calls a callable value (macros, globals, methods); anything else is a TypeError.
    Value call(const Value &callee, CallArgs &args);
    // Counts work against the budget; throws when it is spent.
    void step(uint64_t n = 1);
    // Remembers a mutable dict (a namespace, loop.changed()'s memory), to be emptied when the
    // render ends.
    void track(const std::shared_ptr<Dict> &dict);
    const RenderOptions &options() const { return options_; }
    size_t max_bytes() const { return options_.max_output_bytes; }
    // Where evaluation last was (an offset into the parsed source): a failure on the data is
    // reported there. raise_exception marks its error as the template's own message, which is
    // passed on as written.
    size_t last_offset() const { return last_offset_; }
    void mark_raised() { raised_ = true; }
    bool raised_by_template() const { return raised_; }

    // Internal to the evaluator's files.
    enum class Flow { Normal, Break, Continue };
    Flow exec(const Body &body, std::string &out);
    Value eval(const Expr &e);
    std::shared_ptr<Frame> scope;
    int call_depth = 0;

  private:
    const RenderOptions &options_;
    uint64_t steps_ = 0;
    size_t last_offset_ = 0;
    bool raised_ = false;
    // Objects to empty at the end. Entries of objects already gone are dropped whenever the
    // list has doubled since the last sweep, so a loop making namespaces keeps it proportional
    // to the live ones at constant amortised cost.
    template <typename T>
    struct WeakList {
        std::vector<std::weak_ptr<T>> items;
        size_t next_sweep = 64;
        void add(const std::shared_ptr<T> &p);
    };
    WeakList<Frame> closures_;
    WeakList<Dict> dicts_;

    Flow exec_node(const Node &n, std::string &out);
    Flow exec_for(const Node &n, std::string &out);
    Flow exec_set(const Node &n);
    void define_macro(const Node &n);
    void exec_call_block(const Node &n, std::string &out);
    void append(std::string &out, const std::string &text);
    Flow render_scoped(const Body &body, std::string &text);
    Value eval_call(const Expr &e);
    Value eval_filter_or_test(const Expr &e);
};

}  // namespace vkllm::chat
