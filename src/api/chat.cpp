// Chat replies through the C ABI: the reply parser (chat/reply_parser.h) behind a handle that
// owns the strings and calls it hands out.
#include <memory>
#include <string>
#include <vector>

#include "api/guard.h"
#include "api/out.h"
#include "chat/reply_parser.h"

using vkllm::fail;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;
using vkllm::chat::ReplyFormat;

static_assert(int(ReplyFormat::Plain) == VKLLM_REPLY_PLAIN &&
                  int(ReplyFormat::Hermes) == VKLLM_REPLY_HERMES &&
                  int(ReplyFormat::Mistral) == VKLLM_REPLY_MISTRAL &&
                  int(ReplyFormat::Llama3) == VKLLM_REPLY_LLAMA3 &&
                  int(ReplyFormat::Harmony) == VKLLM_REPLY_HARMONY,
              "the C enum names the parser's formats");

struct vkllm_reply_parser {
    ReplyFormat format;
    bool in_reasoning;
    std::unique_ptr<vkllm::chat::ReplyParser> parser;
    // The last part handed out; its strings and calls point into this.
    vkllm::chat::ReplyPart part;
    std::vector<vkllm_tool_call> calls;
};

namespace {

void hand_out(vkllm_reply_parser *p, vkllm::chat::ReplyPart part, vkllm_reply_part *out) {
    p->part = std::move(part);
    p->calls.clear();
    for (const vkllm::chat::ToolCall &c : p->part.tool_calls)
        p->calls.push_back({c.id.c_str(), c.name.c_str(), c.arguments.c_str()});
    vkllm_reply_part r{};
    r.struct_size = sizeof r;
    r.reasoning = p->part.reasoning.c_str();
    r.content = p->part.content.c_str();
    r.tool_calls = p->calls.empty() ? nullptr : p->calls.data();
    r.n_tool_calls = p->calls.size();
    vkllm::api::copy_struct(r, out);
}

}  // namespace

vkllm_reply_format vkllm_reply_format_of_template(const char *template_source) {
    if (!template_source) return VKLLM_REPLY_PLAIN;
    return vkllm_reply_format(vkllm::chat::reply_format_of(template_source));
}

int32_t vkllm_prompt_opens_reasoning(const char *prompt) {
    return prompt && vkllm::chat::prompt_opens_reasoning(prompt) ? 1 : 0;
}

vkllm_status vkllm_reply_parser_create(vkllm_reply_format format, int32_t in_reasoning,
                                       vkllm_reply_parser **out) {
    return guard([&] {
        const char *fn = "vkllm_reply_parser_create";
        require_arg(out, fn, "out");
        *out = nullptr;
        if (int(format) < VKLLM_REPLY_PLAIN || int(format) > VKLLM_REPLY_HARMONY)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: format %d is not a vkllm_reply_format", fn,
                 int(format));
        auto p = std::make_unique<vkllm_reply_parser>();
        p->format = ReplyFormat(format);
        p->in_reasoning = in_reasoning != 0;
        p->parser = std::make_unique<vkllm::chat::ReplyParser>(p->format, p->in_reasoning);
        *out = p.release();
    });
}

void vkllm_reply_parser_destroy(vkllm_reply_parser *parser) {
    delete parser;
}

vkllm_status vkllm_reply_parser_push(vkllm_reply_parser *parser, const char *text, size_t length,
                                     vkllm_reply_part *part) {
    return guard([&] {
        const char *fn = "vkllm_reply_parser_push";
        require_arg(parser, fn, "parser");
        if (length > 0) require_arg(text, fn, "text");
        require_struct(part, fn, "part");
        hand_out(parser, parser->parser->push(std::string_view(text ? text : "", length)), part);
    });
}

vkllm_status vkllm_reply_parser_finish(vkllm_reply_parser *parser, vkllm_reply_part *part) {
    return guard([&] {
        const char *fn = "vkllm_reply_parser_finish";
        require_arg(parser, fn, "parser");
        require_struct(part, fn, "part");
        vkllm::chat::ReplyPart last = parser->parser->finish();
        parser->parser =
            std::make_unique<vkllm::chat::ReplyParser>(parser->format, parser->in_reasoning);
        hand_out(parser, std::move(last), part);
    });
}
