// `allOf` (and `$ref` beside other keywords, which is the same conjunction) as one schema: the
// converter writes one rule per schema, so a conjunction is merged keyword by keyword where the
// merge is exact, and refused by keyword name where it is not.
#pragma once

#include <string>
#include <vector>

#include "chat/json_value.h"
#include "grammar/json_schema_disjoint.h"

namespace vkllm::grammar::schema {

// One schema valid for exactly the values valid under every member (`false` when the members
// contradict each other on `type`, `const` or `enum`). Each member's own `$ref` and `allOf` are
// followed (nested ones are left for the converter); one member may carry `anyOf` or `oneOf`,
// which is distributed: {"anyOf": [{"allOf": [rest, branch]}, ...]}. Throws vkllm::Error
// (VKLLM_ERR_UNSUPPORTED, naming the keyword and `ptr`) for what has no exact merge: two
// different `format`s or `pattern`s, two combinators, an unknown keyword with different values;
// VKLLM_ERR_INVALID_ARGUMENT for a member that is not a schema or hops deeper than `max_depth`.
chat::Value merge_all_of(const std::vector<chat::Value> &members, const std::string &ptr,
                         const RefResolver &resolve, int max_depth);

}  // namespace vkllm::grammar::schema
