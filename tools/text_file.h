// Whole text files for the vkllm tool (prompts, texts to tokenize), with a message that says
// why one cannot be read. A directory opens like a file on Linux and fails only when read
// (std::ifstream then throws), so it is refused before reading.
#pragma once

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

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
    struct stat st;
    if (::stat(path, &st) != 0) {
        error = std::string("cannot open ") + path + ": " + std::strerror(errno);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        error = std::string(path) + " is not a regular file";
        return false;
    }
    FILE *in = std::fopen(path, "rb");
    if (!in) {
        error = std::string("cannot open ") + path + ": " + std::strerror(errno);
        return false;
    }
    bool ok = read_all(in, path, text, error);
    std::fclose(in);
    return ok;
}

}  // namespace vkllm_tool
