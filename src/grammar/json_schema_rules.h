// The pieces of GBNF text the JSON Schema converter writes: escaped literals and class members,
// the fixed rules for JSON's primitives and string formats, integer ranges as digit rules, and
// object keys that differ from a set of names.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm::grammar::schema {

// A GBNF literal "..." matching exactly `text` (UTF-8).
std::string gbnf_literal(std::string_view text);

// The body of the fixed rule `name` (space, char, string, number, value, date, uuid, ...), or
// nullopt when there is no such rule; `deps` receives the fixed rules its body refers to.
std::optional<std::string> primitive_rule(std::string_view name, std::vector<std::string> &deps);

// Every fixed rule name, reserved so that a schema's names never collide with them.
const std::vector<std::string> &primitive_names();

// An expression matching the decimal integers in [lo, hi] written as JSON writes them (no
// leading zeros, "-" for negatives, no "-0"). A missing bound means up to 16 digits that side.
// Both bounds must be within +-(10^18 - 1) and lo <= hi.
std::string integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi);

constexpr int64_t kMaxIntegerBound = 999999999999999999;  // 10^18 - 1

// The body of a rule matching a JSON string (with its quotes) whose text is none of `names`.
// Such keys never use backslash escapes, so "not this name" is exact on the raw characters: a
// trie of the names, where leaving it (or ending short of a name) is a free key.
// `fresh` gives each helper rule a name no other rule has; the helpers are appended to `out`
// as (name, body) pairs.
std::string key_other_than(const std::vector<std::string> &names,
                           const std::function<std::string()> &fresh,
                           std::vector<std::pair<std::string, std::string>> &out);

}  // namespace vkllm::grammar::schema
