// Whole text files for the vkllm tool (prompts, texts to tokenize), with a message that says
// why one cannot be read, named in UTF-8 on every platform (tools/os.h). A directory opens like a
// file on Linux and fails only when read (std::ifstream then throws), so it is refused before
// reading.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "os.h"

namespace vkllm_tool {

// Reads `in` to its end into `text`; false, with `error` naming `what`, on a read error.
inline bool read_all(FILE *in, const char *what, std::string &text, std::string &error) {
    text.clear();
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;)
        text.append(buf, n);
    if (!std::ferror(in)) return true;
    error = std::string("cannot read ") + what + ": " + std::strerror(errno);
    return false;
}

// False, with `error` set ("cannot open PATH: No such file or directory"), when `path` is not
// a regular file that can be read whole. "-" is stdin, whatever it is.
inline bool read_text_file(const char *path, std::string &text, std::string &error) {
    if (std::string(path) == "-") return read_all(stdin, "stdin", text, error);
    int regular = is_regular_file(path);
    if (regular < 0) {
        error = std::string("cannot open ") + path + ": " + std::strerror(errno);
        return false;
    }
    if (!regular) {
        error = std::string(path) + " is not a regular file";
        return false;
    }
    FILE *in = open_for_reading(path);
    if (!in) {
        error = std::string("cannot open ") + path + ": " + std::strerror(errno);
        return false;
    }
    bool ok = read_all(in, path, text, error);
    std::fclose(in);
    return ok;
}

}  // namespace vkllm_tool
