// Values as Python prints them (str() and repr()), and the UTF-8 <-> code point conversions
// that Python's per-character str semantics (len, indexing, slicing, strip) need.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_value.h"

namespace vkllm::chat {

// Python's repr(float): the shortest text that reads back to the same double.
std::string python_float(double f);
// str(v) and repr(v). Results longer than max_bytes throw (nested shared lists can describe
// exponentially long text in a few bytes of template).
std::string to_str(const Value &v, size_t max_bytes);
std::string to_repr(const Value &v, size_t max_bytes);

// markupsafe's escape: & < > " ' as HTML entities.
std::string html_escape(const std::string &s);

// A byte that is not valid UTF-8 decodes to the lone surrogate 0xDC00 + byte (Python's
// surrogateescape) and encodes back to that byte, so that any bytes round-trip.
std::u32string utf8_decode(std::string_view s);
std::string utf8_encode(std::u32string_view s);
void utf8_append(std::string &out, char32_t c);
size_t utf8_length(std::string_view s);
// Python's str.isspace() for one code point.
bool is_python_space(char32_t c);

}  // namespace vkllm::chat
