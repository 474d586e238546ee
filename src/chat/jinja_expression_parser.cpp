// Jinja expressions, by jinja2's precedence from the lowest: tuples, conditional expressions,
// or/and/not, comparisons and tests, arithmetic, unary operators, filters, then primaries
// with their calls, attributes and subscripts.
#include <cerrno>
#include <cstdlib>
#include <string>
#include <utility>

#include "chat/jinja_parser_impl.h"
#include "common/error.h"

namespace vkllm::chat::jinja_parse {

ExprPtr Parser::tuple(bool with_condexpr) {
    size_t offset = peek().offset;
    ExprPtr first = with_condexpr ? expression(true) : or_expr();
    if (!is_op(",")) return first;
    auto t = make(E::TupleLiteral, offset);
    t->args.push_back(std::move(first));
    while (accept_op(",")) {
        if (peek().type == T::BlockEnd || peek().type == T::VarEnd || is_op(")")) break;
        t->args.push_back(with_condexpr ? expression(true) : or_expr());
    }
    return deepen(std::move(t));
}

ExprPtr Parser::expression(bool with_condexpr) {
    Deeper d(*this, peek().offset);
    ExprPtr e = or_expr();
    if (!with_condexpr) return e;
    while (is_name("if")) {
        size_t offset = next().offset;
        auto c = make(E::CondExpr, offset);
        c->args.push_back(or_expr());
        c->args.push_back(std::move(e));
        c->args.push_back(accept_name("else") ? expression(true) : nullptr);
        e = deepen(std::move(c));
    }
    return e;
}

ExprPtr Parser::binary(E type, ExprPtr left, ExprPtr right, size_t offset, std::string op) {
    auto b = make(type, offset);
    b->name = std::move(op);
    b->args.push_back(std::move(left));
    b->args.push_back(std::move(right));
    return deepen(std::move(b));
}

ExprPtr Parser::or_expr() {
    ExprPtr left = and_expr();
    while (is_name("or")) {
        size_t offset = next().offset;
        left = binary(E::Or, std::move(left), and_expr(), offset);
    }
    return left;
}

ExprPtr Parser::and_expr() {
    ExprPtr left = not_expr();
    while (is_name("and")) {
        size_t offset = next().offset;
        left = binary(E::And, std::move(left), not_expr(), offset);
    }
    return left;
}

ExprPtr Parser::not_expr() {
    if (is_name("not")) {
        Deeper d(*this, peek().offset);
        auto n = make(E::Not, next().offset);
        n->args.push_back(not_expr());
        return deepen(std::move(n));
    }
    return compare();
}

ExprPtr Parser::compare() {
    size_t offset = peek().offset;
    ExprPtr first = math1();
    auto c = make(E::Compare, offset);
    for (;;) {
        const Token &t = peek();
        std::string op;
        if (t.type == T::Op && (t.text == "==" || t.text == "!=" || t.text == "<" ||
                                t.text == "<=" || t.text == ">" || t.text == ">=")) {
            op = next().text;
        } else if (is_name("in")) {
            next();
            op = "in";
        } else if (is_name("not") && is_name("in", 1)) {
            next();
            next();
            op = "notin";
        } else {
            break;
        }
        c->ops.push_back(op);
        c->args.push_back(math1());
    }
    if (c->ops.empty()) return first;
    c->args.insert(c->args.begin(), std::move(first));
    return deepen(std::move(c));
}

ExprPtr Parser::math1() {
    ExprPtr left = concat();
    while (is_op("+") || is_op("-")) {
        const Token &t = next();
        left = binary(E::Binary, std::move(left), concat(), t.offset, t.text);
    }
    return left;
}

ExprPtr Parser::concat() {
    size_t offset = peek().offset;
    ExprPtr first = math2();
    if (!is_op("~")) return first;
    auto c = make(E::Concat, offset);
    c->args.push_back(std::move(first));
    while (accept_op("~"))
        c->args.push_back(math2());
    return deepen(std::move(c));
}

ExprPtr Parser::math2() {
    ExprPtr left = pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
        const Token &t = next();
        left = binary(E::Binary, std::move(left), pow(), t.offset, t.text);
    }
    return left;
}

ExprPtr Parser::pow() {
    ExprPtr left = unary(true);
    while (is_op("**")) {
        const Token &t = next();
        left = binary(E::Binary, std::move(left), unary(true), t.offset, t.text);
    }
    return left;
}

ExprPtr Parser::unary(bool with_filter) {
    Deeper d(*this, peek().offset);
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
        const Token &t = next();
        node = make(t.text == "-" ? E::Neg : E::Pos, t.offset);
        node->args.push_back(unary(false));
        node = deepen(std::move(node));
    } else {
        node = primary();
    }
    node = postfix(std::move(node));
    if (with_filter) node = filter_expr(std::move(node));
    return node;
}

ExprPtr Parser::constant(Value v, size_t offset) {
    auto c = make(E::Const, offset);
    c->value = std::move(v);
    return c;
}

