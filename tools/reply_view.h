// A chat reply as it streams, split by the library's reply parser: the reasoning is shown apart
// (on stderr, dimmed on a terminal), the answer goes to stdout, tool calls are kept for the
// caller, which prints them as JSON lines and asks for their results.
#pragma once

#include <string>
#include <vector>

#include "vkllm.h"

namespace vkllm_tool {

struct ToolCall {
    std::string id, name, arguments;  // arguments: JSON text
};

class ReplyView {
  public:
    // `format` and `in_reasoning` as vkllm_reply_parser_create takes them; `color`: dim the
    // reasoning.
    ReplyView(vkllm_reply_format format, bool in_reasoning, bool color);
    ~ReplyView();
    ReplyView(const ReplyView &) = delete;
    ReplyView &operator=(const ReplyView &) = delete;

    // Whether the parser needs control tokens as text (harmony's channels, [TOOL_CALLS]).
    bool wants_special() const { return format_ != VKLLM_REPLY_PLAIN; }
    void push(const char *text, size_t length);
    // The reply ended: what the parser still held.
    void finish();

    std::string reasoning, content;
    std::vector<ToolCall> calls;

  private:
    void show(const vkllm_reply_part &part);
    vkllm_reply_format format_;
    vkllm_reply_parser *parser_ = nullptr;
    bool color_;
    bool reasoning_open_ = false;  // "[reasoning]" printed and not yet closed by a newline
};

// {"id": "...", "name": "...", "arguments": {...}}: a call as one JSON line.
std::string tool_call_json(const ToolCall &call);

}  // namespace vkllm_tool
