#include "tool_choice.h"

#include <nlohmann/json.hpp>
#include <string>

namespace serve {

namespace {

using json = nlohmann::ordered_json;

// One alternative per tool that may be called: {"name": NAME, KEY: its arguments}, the name
// written first as the templates show it.
json call_schema(const json &tools, const ChatRequest &request, const char *arguments_key) {
    json alternatives = json::array();
    for (const json &tool : tools) {
        const json &f = tool["function"];
        const std::string name = f["name"].get<std::string>();
        if (request.tool_choice == ToolChoice::Named && name != request.tool_name) continue;
        const json parameters = f.contains("parameters") && f["parameters"].is_object()
                                    ? f["parameters"]
                                    : json{{"type", "object"}};
        alternatives.push_back(
            {{"type", "object"},
             {"properties", {{"name", {{"const", name}}}, {arguments_key, parameters}}},
             {"required", {"name", arguments_key}},
             {"additionalProperties", false}});
    }
    return alternatives.size() == 1 ? alternatives[0] : json{{"anyOf", alternatives}};
}

std::string schema_gbnf(const std::string &schema) {
    size_t length = 0;
    vkllm_status st = vkllm_json_schema_to_gbnf(schema.c_str(), nullptr, 0, &length);
    std::string text(length + 1, '\0');
    if (st == VKLLM_ERR_BUFFER_TOO_SMALL)
        st = vkllm_json_schema_to_gbnf(schema.c_str(), text.data(), text.size(), &length);
    if (st != VKLLM_OK)
        throw RequestError(
            std::string("a tool's parameters cannot be enforced: ") + vkllm_last_error(), "tools",
            "unsupported_value");
    text.resize(length);
    return text;
}

}  // namespace

std::shared_ptr<const vkllm_grammar> tool_call_grammar(const ServerContext &ctx,
                                                       const ChatRequest &request) {
    // Hermes: <tool_call>{"name", "arguments"}</tool_call> (Qwen 2.5/3, SmolLM3, ...); Llama 3:
    // the reply is {"name", "parameters"}.
    const bool hermes = ctx.reply_format == VKLLM_REPLY_HERMES;
    if (!hermes && ctx.reply_format != VKLLM_REPLY_LLAMA3)
        throw RequestError(
            "'tool_choice': a forced call is supported for templates whose calls are JSON "
            "objects (<tool_call> or Llama 3's), not this model's; use \"auto\"",
            "tool_choice", "unsupported_value");
    const json schema =
        call_schema(json::parse(request.tools_json), request, hermes ? "arguments" : "parameters");
    std::string gbnf = schema_gbnf(schema.dump());
    // The converter's grammar starts at "root"; the call's markers go around it.
    const char *start = "root";
    if (hermes) {
        gbnf += "\ntool-call ::= \"<tool_call>\\n\" root \"\\n</tool_call>\"\n";
        start = "tool-call";
    }
    vkllm_grammar *g = nullptr;
    if (vkllm_grammar_create(ctx.tokenizer, gbnf.c_str(), start, &g) != VKLLM_OK)
        throw RequestError(std::string("the forced tool call's grammar: ") + vkllm_last_error(),
                           "tools", "unsupported_value");
    return std::shared_ptr<const vkllm_grammar>(
        g, [](const vkllm_grammar *p) { vkllm_grammar_destroy(const_cast<vkllm_grammar *>(p)); });
}

}  // namespace serve
