#include "line_reader.h"

#include <errno.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#if defined(VKLLM_HAVE_LIBEDIT)
#include <editline/readline.h>
#elif defined(VKLLM_HAVE_READLINE)
#include <readline/history.h>
#include <readline/readline.h>
#endif

namespace vkllm_tool {

volatile std::sig_atomic_t g_interrupted = 0;

namespace {

#if defined(VKLLM_HAVE_LIBEDIT) || defined(VKLLM_HAVE_READLINE)
// Both libraries would otherwise take SIGINT themselves and go on reading after it; reading
// the bytes here lets a ^C end the read: read() fails with EINTR (the handler has no
// SA_RESTART), and end of input is reported for as long as the flag is set.
int getc_unless_interrupted(FILE *) {
    for (;;) {
        if (g_interrupted) return EOF;
        unsigned char c = 0;
        ssize_t n = ::read(STDIN_FILENO, &c, 1);
        if (n == 1) return c;
        if (n == 0 || errno != EINTR) return EOF;
    }
}
#endif

}  // namespace

LineReader::LineReader(bool edit, std::string input_color)
    : edit_(edit), input_color_(std::move(input_color)) {
#if defined(VKLLM_HAVE_LIBEDIT) || defined(VKLLM_HAVE_READLINE)
    if (edit_) {
        rl_catch_signals = 0;
        rl_getc_function = getc_unless_interrupted;
        rl_instream = stdin;
        rl_outstream = stderr;  // stdout carries the answers only
    }
#else
    edit_ = false;
#endif
}

LineReader::~LineReader() {
    if (!input_color_.empty()) std::fputs("\033[0m", stderr);
}

bool LineReader::read(const char *prompt, std::string &line) {
    line.clear();
#if defined(VKLLM_HAVE_LIBEDIT) || defined(VKLLM_HAVE_READLINE)
    if (edit_) {
        // The color is set before the prompt: libedit drops escapes inside one (readline's
        // \001..\002 markers), and neither library resets it.
        std::fputs(input_color_.c_str(), stderr);
        std::fflush(stderr);
        char *text = readline(prompt);
        if (!input_color_.empty()) std::fputs("\033[0m", stderr);
        bool ok = text != nullptr && !g_interrupted;
        if (ok) line = text;
        std::free(text);
        return ok;
    }
#endif
    std::fputs(input_color_.c_str(), stderr);
    std::fputs(prompt, stderr);
    std::fflush(stderr);
    // A ^C between the prompt and the read also quits (the terminal dropped the typed line).
    bool ok = !g_interrupted && std::getline(std::cin, line) && !g_interrupted;
    if (!input_color_.empty()) std::fputs("\033[0m", stderr);
    return ok;
}

void LineReader::remember(const std::string &turn) {
#if defined(VKLLM_HAVE_LIBEDIT) || defined(VKLLM_HAVE_READLINE)
    if (edit_ && !turn.empty()) add_history(turn.c_str());
#else
    (void)turn;
#endif
}

const char *LineReader::backend() {
#if defined(VKLLM_HAVE_LIBEDIT)
    return "libedit";
#elif defined(VKLLM_HAVE_READLINE)
    return "readline";
#else
    return "none";
#endif
}

}  // namespace vkllm_tool
