// Builds the statement tree of a lexed template with jinja2's grammar and operator precedence.
#pragma once

#include <string_view>

#include "chat/jinja_ast.h"
#include "chat/jinja_lexer.h"

namespace vkllm::chat {

struct ParsedTemplate {
    std::string source;  // normalised, for error positions
    Body body;
};

// Throws vkllm::Error "line L, column C: ..." on a syntax error, an unknown or unsupported tag
// (include, import, extends, block: the sandbox reads no other template), or nesting deeper
// than max_depth (brackets, operators and blocks together).
ParsedTemplate parse_template(std::string_view source, int max_depth = 100);

}  // namespace vkllm::chat
