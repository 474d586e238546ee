// The parsed template: expressions and statements, as jinja2's parser builds them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace vkllm::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
    enum class Type {
        Const,         // value
        Name,          // name
        ListLiteral,   // args
        TupleLiteral,  // args
        DictLiteral,   // args: key, value, key, value...
        Attr,          // args[0].name
        Item,          // args[0][args[1]]
        Slice,         // args: start, stop, step (null when absent)
        Call,          // args[0](args[1..], kwargs)
        Filter,        // args[0] | name(args[1..], kwargs)
        Test,          // args[0] is name(args[1..], kwargs); negated when `is not`
        Not,           // not args[0]
        Neg,           // -args[0]
        Pos,           // +args[0]
        Binary,        // args[0] op args[1]: + - * / // % **
        Concat,        // args joined with ~
        Compare,       // args[0] ops[0] args[1] ops[1] args[2] ...: == != < <= > >= in notin
        And,           // args[0] and args[1]
        Or,            // args[0] or args[1]
        CondExpr,      // args[1] if args[0] else args[2] (args[2] null: undefined)
    };
    Type type;
    size_t offset = 0;
    int depth = 1;  // of the tree below, this node included
    Value value;
    std::string name;
    bool negated = false;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::string> ops;
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct MacroParam {
    std::string name;
    ExprPtr default_value;  // null: required
};

struct Node {
    enum class Type {
        Text,       // text
        Output,     // {{ expr }}
        If,         // if values[0]: branches[0], elif values[1]: branches[1], ..., else: else_body
        For,        // for targets in expr [if filter]: body, else: else_body
        Set,        // set targets = expr; or set targets[0].attr = expr (namespace)
        SetBlock,   // set targets[0] %}body{% endset; filter (may be null) applies to it
        Macro,      // macro name(params): body
        CallBlock,  // call(params) expr: body is `caller`
        FilterBlock,  // filter chain over body's text
        With,         // with targets = values: body
        Break,
        Continue,
        Generation,  // transformers' {% generation %}: renders body
    };
    Type type;
    size_t offset = 0;
    std::string text;
    std::string attr;  // Set on a namespace attribute
    ExprPtr expr;
    ExprPtr filter;  // For's condition; SetBlock's and FilterBlock's filter chain
    std::vector<std::string> targets;
    std::vector<ExprPtr> values;  // With's values, If's conditions
    std::vector<Body> branches;   // If's
    std::vector<MacroParam> params;
    Body body;
    Body else_body;
};

// A filter chain (FilterBlock, SetBlock) applies to this name, bound to the body's text.
inline constexpr const char *kBlockBodyName =
    "\x01"
    "body";

}  // namespace vkllm::chat
