// The recursive-descent parser of jinja_parser.h: its token cursor and helpers, then one method a
// grammar rule. Statements are parsed in jinja_parser.cpp, expressions in
// jinja_expression_parser.cpp.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>

#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"
#include "chat/jinja_parser.h"

namespace vkllm::chat::jinja_parse {

// Deepest expression tree (operators, lookups, calls and brackets together).
constexpr int kMaxExpressionDepth = 256;

using T = Token::Type;
using E = Expr::Type;

class Parser {
  public:
    Parser(LexedTemplate lexed, int max_depth) : lx_(std::move(lexed)), max_depth_(max_depth) {}

    ParsedTemplate run() {
        ParsedTemplate out;
        out.body = body({});
        out.source = std::move(lx_.source);
        return out;
    }

  private:
    LexedTemplate lx_;
    size_t i_ = 0;
    int depth_ = 0;
    int max_depth_;
    std::string end_tag_;  // the tag that ended the last body()
    int loops_ = 0;        // for bodies around the current point, up to the nearest macro

    // Parses a body that jinja2 compiles as a function of its own (a macro, a call block's
    // caller, {% generation %}): no loop encloses it.
    Body function_body(std::initializer_list<const char *> ends);

    struct Deeper {
        Parser &p;
        explicit Deeper(Parser &parser, size_t offset) : p(parser) {
            if (++p.depth_ > p.max_depth_) p.error(offset, "nesting too deep");
        }
        ~Deeper() { --p.depth_; }
    };

    const Token &peek(size_t ahead = 0) const;
    const Token &next();

    [[noreturn]] void error(size_t offset, const std::string &what);

    static std::string describe(const Token &t);

    bool is_op(const char *op, size_t ahead = 0) const;
    bool is_name(const char *name, size_t ahead = 0) const;
    bool accept_op(const char *op);
    bool accept_name(const char *name);
    void expect_op(const char *op);
    std::string expect_name();
    void expect_block_end();

    static ExprPtr make(E type, size_t offset);

    // Sets a composite expression's depth from its operands'. Chains the grammar builds in a
    // loop (a + b + c..., x.a.b..., x | f | g...) need no recursion to parse, but evaluating
    // (and freeing) them recurses as deep as they are: their depth is bounded too.
    ExprPtr deepen(ExprPtr e);

    // The name a block's rendered text is bound to, for {% filter %} and {% set x | f %}.
    static ExprPtr block_body_name(size_t offset);

    // ---- statements (jinja_parser.cpp)

    // Nodes until one of the given tags (or the end when none); the tag's name is consumed and
    // left in end_tag_, the rest of that tag is the caller's to read.
    Body body(std::initializer_list<const char *> ends);

    NodePtr statement();

    // if / elif... / else is one node: a long elif chain nests nothing.
    NodePtr if_statement(NodePtr n);

    void targets(Node &n);

    NodePtr for_statement(NodePtr n);

    NodePtr set_statement(NodePtr n);

    void params(Node &n);

    NodePtr macro_statement(NodePtr n);

    NodePtr call_statement(NodePtr n);

    NodePtr with_statement(NodePtr n);

    // ---- expressions (jinja_expression_parser.cpp; jinja2's precedence, lowest first)

    // A comma-separated list without brackets is a tuple ({% set a, b = 1, 2 %}).
    ExprPtr tuple(bool with_condexpr);

    ExprPtr expression(bool with_condexpr);

    ExprPtr binary(E type, ExprPtr left, ExprPtr right, size_t offset, std::string op = {});

    ExprPtr or_expr();

    ExprPtr and_expr();

    ExprPtr not_expr();

    ExprPtr compare();

    ExprPtr math1();

    ExprPtr concat();

    ExprPtr math2();

    ExprPtr pow();

    ExprPtr unary(bool with_filter);

    ExprPtr constant(Value v, size_t offset);

    ExprPtr primary();

    ExprPtr postfix(ExprPtr node);

    ExprPtr subscript();

    // (args) after a callee, a filter or a test: positional, then name=value.
    void arguments(Expr &e);

    ExprPtr call(ExprPtr callee);

    std::string dotted_name();

    ExprPtr filter_chain(ExprPtr node);

    ExprPtr filter_expr(ExprPtr node);

    // `x is divisibleby 3`, `x is sameas false`: a test takes one argument without brackets,
    // any name but else, or and and included (jinja2 reads `x is odd if c` as `odd(if)`).
    bool test_argument_follows();
};

}  // namespace vkllm::chat::jinja_parse