ExprPtr Parser::primary() {
    const Token &t = peek();
    switch (t.type) {
        case T::Name: {
            next();
            if (t.text == "true" || t.text == "True") return constant(Value(true), t.offset);
            if (t.text == "false" || t.text == "False") return constant(Value(false), t.offset);
            if (t.text == "none" || t.text == "None") return constant(Value::none(), t.offset);
            auto n = make(E::Name, t.offset);
            n->name = t.text;
            return n;
        }
        case T::String: {
            std::string s = next().text;
            while (peek().type == T::String)  // adjacent literals join, as in Python
                s += next().text;
            return constant(Value(std::move(s)), t.offset);
        }
        case T::Int: {
            next();
            errno = 0;
            long long v = std::strtoll(t.text.c_str(), nullptr, 10);
            if (errno != 0) error(t.offset, "integer literal too large");
            return constant(Value(int64_t(v)), t.offset);
        }
        case T::Float:
            next();
            return constant(Value(std::strtod(t.text.c_str(), nullptr)), t.offset);
        case T::Op:
            if (t.text == "(") {
                next();
                if (accept_op(")")) return make(E::TupleLiteral, t.offset);
                ExprPtr e = tuple(true);
                expect_op(")");
                return e;
            }
            if (t.text == "[") {
                next();
                auto l = make(E::ListLiteral, t.offset);
                while (!is_op("]")) {
                    if (!l->args.empty()) expect_op(",");
                    if (is_op("]")) break;
                    l->args.push_back(expression(true));
                }
                expect_op("]");
                return deepen(std::move(l));
            }
            if (t.text == "{") {
                next();
                auto d = make(E::DictLiteral, t.offset);
                while (!is_op("}")) {
                    if (!d->args.empty()) expect_op(",");
                    if (is_op("}")) break;
                    d->args.push_back(expression(true));
                    expect_op(":");
                    d->args.push_back(expression(true));
                }
                expect_op("}");
                return deepen(std::move(d));
            }
            break;
        default:
            break;
    }
    error(t.offset, "unexpected " + describe(t));
}

ExprPtr Parser::postfix(ExprPtr node) {
    for (;;) {
        if (is_op(".")) {
            size_t offset = next().offset;
            const Token &t = peek();
            if (t.type == T::Name) {
                auto a = make(E::Attr, offset);
                a->name = next().text;
                a->args.push_back(std::move(node));
                node = deepen(std::move(a));
            } else if (t.type == T::Int) {
                auto it = make(E::Item, offset);
                it->args.push_back(std::move(node));
                it->args.push_back(constant(
                    Value(int64_t(std::strtoll(next().text.c_str(), nullptr, 10))), offset));
                node = deepen(std::move(it));
            } else {
                error(t.offset, "expected name or number after '.'");
            }
        } else if (is_op("[")) {
            size_t offset = next().offset;
            auto it = make(E::Item, offset);
            it->args.push_back(std::move(node));
            it->args.push_back(subscript());
            expect_op("]");
            node = deepen(std::move(it));
        } else if (is_op("(")) {
            node = call(std::move(node));
        } else {
            return node;
        }
    }
}

ExprPtr Parser::subscript() {
    size_t offset = peek().offset;
    ExprPtr start;
    if (!is_op(":")) {
        start = expression(true);
        if (!is_op(":")) return start;
    }
    auto s = make(E::Slice, offset);
    next();  // ':'
    s->args.push_back(std::move(start));
    s->args.push_back(is_op("]") || is_op(":") ? nullptr : expression(true));
    if (accept_op(":"))
        s->args.push_back(is_op("]") ? nullptr : expression(true));
    else
        s->args.push_back(nullptr);
    return deepen(std::move(s));
}

void Parser::arguments(Expr &e) {
    expect_op("(");
    bool first = true;
    while (!is_op(")")) {
        if (!first) expect_op(",");
        first = false;
        if (is_op(")")) break;
        if (peek().type == T::Name && is_op("=", 1)) {
            std::string key = next().text;
            next();
            e.kwargs.emplace_back(key, expression(true));
        } else {
            if (!e.kwargs.empty())
                error(peek().offset, "positional argument after keyword argument");
            e.args.push_back(expression(true));
        }
    }
    expect_op(")");
}

ExprPtr Parser::call(ExprPtr callee) {
    auto c = make(E::Call, peek().offset);
    c->args.push_back(std::move(callee));
    arguments(*c);
    return deepen(std::move(c));
}

std::string Parser::dotted_name() {
    std::string name = expect_name();
    while (is_op(".") && peek(1).type == T::Name) {
        next();
        name += "." + next().text;
    }
    return name;
}

ExprPtr Parser::filter_chain(ExprPtr node) {
    do {
        auto f = make(E::Filter, peek().offset);
        f->name = dotted_name();
        f->args.push_back(std::move(node));
        if (is_op("(")) arguments(*f);
        node = deepen(std::move(f));
    } while (accept_op("|"));
    return node;
}

ExprPtr Parser::filter_expr(ExprPtr node) {
    for (;;) {
        if (accept_op("|")) {
            auto f = make(E::Filter, peek().offset);
            f->name = dotted_name();
            f->args.push_back(std::move(node));
            if (is_op("(")) arguments(*f);
            node = deepen(std::move(f));
        } else if (is_name("is")) {
            auto t = make(E::Test, next().offset);
            t->negated = accept_name("not");
            t->name = dotted_name();
            t->args.push_back(std::move(node));
            if (is_op("(")) {
                arguments(*t);
            } else if (test_argument_follows()) {
                ExprPtr arg = primary();
                t->args.push_back(postfix(std::move(arg)));
            }
            node = deepen(std::move(t));
        } else if (is_op("(")) {
            node = call(std::move(node));
        } else {
            return node;
        }
    }
}

bool Parser::test_argument_follows() {
    const Token &t = peek();
    if (t.type == T::Name) {
        if (t.text == "is") error(t.offset, "You cannot chain multiple tests with is");
        return t.text != "else" && t.text != "or" && t.text != "and";
    }
    if (t.type == T::String || t.type == T::Int || t.type == T::Float) return true;
    return t.type == T::Op && (t.text == "[" || t.text == "{");
}

}  // namespace vkllm::chat::jinja_parse
