#include "reply_state.h"

#include "openai_json.h"

namespace serve {

ChoiceReply::ChoiceReply(vkllm_reply_format format, bool in_reasoning)
    : parser_(nullptr, vkllm_reply_parser_destroy) {
    vkllm_reply_parser *p = nullptr;
    // Only an unknown format fails, and the format comes from vkllm_reply_format_of_template:
    // without a parser the text passes through as the answer.
    if (vkllm_reply_parser_create(format, in_reasoning ? 1 : 0, &p) == VKLLM_OK) parser_.reset(p);
}

ReplyPiece ChoiceReply::take(const vkllm_reply_part &part) {
    ReplyPiece piece;
    piece.content = part.content ? part.content : "";
    piece.reasoning = part.reasoning ? part.reasoning : "";
    for (size_t i = 0; i < part.n_tool_calls; ++i) {
        const vkllm_tool_call &c = part.tool_calls[i];
        ToolCall call{c.id && *c.id ? c.id : new_id("call_"), c.name ? c.name : "",
                      c.arguments ? c.arguments : "{}"};
        piece.calls.push_back(call);
        calls_.push_back(call);
    }
    content_ += piece.content;
    reasoning_ += piece.reasoning;
    return piece;
}

ReplyPiece ChoiceReply::push(const std::string &text) {
    if (!parser_) {
        content_ += text;
        return ReplyPiece{text, "", {}};
    }
    vkllm_reply_part part = {sizeof part, nullptr, nullptr, nullptr, 0};
    if (vkllm_reply_parser_push(parser_.get(), text.data(), text.size(), &part) != VKLLM_OK)
        return ReplyPiece{};
    return take(part);
}

ReplyPiece ChoiceReply::finish() {
    if (!parser_) return ReplyPiece{};
    vkllm_reply_part part = {sizeof part, nullptr, nullptr, nullptr, 0};
    if (vkllm_reply_parser_finish(parser_.get(), &part) != VKLLM_OK) return ReplyPiece{};
    return take(part);
}

}  // namespace serve
