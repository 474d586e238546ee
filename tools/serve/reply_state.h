// One choice's chat reply as it streams: the template's reply parser splits the engine's text
// into answer, reasoning and tool calls, and the whole of each is kept for a non-streamed
// answer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vkllm.h"

namespace serve {

struct ToolCall {
    std::string id;
    std::string name;
    std::string arguments;
};

// What one push or the finish made certain.
struct ReplyPiece {
    std::string content;
    std::string reasoning;
    std::vector<ToolCall> calls;
    bool empty() const { return content.empty() && reasoning.empty() && calls.empty(); }
};

class ChoiceReply {
  public:
    // in_reasoning: the prompt opened a reasoning block (vkllm_prompt_opens_reasoning).
    ChoiceReply(vkllm_reply_format format, bool in_reasoning);
    ReplyPiece push(const std::string &text);
    ReplyPiece finish();

    const std::string &content() const { return content_; }
    const std::string &reasoning() const { return reasoning_; }
    const std::vector<ToolCall> &calls() const { return calls_; }

  private:
    ReplyPiece take(const vkllm_reply_part &part);

    std::unique_ptr<vkllm_reply_parser, void (*)(vkllm_reply_parser *)> parser_;
    std::string content_;
    std::string reasoning_;
    std::vector<ToolCall> calls_;
};

}  // namespace serve
