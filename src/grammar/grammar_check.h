// Static checks of a compiled grammar that the parser runs before handing it out.
#pragma once

#include <cstdint>
#include <vector>

#include "grammar/grammar.h"

namespace vkllm::grammar {

// Which rules can match the empty string.
std::vector<bool> nullable_rules(const Grammar &g);

// A rule that can reach itself without consuming a character (A ::= B x, B ::= A y | ...,
// or through rules that may be empty), or -1 when there is none. Left recursion would make
// the stack engine expand forever; GBNF writers use repetition (x ("+" x)*) instead.
int64_t find_left_recursion(const Grammar &g);

}  // namespace vkllm::grammar
