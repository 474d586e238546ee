// Option values of the vkllm tool, read strictly: a value that is not entirely a number in
// range is refused with a message naming the option, never read as 0 or as a prefix (strtoul
// alone turns "abc" into 0 and "-1" into 4294967295).
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "vkllm.h"

namespace vkllm_tool {

// A bad command line: the message names the option; the command prints it and exits with 2.
class ArgError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

inline std::string quoted(const char *text) {
    return std::string("\"") + text + "\"";
}

// A whole number in [min, max], written in decimal with nothing around it.
inline int64_t int_arg(const std::string &flag, const char *text, int64_t min, int64_t max) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(text, &end, 10);
    bool ok = *text && *end == '\0' && errno == 0 && v >= min && v <= max && text[0] != ' ';
    if (!ok)
        throw ArgError(flag + " expects a whole number from " + std::to_string(min) + " to " +
                       std::to_string(max) + ", not " + quoted(text));
    return v;
}

// As int_arg, for values up to UINT64_MAX (seeds).
inline uint64_t uint_arg(const std::string &flag, const char *text, uint64_t min, uint64_t max) {
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text, &end, 10);
    bool ok =
        text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0 && v >= min && v <= max;
    if (!ok)
        throw ArgError(flag + " expects a whole number from " + std::to_string(min) + " to " +
                       std::to_string(max) + ", not " + quoted(text));
    return v;
}

// A finite decimal number ("0.8", "1e-3"); "nan", "inf" and "0.8x" are refused.
inline float float_arg(const std::string &flag, const char *text) {
    char *end = nullptr;
    errno = 0;
    float v = std::strtof(text, &end);
    if (!*text || *end != '\0' || errno != 0 || !std::isfinite(v) || text[0] == ' ')
        throw ArgError(flag + " expects a number, not " + quoted(text));
    return v;
}

// A float_arg in [min, max], or (min, max] when min_open; `range` says it in the message
// ("from 0 to 1").
inline float float_in(const std::string &flag, const char *text, float min, bool min_open,
                      float max, const char *range) {
    float v = float_arg(flag, text);
    if (v < min || (min_open && v == min) || v > max)
        throw ArgError(flag + " expects a number " + range + ", not " + quoted(text));
    return v;
}

// Token ids separated by commas (spaces allowed after a comma): "1,2,3".
inline std::vector<int32_t> ids_arg(const std::string &flag, const char *text) {
    std::vector<int32_t> ids;
    std::string list = text;
    for (size_t start = 0;;) {
        size_t comma = list.find(',', start);
        std::string id = list.substr(start, comma == std::string::npos ? comma : comma - start);
        id.erase(0, id.find_first_not_of(' '));
        char *end = nullptr;
        errno = 0;
        long long v = std::strtoll(id.c_str(), &end, 10);
        if (id.empty() || *end != '\0' || errno != 0 || v < 0 || v > INT32_MAX)
            throw ArgError(flag + " expects token ids (whole numbers from 0) separated by " +
                           "commas, not " + quoted(text));
        ids.push_back(int32_t(v));
        if (comma == std::string::npos) return ids;
        start = comma + 1;
    }
}

// --device N|NAME: an index when the value is a whole number, else a name substring.
inline void device_arg(const char *text, vkllm_runtime_params &params) {
    char *end = nullptr;
    errno = 0;
    long idx = std::strtol(text, &end, 10);
    if (text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0 && idx <= INT32_MAX)
        params.device_index = int32_t(idx);
    else
        params.device_name = text;
}

// True when -h or --help is among the arguments (after the command, argv[0]).
inline bool wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "-h" || std::string(argv[i]) == "--help") return true;
    return false;
}

}  // namespace vkllm_tool
