// Finds JSON values inside text without building them: where a value ends, an object's members
// as (key, raw value text), and a string literal's decoded text. The reply parser needs exactly
// this: tool-call arguments stay the model's own JSON text, byte for byte, and a value still
// streaming in is told apart from one that can never become valid.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vkllm::chat {

enum class JsonScan {
    Complete,    // a whole value ends at *end
    Incomplete,  // the text so far can still become a value
    Invalid,     // it never can
};

// Scans the value starting at s[begin] (after any whitespace). Nesting deeper than 512 levels
// is Invalid.
JsonScan json_scan(std::string_view s, size_t begin, size_t *end);

// The members of the object that is all of `s` (whitespace around it allowed), in order; false
// when `s` is not one whole object.
bool json_members(std::string_view s, std::vector<std::pair<std::string, std::string_view>> *out);

// The elements of the array that is all of `s`, as raw value texts; false when it is not one
// whole array.
bool json_elements(std::string_view s, std::vector<std::string_view> *out);

// The text of a JSON string literal (quotes included in `s`); false when it is not one.
bool json_string(std::string_view s, std::string *out);

// `s` as a JSON string literal (quotes, escapes; non-ASCII kept as UTF-8).
std::string json_quote(std::string_view s);

}  // namespace vkllm::chat
