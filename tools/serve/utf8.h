// UTF-8 checks for text from clients (refused when invalid) and from the model (a token may
// be part of a character; made valid before it becomes a JSON object key).
#pragma once

#include <string>

namespace serve {

// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF), or 0.
size_t utf8_length(const std::string &s, size_t i);

// The byte offset of the first invalid UTF-8 sequence, or npos.
size_t invalid_utf8_at(const std::string &s);

// `s` with each invalid byte replaced by U+FFFD.
std::string to_valid_utf8(const std::string &s);

}  // namespace serve
