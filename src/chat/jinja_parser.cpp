#include "chat/jinja_parser.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "common/error.h"

namespace vkllm::chat {

namespace {

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
    Body function_body(std::initializer_list<const char *> ends) {
        int saved = loops_;
        loops_ = 0;
        Body b = body(ends);
        loops_ = saved;
        return b;
    }

    struct Deeper {
        Parser &p;
        explicit Deeper(Parser &parser, size_t offset) : p(parser) {
            if (++p.depth_ > p.max_depth_) p.error(offset, "nesting too deep");
        }
        ~Deeper() { --p.depth_; }
    };

    const Token &peek(size_t ahead = 0) const {
        size_t k = i_ + ahead;
        return lx_.tokens[k < lx_.tokens.size() ? k : lx_.tokens.size() - 1];
    }
    const Token &next() {
        const Token &t = peek();
        if (i_ < lx_.tokens.size() - 1) ++i_;
        return t;
    }

    [[noreturn]] void error(size_t offset, const std::string &what) {
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s", position_of(lx_.source, offset).c_str(),
             what.c_str());
    }

    static std::string describe(const Token &t) {
        switch (t.type) {
            case T::Text:
                return "text";
            case T::VarBegin:
                return "'{{'";
            case T::VarEnd:
                return "'}}'";
            case T::BlockBegin:
                return "'{%'";
            case T::BlockEnd:
                return "'%}'";
            case T::Name:
                return "'" + t.text + "'";
            case T::String:
                return "string";
            case T::Int:
            case T::Float:
                return "number";
            case T::Op:
                return "'" + t.text + "'";
            case T::End:
                return "end of template";
        }
        return "token";
    }

    bool is_op(const char *op, size_t ahead = 0) const {
        const Token &t = peek(ahead);
        return t.type == T::Op && t.text == op;
    }
    bool is_name(const char *name, size_t ahead = 0) const {
        const Token &t = peek(ahead);
        return t.type == T::Name && t.text == name;
    }
    bool accept_op(const char *op) {
        if (!is_op(op)) return false;
        next();
        return true;
    }
    bool accept_name(const char *name) {
        if (!is_name(name)) return false;
        next();
        return true;
    }
    void expect_op(const char *op) {
        if (!accept_op(op))
            error(peek().offset, std::string("expected '") + op + "', got " + describe(peek()));
    }
    std::string expect_name() {
        if (peek().type != T::Name)
            error(peek().offset, "expected a name, got " + describe(peek()));
        return next().text;
    }
    void expect_block_end() {
        if (peek().type != T::BlockEnd)
            error(peek().offset, "expected end of statement block, got " + describe(peek()));
        next();
    }

    static ExprPtr make(E type, size_t offset) {
        auto e = std::make_unique<Expr>();
        e->type = type;
        e->offset = offset;
        return e;
    }

    // Sets a composite expression's depth from its operands'. Chains the grammar builds in a
    // loop (a + b + c..., x.a.b..., x | f | g...) need no recursion to parse, but evaluating
    // (and freeing) them recurses as deep as they are: their depth is bounded too.
    ExprPtr deepen(ExprPtr e) {
        int d = 0;
        for (const ExprPtr &a : e->args)
            if (a) d = std::max(d, a->depth);
        for (const auto &kv : e->kwargs)
            d = std::max(d, kv.second->depth);
        e->depth = d + 1;
        if (e->depth > kMaxExpressionDepth) error(e->offset, "nesting too deep");
        return e;
    }

    // The name a block's rendered text is bound to, for {% filter %} and {% set x | f %}.
    static ExprPtr block_body_name(size_t offset) {
        auto n = make(E::Name, offset);
        n->name = kBlockBodyName;
        return n;
    }

    // ---- statements

    // Nodes until one of the given tags (or the end when none); the tag's name is consumed and
    // left in end_tag_, the rest of that tag is the caller's to read.
    Body body(std::initializer_list<const char *> ends) {
        Deeper d(*this, peek().offset);
        Body out;
        for (;;) {
            const Token &t = peek();
            if (t.type == T::End) {
                if (ends.size() == 0) return out;
                error(t.offset,
                      std::string("unexpected end of template, expected '") + *ends.begin() + "'");
            }
            if (t.type == T::Text) {
                auto n = std::make_unique<Node>();
                n->type = Node::Type::Text;
                n->text = next().text;
                out.push_back(std::move(n));
            } else if (t.type == T::VarBegin) {
                next();
                auto n = std::make_unique<Node>();
                n->type = Node::Type::Output;
                n->offset = t.offset;
                n->expr = tuple(true);
                if (peek().type != T::VarEnd)
                    error(peek().offset,
                          "expected end of print statement, got " + describe(peek()));
                next();
                out.push_back(std::move(n));
            } else if (t.type == T::BlockBegin) {
                next();
                const Token &tag = peek();
                if (tag.type != T::Name) error(tag.offset, "tag name expected");
                for (const char *e : ends)
                    if (tag.text == e) {
                        end_tag_ = next().text;
                        return out;
                    }
                out.push_back(statement());
            } else {
                error(t.offset, "unexpected " + describe(t));
            }
        }
    }

