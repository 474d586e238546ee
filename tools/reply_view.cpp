#include "reply_view.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "token_json.h"

namespace vkllm_tool {

namespace {
constexpr const char *kReasoningColor = "\033[2m";
constexpr const char *kReset = "\033[0m";
}  // namespace

ReplyView::ReplyView(vkllm_reply_format format, bool in_reasoning, bool color)
    : format_(format), color_(color) {
    // Only a NULL out or an unknown format fail, and neither happens here.
    if (vkllm_reply_parser_create(format, in_reasoning ? 1 : 0, &parser_) != VKLLM_OK)
        throw std::bad_alloc();
}

ReplyView::~ReplyView() {
    vkllm_reply_parser_destroy(parser_);
}

void ReplyView::push(const char *text, size_t length) {
    vkllm_reply_part part = {sizeof part, nullptr, nullptr, nullptr, 0};
    if (vkllm_reply_parser_push(parser_, text, length, &part) == VKLLM_OK) show(part);
}

void ReplyView::finish() {
    vkllm_reply_part part = {sizeof part, nullptr, nullptr, nullptr, 0};
    if (vkllm_reply_parser_finish(parser_, &part) == VKLLM_OK) show(part);
    if (reasoning_open_) std::fputs(color_ ? "\033[0m\n" : "\n", stderr);
    reasoning_open_ = false;
}

void ReplyView::show(const vkllm_reply_part &part) {
    if (*part.reasoning) {
        if (!reasoning_open_) std::fprintf(stderr, "%s[reasoning] ", color_ ? kReasoningColor : "");
        reasoning_open_ = true;
        std::fputs(part.reasoning, stderr);
        std::fflush(stderr);
        reasoning += part.reasoning;
    }
    if (*part.content) {
        if (reasoning_open_) std::fprintf(stderr, "%s\n", color_ ? kReset : "");
        reasoning_open_ = false;
        std::fputs(part.content, stdout);
        std::fflush(stdout);
        content += part.content;
    }
    for (size_t i = 0; i < part.n_tool_calls; ++i) {
        const vkllm_tool_call &c = part.tool_calls[i];
        calls.push_back({c.id ? c.id : "", c.name, c.arguments});
    }
}

std::string tool_call_json(const ToolCall &call) {
    return "{\"id\": " + json_text(call.id) + ", \"name\": " + json_text(call.name) +
           ", \"arguments\": " + call.arguments + "}";
}

}  // namespace vkllm_tool
