// Chat templates through the C ABI: a conversation (C structs or JSON) and the params become
// the template's variables, as transformers' apply_chat_template passes them, and src/chat
// renders the model's own template, the caller's, or a built-in one.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "api/guard.h"
#include "api/objects.h"
#include "api/out.h"
#include "chat/builtin_templates.h"
#include "chat/jinja.h"
#include "chat/json_value.h"

using vkllm::fail;
using vkllm::api::copy_text;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;
using vkllm::chat::Dict;
using vkllm::chat::List;
using vkllm::chat::Value;

namespace {

Value str(const char *s) {
    return Value(std::string(s));
}

// JSON text of the caller's, named in the error when it does not parse.
Value parse(const char *json, const char *what, const char *fn) {
    try {
        return vkllm::chat::parse_json(json);
    } catch (const vkllm::Error &e) {
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s is not JSON: %s", fn, what, e.what());
    }
}

Value turn_value(const vkllm_chat_turn &t, size_t i, const char *fn) {
    if (!t.role) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: turn %zu has no role", fn, i);
    if (t.n_tool_calls > 0 && !t.tool_calls)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: turn %zu has %zu tool calls and no array", fn, i,
             t.n_tool_calls);
    auto d = std::make_shared<Dict>();
    d->set(Value("role"), str(t.role));
    d->set(Value("content"), t.content ? str(t.content) : Value::none());
    if (t.reasoning_content) d->set(Value("reasoning_content"), str(t.reasoning_content));
    if (t.n_tool_calls > 0) {
        List calls;
        for (size_t k = 0; k < t.n_tool_calls; ++k) {
            const vkllm_tool_call &c = t.tool_calls[k];
            if (!c.name || !c.arguments)
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "%s: turn %zu, tool call %zu: no name or arguments", fn, i, k);
            std::string what = "turn " + std::to_string(i) + ", call " + std::to_string(k);
            auto function = std::make_shared<Dict>();
            function->set(Value("name"), str(c.name));
            function->set(Value("arguments"), parse(c.arguments, what.c_str(), fn));
            auto call = std::make_shared<Dict>();
            if (c.id && *c.id) call->set(Value("id"), str(c.id));
            call->set(Value("type"), Value("function"));
            call->set(Value("function"), Value(function));
            calls.push_back(Value(call));
        }
        d->set(Value("tool_calls"), Value(std::move(calls)));
    }
    if (t.tool_call_id) d->set(Value("tool_call_id"), str(t.tool_call_id));
    if (t.name) d->set(Value("name"), str(t.name));
    return Value(d);
}

// The model's text of a special token, if it has one.
std::optional<std::string> token_text(const vkllm_model *model, int32_t id) {
    if (!model || id < 0) return std::nullopt;
    return model->tokenizer.impl->piece(id, true);
}

std::string render(const vkllm_chat_params &p, Value messages, const char *fn) {
    std::string_view source;
    if (p.template_source) {
        source = p.template_source;
    } else if (p.template_name) {
        source = vkllm::chat::builtin_template(p.template_name);
        if (source.empty())
            fail(VKLLM_ERR_NOT_FOUND, "%s: no chat template named \"%s\" (%s)", fn, p.template_name,
                 vkllm::chat::builtin_template_names().c_str());
    } else if (p.model && !p.model->model->chat_template().empty()) {
        source = p.model->model->chat_template();
    } else {
        fail(VKLLM_ERR_NOT_FOUND,
             "%s: no template: %s; pass template_source or a template_name (%s)", fn,
             p.model ? "the model's file has none" : "no model given",
             vkllm::chat::builtin_template_names().c_str());
    }
    auto ctx = std::make_shared<Dict>();
    ctx->set(Value("messages"), std::move(messages));
    ctx->set(Value("tools"), p.tools ? parse(p.tools, "tools", fn) : Value::none());
    ctx->set(Value("documents"), Value::none());
    ctx->set(Value("add_generation_prompt"), Value(p.add_generation_prompt != 0));
    const vkllm::tokenizer::Vocab *vocab = p.model ? &p.model->tokenizer.impl->vocab() : nullptr;
    std::optional<std::string> bos = p.bos_token ? std::optional<std::string>(p.bos_token)
                                                 : token_text(p.model, vocab ? vocab->bos : -1);
    std::optional<std::string> eos = p.eos_token ? std::optional<std::string>(p.eos_token)
                                                 : token_text(p.model, vocab ? vocab->eos : -1);
    if (bos) ctx->set(Value("bos_token"), Value(*bos));
    if (eos) ctx->set(Value("eos_token"), Value(*eos));
    if (p.extra) {
        Value extra = parse(p.extra, "extra", fn);
        if (!extra.is_dict())
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: extra is not a JSON object", fn);
        for (const auto &kv : extra.dict().items)
            ctx->set(kv.first, kv.second);
    }
    vkllm::chat::RenderOptions options;
    if (p.now != VKLLM_CHAT_NOW_CLOCK) options.now = p.now;
    return vkllm::chat::render_template(source, Value(ctx), options);
}

