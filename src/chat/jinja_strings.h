// Python's str methods that chat templates call (strip, split, replace, startswith, ...),
// with Python's semantics: whitespace is Unicode whitespace, lengths and positions count code
// points.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat/jinja_value.h"

namespace vkllm::chat {

enum class StripSide { Both, Left, Right };
// str.strip(chars): chars absent strips Unicode whitespace.
std::string py_strip(const std::string &s, const std::optional<std::string> &chars, StripSide side);
// str.split(sep, maxsplit) / str.rsplit: sep absent splits on runs of whitespace.
std::vector<std::string> py_split(const std::string &s, const std::optional<std::string> &sep,
                                  int64_t maxsplit, bool from_right);
std::vector<std::string> py_splitlines(const std::string &s, bool keepends);
std::string py_replace(const std::string &s, const std::string &old, const std::string &with,
                       int64_t count, size_t max_bytes);
std::string py_lower(const std::string &s);
std::string py_upper(const std::string &s);
std::string py_title(const std::string &s);
// str.islower() (lower true) or str.isupper(): cased characters, all of that case.
bool py_is_case(const std::string &s, bool lower);
// jinja2's `title` filter, which is not str.title(): words begin after whitespace, '-', and
// opening brackets only ("they're" -> "They're").
std::string jinja_title(const std::string &s);
std::string py_capitalize(const std::string &s);

// Python's `format % args` for %s, %r, %d, %i, %f (with an optional precision) and %%.
std::string py_percent(const std::string &format, const Value &args, size_t max_bytes);

// The bound method `s.name`, or nullopt when str has no such (allowed) method.
std::optional<Value> string_method(const std::string &s, const std::string &name);

}  // namespace vkllm::chat
