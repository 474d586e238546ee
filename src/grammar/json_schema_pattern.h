// JSON Schema `pattern` (an ECMAScript regular expression) as GBNF over the JSON text of the
// string's contents. docs/JSON_SCHEMA.md, "pattern", lists the syntax and its exact meaning.
//
// The grammar is sound: every JSON string it accepts decodes to text the pattern matches, under
// ECMAScript and under Python's `re` (what Python's jsonschema uses) alike. Where the two differ
// (\d, \w, \s and their negations, `.`), the grammar takes what both agree on.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vkllm::grammar::schema {

struct PatternLimits {
    size_t max_bytes = 4096;  // the pattern's length
    int max_depth = 32;       // nested groups
    size_t max_count = 4096;  // a {m,n} bound
};

// The GBNF expression for the characters between the string's quotes (the JSON text of the
// contents, escapes included). A pattern is searched, as JSON Schema says: without a leading ^
// any text may come before the match (`char*`), without a trailing $ any text after it.
// `any_char` is the rule name of one JSON string character (with its escape). Throws
// vkllm::Error: VKLLM_ERR_UNSUPPORTED naming the construct it cannot express (lookaround, a
// backreference, \b, an anchor inside the pattern, \p{...}), VKLLM_ERR_INVALID_ARGUMENT for a
// malformed pattern or one past the limits; each message names the JSON pointer `where`.
std::string pattern_to_gbnf(std::string_view pattern, const std::string &where,
                            const std::string &any_char, const PatternLimits &limits = {});

}  // namespace vkllm::grammar::schema
