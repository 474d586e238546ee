// JSON Schema -> GBNF: the grammar whose sentences are JSON texts the schema accepts (a subset of
// them: keys in schema order, bounded whitespace and digits, no extra keys unless the schema
// says so). docs/JSON_SCHEMA.md lists the keywords, the rule shapes and the limits.
//
// A keyword the converter does not implement is refused, never ignored: a constraint silently
// dropped would let the model write JSON the application's validator then rejects.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vkllm::grammar {

// Bounds on what a schema may ask for (a hostile schema must not make a huge grammar).
struct JsonSchemaLimits {
    int max_depth = 64;          // nested schemas, $ref hops included
    size_t max_rules = 10000;    // rules the converter writes
    size_t max_enum = 10000;     // values of one enum
    size_t max_count = 4096;     // minLength, maxLength, minItems, maxItems, prefixItems
    size_t max_bytes = 1 << 22;  // the GBNF text
    // Subschemas visited: allOf merges inline their $ref targets, so a hostile schema could
    // otherwise make the same definitions be visited exponentially often.
    size_t max_visits = 200000;
};

// `schema_json` empty, `{}` or `true`: any JSON value. Throws vkllm::Error:
// VKLLM_ERR_UNSUPPORTED naming a keyword it does not implement and its JSON pointer,
// VKLLM_ERR_INVALID_ARGUMENT for malformed JSON or a keyword of the wrong shape (with the
// pointer), VKLLM_ERR_INTERNAL when its own output does not parse as GBNF (a converter bug).
std::string json_schema_to_gbnf(std::string_view schema_json, const JsonSchemaLimits &limits = {});

}  // namespace vkllm::grammar
