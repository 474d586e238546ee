// Python's operators on template values: arithmetic (int and float as Python, with int64
// overflow an error rather than a bignum), comparisons, `in`, iteration, indexing and slicing
// (strings by code point). Failures throw vkllm::Error with Python's message
// ("TypeError: ...", "UndefinedError: ...").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "chat/jinja_value.h"

namespace vkllm::chat {

[[noreturn]] void type_error(const std::string &message);
// The error for using an undefined value where a value is needed.
[[noreturn]] void undefined_error(const Value &v);

// op: + - * / // % **. Strings longer than max_bytes and lists longer than 100000 items are
// refused; str % args formats as Python does for %s, %r, %d, %i, %f and %%.
Value binary_op(const std::string &op, const Value &a, const Value &b, size_t max_bytes);
Value negate(const Value &v);
// op: == != < <= > >=. Adds the values visited to *work (see equal()).
bool compare(const std::string &op, const Value &a, const Value &b, uint64_t *work = nullptr);
// Python's `item in container`; adds the values visited to *work.
bool contains(const Value &container, const Value &item, uint64_t *work = nullptr);
// The items a for loop visits: a list's items, a dict's keys, a string's characters;
// undefined is empty; anything else is "TypeError: 'X' object is not iterable".
List iterate(const Value &v);
// len(v), or nullopt when v has no length.
std::optional<int64_t> length_of(const Value &v);
// v[key] for lists, tuples and strings (negative indices count from the end); an index out of
// range is undefined, as jinja2 makes it.
Value index(const Value &v, const Value &key);
// v[start:stop:step] of a list, tuple or string (none: omitted). jinja2 compiles a slice to
// Python's own subscript, so slicing anything else is a TypeError (not undefined, as a failed
// index is).
Value slice(const Value &v, const Value &start, const Value &stop, const Value &step);

}  // namespace vkllm::chat