vkllm_chat_params checked(const vkllm_chat_params *params, const char *fn) {
    require_struct(params, fn, "params");
    // Fields past an older caller's struct_size take their defaults.
    vkllm_chat_params p;
    vkllm_chat_params_init(&p);
    std::memcpy(&p, params, std::min(params->struct_size, sizeof p));
    p.struct_size = sizeof p;
    return p;
}

}  // namespace

void vkllm_chat_params_init(vkllm_chat_params *params) {
    if (!params) return;
    std::memset(params, 0, sizeof *params);
    params->struct_size = sizeof *params;
    params->add_generation_prompt = 1;
    params->now = VKLLM_CHAT_NOW_CLOCK;
}

// The first chat call of the API, kept for its callers: plain turns, and no special-token texts,
// so that tokenizing with VKLLM_TOKENIZE_ADD_SPECIAL adds the model's BOS once.
vkllm_status vkllm_chat_apply_template(const char *template_name, const char *model_template,
                                       const vkllm_chat_message *messages, size_t n_messages,
                                       int32_t add_assistant, char *buf, size_t capacity,
                                       size_t *length) {
    return guard([&] {
        const char *fn = "vkllm_chat_apply_template";
        if (n_messages > 0) require_arg(messages, fn, "messages");
        List turns;
        for (size_t i = 0; i < n_messages; ++i) {
            if (!messages[i].role || !messages[i].content)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: message %zu has a NULL role or content", fn,
                     i);
            auto d = std::make_shared<Dict>();
            d->set(Value("role"), str(messages[i].role));
            d->set(Value("content"), str(messages[i].content));
            turns.push_back(Value(d));
        }
        vkllm_chat_params p;
        vkllm_chat_params_init(&p);
        p.template_name = template_name;
        p.template_source = template_name ? nullptr : model_template;
        p.add_generation_prompt = add_assistant;
        if (!template_name && (!model_template || !*model_template))
            fail(VKLLM_ERR_UNSUPPORTED, "%s: the model has no chat template; name one (%s)", fn,
                 vkllm::chat::builtin_template_names().c_str());
        copy_text(render(p, Value(std::move(turns)), fn), buf, capacity, length, fn);
    });
}

vkllm_status vkllm_chat_render(const vkllm_chat_params *params, const vkllm_chat_turn *turns,
                               size_t n_turns, char *buf, size_t capacity, size_t *length) {
    return guard([&] {
        const char *fn = "vkllm_chat_render";
        const vkllm_chat_params p = checked(params, fn);
        if (n_turns > 0) require_struct(turns, fn, "turns");
        List messages;
        const size_t stride = n_turns > 0 ? turns[0].struct_size : 0;
        for (size_t i = 0; i < n_turns; ++i) {
            vkllm_chat_turn t{};
            std::memcpy(&t, reinterpret_cast<const char *>(turns) + i * stride,
                        std::min(stride, sizeof t));
            messages.push_back(turn_value(t, i, fn));
        }
        copy_text(render(p, Value(std::move(messages)), fn), buf, capacity, length, fn);
    });
}

vkllm_status vkllm_chat_render_json(const vkllm_chat_params *params, const char *messages_json,
                                    char *buf, size_t capacity, size_t *length) {
    return guard([&] {
        const char *fn = "vkllm_chat_render_json";
        const vkllm_chat_params p = checked(params, fn);
        require_arg(messages_json, fn, "messages_json");
        Value messages = parse(messages_json, "messages_json", fn);
        if (!messages.is_list())
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: messages_json is not a JSON array", fn);
        copy_text(render(p, std::move(messages), fn), buf, capacity, length, fn);
    });
}
