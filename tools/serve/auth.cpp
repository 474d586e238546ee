#include "auth.h"

#include <fstream>

namespace serve {

namespace {

// Every byte of both is read whatever differs; only the lengths (not secret) end it early.
bool equal_constant_time(const std::string &a, const std::string &b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

std::string trimmed(const std::string &s) {
    const char *space = " \t\r\n";
    size_t b = s.find_first_not_of(space);
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(space) - b + 1);
}

}  // namespace

bool bearer_matches(const std::string &authorization, const std::string &key) {
    static const std::string scheme = "Bearer ";
    if (authorization.size() < scheme.size()) return false;
    for (size_t i = 0; i < scheme.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(authorization[i])) !=
            std::tolower(static_cast<unsigned char>(scheme[i])))
            return false;
    return equal_constant_time(trimmed(authorization.substr(scheme.size())), key);
}

bool read_key_file(const std::string &path, std::string *key, std::string *error) {
    std::ifstream in(path);
    if (!in) {
        *error = "cannot read " + path;
        return false;
    }
    std::string line;
    std::getline(in, line);
    *key = trimmed(line);
    if (key->empty()) {
        *error = path + " holds no key (its first line is empty)";
        return false;
    }
    return true;
}

}  // namespace serve
