// Whether the branches of a JSON Schema `oneOf` are provably disjoint: then "exactly one branch
// matches" is "some branch matches", and the converter may write `oneOf` as a plain choice.
// The proof is conservative: a false answer means "not proven", and the converter refuses.
#pragma once

#include <functional>
#include <vector>

#include "chat/json_value.h"

namespace vkllm::grammar::schema {

// `resolve` follows a `$ref` string to its target schema (nullptr when it cannot).
using RefResolver = std::function<const chat::Value *(const chat::Value &ref)>;

// True when no JSON value that the converter's grammar of branches[i] accepts is valid under
// branches[j], for every i != j. Proven by JSON type (the grammar's types of one branch against
// the types the other accepts at all), by const/enum values, or by a required property whose
// const/enum values differ (a discriminator, as Pydantic and OpenAI tool schemas write them).
bool branches_disjoint(const std::vector<const chat::Value *> &branches,
                       const RefResolver &resolve);

// JSON Schema equality of two values: numbers by value (1 == 1.0), objects by keys.
bool json_equal(const chat::Value &a, const chat::Value &b);

}  // namespace vkllm::grammar::schema