    NodePtr statement() {
        const Token &tag = next();
        auto n = std::make_unique<Node>();
        n->offset = tag.offset;
        const std::string &name = tag.text;
        if (name == "if") return if_statement(std::move(n));
        if (name == "for") return for_statement(std::move(n));
        if (name == "set") return set_statement(std::move(n));
        if (name == "macro") return macro_statement(std::move(n));
        if (name == "call") return call_statement(std::move(n));
        if (name == "filter") {
            n->type = Node::Type::FilterBlock;
            n->filter = filter_chain(block_body_name(tag.offset));
            expect_block_end();
            n->body = body({"endfilter"});
            expect_block_end();
            return n;
        }
        if (name == "with") return with_statement(std::move(n));
        if (name == "generation") {
            n->type = Node::Type::Generation;
            expect_block_end();
            n->body = function_body({"endgeneration"});
            expect_block_end();
            return n;
        }
        if (name == "break" || name == "continue") {
            if (loops_ == 0) error(tag.offset, "'" + name + "' outside loop");
            n->type = name == "break" ? Node::Type::Break : Node::Type::Continue;
            expect_block_end();
            return n;
        }
        if (name == "include" || name == "import" || name == "from" || name == "extends" ||
            name == "block")
            error(tag.offset,
                  "'" + name + "' is not supported: a chat template reads no other template");
        error(tag.offset, "encountered unknown tag '" + name + "'");
    }

    // if / elif... / else is one node: a long elif chain nests nothing.
    NodePtr if_statement(NodePtr n) {
        n->type = Node::Type::If;
        do {
            n->values.push_back(expression(true));
            expect_block_end();
            n->branches.push_back(body({"elif", "else", "endif"}));
        } while (end_tag_ == "elif");
        if (end_tag_ == "else") {
            expect_block_end();
            n->else_body = body({"endif"});
        }
        expect_block_end();
        return n;
    }

    void targets(Node &n) {
        do {
            n.targets.push_back(expect_name());
        } while (accept_op(","));
    }

    NodePtr for_statement(NodePtr n) {
        n->type = Node::Type::For;
        bool paren = accept_op("(");
        targets(*n);
        if (paren) expect_op(")");
        if (!accept_name("in")) error(peek().offset, "expected 'in', got " + describe(peek()));
        n->expr = tuple(false);
        if (accept_name("if")) n->filter = expression(true);
        if (is_name("recursive")) error(peek().offset, "recursive loops are not supported");
        expect_block_end();
        ++loops_;
        n->body = body({"else", "endfor"});
        --loops_;
        if (end_tag_ == "else") {
            expect_block_end();
            n->else_body = body({"endfor"});
        }
        expect_block_end();
        return n;
    }

    NodePtr set_statement(NodePtr n) {
        n->type = Node::Type::Set;
        std::string first = expect_name();
        if (accept_op(".")) {
            n->attr = expect_name();
            n->targets.push_back(first);
        } else {
            n->targets.push_back(first);
            while (accept_op(","))
                n->targets.push_back(expect_name());
        }
        if (accept_op("=")) {
            n->expr = tuple(true);
            expect_block_end();
            return n;
        }
        if (!n->attr.empty() || n->targets.size() != 1)
            error(peek().offset, "expected '=', got " + describe(peek()));
        n->type = Node::Type::SetBlock;
        if (accept_op("|")) n->filter = filter_chain(block_body_name(peek().offset));
        expect_block_end();
        n->body = body({"endset"});
        expect_block_end();
        return n;
    }

    void params(Node &n) {
        expect_op("(");
        while (!is_op(")")) {
            if (!n.params.empty()) expect_op(",");
            if (is_op(")")) break;
            MacroParam p;
            p.name = expect_name();
            if (accept_op("=")) p.default_value = expression(true);
            n.params.push_back(std::move(p));
        }
        expect_op(")");
    }

    NodePtr macro_statement(NodePtr n) {
        n->type = Node::Type::Macro;
        n->text = expect_name();
        params(*n);
        expect_block_end();
        n->body = function_body({"endmacro"});
        if (peek().type == T::Name) next();  // {% endmacro name %}
        expect_block_end();
        return n;
    }

    NodePtr call_statement(NodePtr n) {
        n->type = Node::Type::CallBlock;
        if (is_op("(")) params(*n);
        n->expr = expression(true);
        if (n->expr->type != E::Call) error(n->offset, "expected call");
        expect_block_end();
        n->body = function_body({"endcall"});
        expect_block_end();
        return n;
    }

