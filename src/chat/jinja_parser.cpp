#include "chat/jinja_parser.h"

#include <algorithm>
#include <initializer_list>

#include "chat/jinja_parser_impl.h"
#include "common/error.h"

namespace vkllm::chat {

namespace jinja_parse {

Body Parser::function_body(std::initializer_list<const char *> ends) {
    int saved = loops_;
    loops_ = 0;
    Body b = body(ends);
    loops_ = saved;
    return b;
}

const Token &Parser::peek(size_t ahead) const {
    size_t k = i_ + ahead;
    return lx_.tokens[k < lx_.tokens.size() ? k : lx_.tokens.size() - 1];
}

const Token &Parser::next() {
    const Token &t = peek();
    if (i_ < lx_.tokens.size() - 1) ++i_;
    return t;
}

[[noreturn]] void Parser::error(size_t offset, const std::string &what) {
    fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s", position_of(lx_.source, offset).c_str(),
         what.c_str());
}

std::string Parser::describe(const Token &t) {
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

bool Parser::is_op(const char *op, size_t ahead) const {
    const Token &t = peek(ahead);
    return t.type == T::Op && t.text == op;
}

bool Parser::is_name(const char *name, size_t ahead) const {
    const Token &t = peek(ahead);
    return t.type == T::Name && t.text == name;
}

bool Parser::accept_op(const char *op) {
    if (!is_op(op)) return false;
    next();
    return true;
}

bool Parser::accept_name(const char *name) {
    if (!is_name(name)) return false;
    next();
    return true;
}

void Parser::expect_op(const char *op) {
    if (!accept_op(op))
        error(peek().offset, std::string("expected '") + op + "', got " + describe(peek()));
}

std::string Parser::expect_name() {
    if (peek().type != T::Name) error(peek().offset, "expected a name, got " + describe(peek()));
    return next().text;
}

void Parser::expect_block_end() {
    if (peek().type != T::BlockEnd)
        error(peek().offset, "expected end of statement block, got " + describe(peek()));
    next();
}

ExprPtr Parser::make(E type, size_t offset) {
    auto e = std::make_unique<Expr>();
    e->type = type;
    e->offset = offset;
    return e;
}

ExprPtr Parser::deepen(ExprPtr e) {
    int d = 0;
    for (const ExprPtr &a : e->args)
        if (a) d = std::max(d, a->depth);
    for (const auto &kv : e->kwargs)
        d = std::max(d, kv.second->depth);
    e->depth = d + 1;
    if (e->depth > kMaxExpressionDepth) error(e->offset, "nesting too deep");
    return e;
}

ExprPtr Parser::block_body_name(size_t offset) {
    auto n = make(E::Name, offset);
    n->name = kBlockBodyName;
    return n;
}

Body Parser::body(std::initializer_list<const char *> ends) {
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
                error(peek().offset, "expected end of print statement, got " + describe(peek()));
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

NodePtr Parser::statement() {
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

NodePtr Parser::if_statement(NodePtr n) {
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

void Parser::targets(Node &n) {
    do {
        n.targets.push_back(expect_name());
    } while (accept_op(","));
}

NodePtr Parser::for_statement(NodePtr n) {
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

NodePtr Parser::set_statement(NodePtr n) {
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

void Parser::params(Node &n) {
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

NodePtr Parser::macro_statement(NodePtr n) {
    n->type = Node::Type::Macro;
    n->text = expect_name();
    params(*n);
    expect_block_end();
    n->body = function_body({"endmacro"});
    if (peek().type == T::Name) next();  // {% endmacro name %}
    expect_block_end();
    return n;
}

NodePtr Parser::call_statement(NodePtr n) {
    n->type = Node::Type::CallBlock;
    if (is_op("(")) params(*n);
    n->expr = expression(true);
    if (n->expr->type != E::Call) error(n->offset, "expected call");
    expect_block_end();
    n->body = function_body({"endcall"});
    expect_block_end();
    return n;
}

NodePtr Parser::with_statement(NodePtr n) {
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

}  // namespace jinja_parse

ParsedTemplate parse_template(std::string_view source, int max_depth) {
    return jinja_parse::Parser(lex_template(source), max_depth).run();
}

}  // namespace vkllm::chat
