// Reads chat's turns: with line editing and history at a terminal (libedit or GNU readline,
// whichever the build found: VKLLM_LINE_EDITING), else plain lines from stdin.
#pragma once

#include <csignal>
#include <string>

namespace vkllm_tool {

// Set by the caller's SIGINT handler. A read in progress then ends as if at the end of input.
// The handler must be installed without SA_RESTART, so that ^C interrupts a blocked read.
extern volatile std::sig_atomic_t g_interrupted;

class LineReader {
  public:
    // `edit`: stdin is a terminal and line editing is wanted; `input_color`: an SGR escape
    // for the prompt and the typed text (empty: none).
    LineReader(bool edit, std::string input_color);
    ~LineReader();
    LineReader(const LineReader &) = delete;
    LineReader &operator=(const LineReader &) = delete;

    // One line without its newline, after writing `prompt` to stderr. False at the end of
    // input or when ^C interrupts the read.
    bool read(const char *prompt, std::string &line);
    // Adds a sent turn to the history that the up arrow walks.
    void remember(const std::string &turn);
    // "libedit", "readline" or "none": what this build edits lines with.
    static const char *backend();

  private:
    bool edit_;
    std::string input_color_;
};

}  // namespace vkllm_tool
