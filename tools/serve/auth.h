// The API key: a Bearer token compared in constant time, so the time an answer takes says
// nothing about how much of a guessed key was right.
#pragma once

#include <string>

namespace serve {

// True when `authorization` (the header's value) is "Bearer KEY" for exactly `key`.
bool bearer_matches(const std::string &authorization, const std::string &key);

// The key in a file: its first line, surrounding whitespace removed. False with *error set when
// the file cannot be read or holds no key.
bool read_key_file(const std::string &path, std::string *key, std::string *error);

}  // namespace serve