    NodePtr with_statement(NodePtr n) {
        n->type = Node::Type::With;
        while (peek().type != T::BlockEnd) {
            if (!n->targets.empty()) expect_op(",");
            n->targets.push_back(expect_name());
            expect_op("=");
            n->values.push_back(expression(true));
        }
        expect_block_end();
        n->body = body({"endwith"});
        expect_block_end();
        return n;
    }

    // ---- expressions (jinja2's precedence, lowest first)

    // A comma-separated list without brackets is a tuple ({% set a, b = 1, 2 %}).
    ExprPtr tuple(bool with_condexpr) {
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

    ExprPtr expression(bool with_condexpr) {
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

    ExprPtr binary(E type, ExprPtr left, ExprPtr right, size_t offset, std::string op = {}) {
        auto b = make(type, offset);
        b->name = std::move(op);
        b->args.push_back(std::move(left));
        b->args.push_back(std::move(right));
        return deepen(std::move(b));
    }

    ExprPtr or_expr() {
        ExprPtr left = and_expr();
        while (is_name("or")) {
            size_t offset = next().offset;
            left = binary(E::Or, std::move(left), and_expr(), offset);
        }
        return left;
    }

    ExprPtr and_expr() {
        ExprPtr left = not_expr();
        while (is_name("and")) {
            size_t offset = next().offset;
            left = binary(E::And, std::move(left), not_expr(), offset);
        }
        return left;
    }

    ExprPtr not_expr() {
        if (is_name("not")) {
            Deeper d(*this, peek().offset);
            auto n = make(E::Not, next().offset);
            n->args.push_back(not_expr());
            return deepen(std::move(n));
        }
        return compare();
    }

    ExprPtr compare() {
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

    ExprPtr math1() {
        ExprPtr left = concat();
        while (is_op("+") || is_op("-")) {
            const Token &t = next();
            left = binary(E::Binary, std::move(left), concat(), t.offset, t.text);
        }
        return left;
    }

    ExprPtr concat() {
        size_t offset = peek().offset;
        ExprPtr first = math2();
        if (!is_op("~")) return first;
        auto c = make(E::Concat, offset);
        c->args.push_back(std::move(first));
        while (accept_op("~"))
            c->args.push_back(math2());
        return deepen(std::move(c));
    }

    ExprPtr math2() {
        ExprPtr left = pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const Token &t = next();
            left = binary(E::Binary, std::move(left), pow(), t.offset, t.text);
        }
        return left;
    }

    ExprPtr pow() {
        ExprPtr left = unary(true);
        while (is_op("**")) {
            const Token &t = next();
            left = binary(E::Binary, std::move(left), unary(true), t.offset, t.text);
        }
        return left;
    }

    ExprPtr unary(bool with_filter) {
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

    ExprPtr constant(Value v, size_t offset) {
        auto c = make(E::Const, offset);
        c->value = std::move(v);
        return c;
    }

    ExprPtr primary() {
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

    ExprPtr postfix(ExprPtr node) {
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

    ExprPtr subscript() {
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

    // (args) after a callee, a filter or a test: positional, then name=value.
    void arguments(Expr &e) {
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

    ExprPtr call(ExprPtr callee) {
        auto c = make(E::Call, peek().offset);
        c->args.push_back(std::move(callee));
        arguments(*c);
        return deepen(std::move(c));
    }

    std::string dotted_name() {
        std::string name = expect_name();
        while (is_op(".") && peek(1).type == T::Name) {
            next();
            name += "." + next().text;
        }
        return name;
    }

    ExprPtr filter_chain(ExprPtr node) {
        do {
            auto f = make(E::Filter, peek().offset);
            f->name = dotted_name();
            f->args.push_back(std::move(node));
            if (is_op("(")) arguments(*f);
            node = deepen(std::move(f));
        } while (accept_op("|"));
        return node;
    }

    ExprPtr filter_expr(ExprPtr node) {
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

    // `x is divisibleby 3`, `x is sameas false`: a test takes one argument without brackets,
    // any name but else, or and and included (jinja2 reads `x is odd if c` as `odd(if)`).
    bool test_argument_follows() {
        const Token &t = peek();
        if (t.type == T::Name) {
            if (t.text == "is") error(t.offset, "You cannot chain multiple tests with is");
            return t.text != "else" && t.text != "or" && t.text != "and";
        }
        if (t.type == T::String || t.type == T::Int || t.type == T::Float) return true;
        return t.type == T::Op && (t.text == "[" || t.text == "{");
    }
};

}  // namespace

ParsedTemplate parse_template(std::string_view source, int max_depth) {
    return Parser(lex_template(source), max_depth).run();
}

}  // namespace vkllm::chat
