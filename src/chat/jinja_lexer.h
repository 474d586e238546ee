// Splits a template into text and the tokens of its tags, the way jinja2's lexer does in
// transformers' environment: newlines normalised to "\n" and one trailing newline dropped
// (keep_trailing_newline=False); trim_blocks (the newline after a block or comment tag goes);
// lstrip_blocks (blanks before a block or comment tag alone on its line go); "-" and "+" at
// the tag's edges; comments dropped; {% raw %} kept verbatim.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm::chat {

struct Token {
    enum class Type {
        Text,        // literal template text
        VarBegin,    // {{
        VarEnd,      // }}
        BlockBegin,  // {%
        BlockEnd,    // %}
        Name,
        String,  // text holds the unescaped value
        Int,
        Float,
        Op,  // text holds the operator: + - * / // % ** ~ ( ) [ ] { } == != < <= > >= = . : | ,
        End,
    };
    Type type;
    std::string text;
    size_t offset;  // into the normalised source, for "line L, column C"
};

struct LexedTemplate {
    std::string source;  // normalised: what offsets refer to
    std::vector<Token> tokens;
};

// Throws vkllm::Error "line L, column C: ..." on an unterminated tag, comment or string, or a
// character that starts no token.
LexedTemplate lex_template(std::string_view source);

// "line L, column C" (both from 1) of an offset into text.
std::string position_of(std::string_view text, size_t offset);

}  // namespace vkllm::chat
