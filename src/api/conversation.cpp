// Conversations through the C ABI: the messages of a chat, rendered through the chat API for
// each reply, with only the tokens the sequence's cache lacks prefilled (the longest common
// prefix with the cache is kept), and the reply streamed through the reply parser. Built on the
// public calls (render, tokenize, truncate, generate) as an app's own loop would be.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "api/guard.h"
#include "api/objects.h"
#include "api/out.h"
#include "chat/builtin_templates.h"
#include "chat/json_value.h"
#include "chat/reply_parser.h"

using vkllm::fail;
using vkllm::api::guard;
using vkllm::api::require_arg;
using vkllm::api::require_struct;
using vkllm::chat::Dict;
using vkllm::chat::List;
using vkllm::chat::Value;

namespace {

// A message as the template reads it, and as vkllm_conversation_get_message hands it out (its
// strings owned here).
struct Message {
    Value value;
    std::string role, content, reasoning, tool_call_id, name;
    bool has_content = false, has_reasoning = false, has_tool_call_id = false, has_name = false;
    std::vector<vkllm::chat::ToolCall> calls;
    std::vector<vkllm_tool_call> call_views;
};

}  // namespace

struct vkllm_conversation {
    vkllm_session *session = nullptr;
    // What the chat calls need of the session's model, as a model handle of its own.
    vkllm_model model;
    uint32_t seq = 0;
    std::string template_source, template_name, tools, extra;
    bool has_source = false, has_name = false, has_tools = false, has_extra = false;
    int64_t now = VKLLM_CHAT_NOW_CLOCK;
    vkllm_reply_format format = VKLLM_REPLY_PLAIN;
    std::vector<std::unique_ptr<Message>> messages;
    uint64_t calls_named = 0;  // for the ids of calls that come without one
};

namespace {

// A failed public call inside a conversation call: its status, and its message behind ours.
void check(vkllm_status s, const char *fn, const char *doing) {
    if (s != VKLLM_OK) fail(s, "%s: %s: %s", fn, doing, vkllm_last_error());
}

std::string json_text(const Value &v) {
    return vkllm::chat::to_json(v, vkllm::chat::JsonOptions{});
}

const Value *key(const Value &dict, const char *name) {
    const Value *v = dict.dict().find(std::string(name));
    return v && !v->is_undefined() ? v : nullptr;
}

// An optional string member: absent or None is "no", a string is itself, anything else is JSON.
bool text_of(const Value &dict, const char *name, std::string &out) {
    const Value *v = key(dict, name);
    if (!v || v->is_none()) return false;
    out = v->is_str() ? v->str() : json_text(*v);
    return true;
}

// The message a template reads, tool-call arguments as objects (OpenAI sends them as JSON
// text; templates index into them), with the views get_message hands out.
std::unique_ptr<Message> make_message(const Value &in, size_t i, const char *fn) {
    if (!in.is_dict()) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: message %zu is not an object", fn, i);
    const Value *role = key(in, "role");
    if (!role || !role->is_str())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: message %zu has no string role", fn, i);
    auto m = std::make_unique<Message>();
    m->role = role->str();
    m->has_content = text_of(in, "content", m->content);
    m->has_reasoning = text_of(in, "reasoning_content", m->reasoning);
    m->has_tool_call_id = text_of(in, "tool_call_id", m->tool_call_id);
    m->has_name = text_of(in, "name", m->name);
    auto d = std::make_shared<Dict>(in.dict());
    if (const Value *calls = key(in, "tool_calls"); calls && !calls->is_none()) {
        if (!calls->is_list())
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: message %zu: tool_calls is not an array", fn, i);
        List fixed;
        for (size_t k = 0; k < calls->list().size(); ++k) {
            const Value &c = calls->list()[k];
            const Value *f = c.is_dict() ? key(c, "function") : nullptr;
            const Value *name = f && f->is_dict() ? key(*f, "name") : nullptr;
            const Value *args = f && f->is_dict() ? key(*f, "arguments") : nullptr;
            if (!name || !name->is_str() || !args)
                fail(VKLLM_ERR_INVALID_ARGUMENT,
                     "%s: message %zu, tool call %zu: no function with a name and arguments", fn, i,
                     k);
            Value parsed = *args;
            if (args->is_str()) {
                try {
                    parsed = vkllm::chat::parse_json(args->str());
                } catch (const vkllm::Error &e) {
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "%s: message %zu, tool call %zu: the arguments are not JSON: %s", fn, i, k,
                         e.what());
                }
            }
            auto function = std::make_shared<Dict>(f->dict());
            function->set(Value("arguments"), parsed);
            auto call = std::make_shared<Dict>(c.dict());
            call->set(Value("function"), Value(function));
            if (!key(c, "type")) call->set(Value("type"), Value("function"));
            fixed.push_back(Value(call));
            vkllm::chat::ToolCall tc;
            text_of(c, "id", tc.id);
            tc.name = name->str();
            tc.arguments = json_text(parsed);
            m->calls.push_back(std::move(tc));
        }
        d->set(Value("tool_calls"), Value(std::move(fixed)));
    }
    m->value = Value(d);
    for (const vkllm::chat::ToolCall &c : m->calls)
        m->call_views.push_back({c.id.c_str(), c.name.c_str(), c.arguments.c_str()});
    return m;
}

Value str(const char *s) {
    return Value(std::string(s));
}

// A C turn as the JSON object of a message.
Value turn_value(const vkllm_chat_turn &t, const char *fn) {
    if (!t.role) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: the turn has no role", fn);
    if (t.n_tool_calls > 0 && !t.tool_calls)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: the turn has %zu tool calls and no array", fn,
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
                fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: tool call %zu has no name or arguments", fn,
                     k);
            auto function = std::make_shared<Dict>();
            function->set(Value("name"), str(c.name));
            function->set(Value("arguments"), str(c.arguments));
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

vkllm_chat_params chat_params(const vkllm_conversation &c) {
    vkllm_chat_params p;
    vkllm_chat_params_init(&p);
    p.model = &c.model;
    p.template_source = c.has_source ? c.template_source.c_str() : nullptr;
    p.template_name = c.has_name ? c.template_name.c_str() : nullptr;
    p.tools = c.has_tools ? c.tools.c_str() : nullptr;
    p.extra = c.has_extra ? c.extra.c_str() : nullptr;
    p.now = c.now;
    return p;
}

// The first n messages (all by default), with the opening of the reply or without.
std::string render(const vkllm_conversation &c, const char *fn, size_t n_messages = SIZE_MAX,
                   bool open_reply = true) {
    List all;
    for (size_t i = 0; i < c.messages.size() && i < n_messages; ++i)
        all.push_back(c.messages[i]->value);
    const std::string messages = json_text(Value(std::move(all)));
    vkllm_chat_params p = chat_params(c);
    p.add_generation_prompt = open_reply ? 1 : 0;
    size_t n = 0;
    vkllm_status s = vkllm_chat_render_json(&p, messages.c_str(), nullptr, 0, &n);
    if (s != VKLLM_ERR_BUFFER_TOO_SMALL) check(s, fn, "rendering the chat template");
    std::string text(n + 1, '\0');
    check(vkllm_chat_render_json(&p, messages.c_str(), text.data(), text.size(), &n), fn,
          "rendering the chat template");
    text.resize(n);
    return text;
}

// The template's text as the model was trained on it: its control tokens parsed, and BOS in
// front where the model wants one and the template did not write it.
std::vector<int32_t> chat_tokens(const vkllm_conversation &c, const std::string &text,
                                 const char *fn, bool bos = true) {
    const vkllm_tokenizer *tok = &c.model.tokenizer;
    size_t n = 0;
    vkllm_status s = vkllm_tokenizer_encode(tok, text.data(), text.size(),
                                            VKLLM_TOKENIZE_PARSE_SPECIAL, nullptr, 0, &n);
    if (s != VKLLM_ERR_BUFFER_TOO_SMALL) check(s, fn, "tokenizing");
    std::vector<int32_t> ids(n);
    check(vkllm_tokenizer_encode(tok, text.data(), text.size(), VKLLM_TOKENIZE_PARSE_SPECIAL,
                                 ids.data(), ids.size(), &n),
          fn, "tokenizing");
    ids.resize(n);
    vkllm_tokenizer_info info;
    info.struct_size = sizeof info;
    check(vkllm_tokenizer_get_info(tok, &info), fn, "tokenizing");
    if (bos && info.add_bos && info.bos >= 0 && (ids.empty() || ids[0] != info.bos))
        ids.insert(ids.begin(), info.bos);
    return ids;
}

std::vector<int32_t> cached_tokens(const vkllm_conversation &c, const char *fn) {
    size_t n = 0;
    vkllm_status s = vkllm_session_get_tokens(c.session, c.seq, nullptr, 0, &n);
    if (s != VKLLM_ERR_BUFFER_TOO_SMALL) check(s, fn, "reading the cache");
    std::vector<int32_t> ids(n);
    check(vkllm_session_get_tokens(c.session, c.seq, ids.data(), ids.size(), &n), fn,
          "reading the cache");
    ids.resize(n);
    return ids;
}

// Appends to `held` and returns the whole UTF-8 characters, keeping an incomplete trailing one
// for the next piece unless this is the last.
std::string whole_characters(std::string &held, const std::string &text, bool last) {
    held += text;
    size_t keep = 0;
    if (!last) {
        for (size_t n = 1; n <= 3 && n <= held.size(); ++n) {
            unsigned char b = static_cast<unsigned char>(held[held.size() - n]);
            if ((b & 0xC0) == 0x80) continue;
            size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
            if (len > n) keep = n;
            break;
        }
    }
    std::string out = held.substr(0, held.size() - keep);
    held.erase(0, held.size() - keep);
    return out;
}

// One reply as it streams: the parser's parts handed to the app's callback and gathered.
struct Reply {
    vkllm_conversation *conversation;
    vkllm_chat_piece_fn on_piece;
    void *user_data;
    std::unique_ptr<vkllm::chat::ReplyParser> parser;
    std::string held_content, held_reasoning;
    std::string content, reasoning;
    std::vector<vkllm::chat::ToolCall> calls;
    std::exception_ptr error;  // an exception on the way, rethrown once generation returns

    // False when the app asks to stop.
    bool emit(vkllm::chat::ReplyPart part, bool last) {
        bool go = true;
        auto text = [&](vkllm_chat_piece_kind kind, std::string &held, const std::string &piece,
                        std::string &all) {
            std::string whole = whole_characters(held, piece, last);
            all += whole;
            if (!whole.empty() && on_piece && go)
                go = on_piece(user_data, kind, whole.data(), whole.size(), nullptr) == 0;
        };
        text(VKLLM_CHAT_PIECE_REASONING, held_reasoning, part.reasoning, reasoning);
        text(VKLLM_CHAT_PIECE_CONTENT, held_content, part.content, content);
        for (vkllm::chat::ToolCall &call : part.tool_calls) {
            if (call.id.empty()) {
                char id[16];
                uint64_t k = ++conversation->calls_named % 100000;
                std::snprintf(id, sizeof id, "call%05llu", static_cast<unsigned long long>(k));
                call.id = id;
            }
            calls.push_back(call);
            vkllm_tool_call view{call.id.c_str(), call.name.c_str(), call.arguments.c_str()};
            if (on_piece && go)
                go = on_piece(user_data, VKLLM_CHAT_PIECE_TOOL_CALL, call.arguments.data(),
                              call.arguments.size(), &view) == 0;
        }
        return go;
    }

    static int32_t on_token(void *user, int32_t, const char *text, size_t length) {
        auto *r = static_cast<Reply *>(user);
        try {
            return r->emit(r->parser->push(std::string_view(text, length)), false) ? 0 : 1;
        } catch (...) {
            r->error = std::current_exception();
            return 1;
        }
    }

    // The assistant's message: content (None when it only calls), reasoning and calls.
    Value message() const {
        auto d = std::make_shared<Dict>();
        d->set(Value("role"), Value("assistant"));
        d->set(Value("content"),
               content.empty() && !calls.empty() ? Value::none() : Value(content));
        if (!reasoning.empty()) d->set(Value("reasoning_content"), Value(reasoning));
        if (!calls.empty()) {
            List list;
            for (const vkllm::chat::ToolCall &c : calls) {
                auto function = std::make_shared<Dict>();
                function->set(Value("name"), Value(c.name));
                function->set(Value("arguments"), Value(c.arguments));
                auto call = std::make_shared<Dict>();
                call->set(Value("id"), Value(c.id));
                call->set(Value("type"), Value("function"));
                call->set(Value("function"), Value(function));
                list.push_back(Value(call));
            }
            d->set(Value("tool_calls"), Value(std::move(list)));
        }
        return Value(d);
    }
};

template <typename T>
T params_or_defaults(const T *given, void (*init)(T *), const char *fn, const char *name) {
    T p;
    init(&p);
    if (given) {
        if (given->struct_size < sizeof(size_t) || given->struct_size > sizeof p)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %s->struct_size is %zu", fn, name,
                 given->struct_size);
        std::memcpy(&p, given, given->struct_size);
        p.struct_size = sizeof p;
    }
    return p;
}

}  // namespace

void vkllm_conversation_params_init(vkllm_conversation_params *params) {
    if (!params) return;
    std::memset(params, 0, sizeof *params);
    params->struct_size = sizeof *params;
    params->now = VKLLM_CHAT_NOW_CLOCK;
}

void vkllm_conversation_reply_params_init(vkllm_conversation_reply_params *params) {
    if (!params) return;
    std::memset(params, 0, sizeof *params);
    params->struct_size = sizeof *params;
}

vkllm_status vkllm_conversation_create(vkllm_session *session,
                                       const vkllm_conversation_params *params,
                                       vkllm_conversation **out) {
    return guard([&] {
        const char *fn = "vkllm_conversation_create";
        require_arg(session, fn, "session");
        require_arg(out, fn, "out");
        const vkllm_conversation_params p =
            params_or_defaults(params, vkllm_conversation_params_init, fn, "params");
        vkllm_session_info info;
        info.struct_size = sizeof info;
        check(vkllm_session_get_info(session, &info), fn, "reading the session");
        if (p.seq >= info.n_seq)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: sequence %u; the session has %u", fn, p.seq,
                 info.n_seq);
        auto c = std::make_unique<vkllm_conversation>();
        c->session = session;
        c->seq = p.seq;
        c->model.context = session->context;
        c->model.model = session->model;
        c->model.tokenizer.impl = session->model->tokenizer();
        c->model.metadata.file = session->model->metadata();
        auto keep = [](const char *s, std::string &to, bool &has) {
            if ((has = s != nullptr)) to = s;
        };
        keep(p.template_source, c->template_source, c->has_source);
        keep(p.template_name, c->template_name, c->has_name);
        keep(p.tools, c->tools, c->has_tools);
        keep(p.extra, c->extra, c->has_extra);
        c->now = p.now;
        // The template, tools and variables are tried now, on no messages, so that a mistake
        // shows at once rather than at the first reply.
        render(*c, fn);
        // The reply format is the one the template teaches, read from its text.
        const std::string source =
            c->has_source ? c->template_source
            : c->has_name ? std::string(vkllm::chat::builtin_template(c->template_name))
                          : session->model->chat_template();
        c->format = vkllm_reply_format_of_template(source.c_str());
        *out = c.release();
    });
}

void vkllm_conversation_destroy(vkllm_conversation *conversation) {
    delete conversation;
}

vkllm_status vkllm_conversation_add(vkllm_conversation *conversation, const vkllm_chat_turn *turn) {
    return guard([&] {
        const char *fn = "vkllm_conversation_add";
        require_arg(conversation, fn, "conversation");
        require_struct(turn, fn, "turn");
        vkllm_chat_turn t{};
        std::memcpy(&t, turn, std::min(turn->struct_size, sizeof t));
        conversation->messages.push_back(make_message(turn_value(t, fn), 0, fn));
    });
}

vkllm_status vkllm_conversation_add_json(vkllm_conversation *conversation,
                                         const char *messages_json) {
    return guard([&] {
        const char *fn = "vkllm_conversation_add_json";
        require_arg(conversation, fn, "conversation");
        require_arg(messages_json, fn, "messages_json");
        Value v;
        try {
            v = vkllm::chat::parse_json(messages_json);
        } catch (const vkllm::Error &e) {
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: messages_json is not JSON: %s", fn, e.what());
        }
        std::vector<std::unique_ptr<Message>> added;
        if (v.is_list()) {
            for (size_t i = 0; i < v.list().size(); ++i)
                added.push_back(make_message(v.list()[i], i, fn));
        } else {
            added.push_back(make_message(v, 0, fn));
        }
        for (auto &m : added)
            conversation->messages.push_back(std::move(m));
    });
}

vkllm_status vkllm_conversation_get_count(const vkllm_conversation *conversation, size_t *count) {
    return guard([&] {
        const char *fn = "vkllm_conversation_get_count";
        require_arg(conversation, fn, "conversation");
        require_arg(count, fn, "count");
        *count = conversation->messages.size();
    });
}

vkllm_status vkllm_conversation_get_message(const vkllm_conversation *conversation, size_t index,
                                            vkllm_chat_turn *out) {
    return guard([&] {
        const char *fn = "vkllm_conversation_get_message";
        require_arg(conversation, fn, "conversation");
        require_struct(out, fn, "out");
        if (index >= conversation->messages.size())
            fail(VKLLM_ERR_NOT_FOUND, "%s: message %zu; the conversation has %zu", fn, index,
                 conversation->messages.size());
        const Message &m = *conversation->messages[index];
        vkllm_chat_turn t{};
        t.struct_size = sizeof t;
        t.role = m.role.c_str();
        t.content = m.has_content ? m.content.c_str() : nullptr;
        t.reasoning_content = m.has_reasoning ? m.reasoning.c_str() : nullptr;
        t.tool_calls = m.call_views.empty() ? nullptr : m.call_views.data();
        t.n_tool_calls = m.call_views.size();
        t.tool_call_id = m.has_tool_call_id ? m.tool_call_id.c_str() : nullptr;
        t.name = m.has_name ? m.name.c_str() : nullptr;
        vkllm::api::copy_struct(t, out);
    });
}

vkllm_status vkllm_conversation_truncate(vkllm_conversation *conversation, size_t n_keep) {
    return guard([&] {
        require_arg(conversation, "vkllm_conversation_truncate", "conversation");
        if (n_keep < conversation->messages.size()) conversation->messages.resize(n_keep);
    });
}

vkllm_status vkllm_conversation_reply(vkllm_conversation *conversation,
                                      const vkllm_sampling_params *sampling,
                                      const vkllm_conversation_reply_params *params,
                                      vkllm_conversation_result *result) {
    return guard([&] {
        const char *fn = "vkllm_conversation_reply";
        require_arg(conversation, fn, "conversation");
        if (result) require_struct(result, fn, "result");
        const vkllm_conversation_reply_params p =
            params_or_defaults(params, vkllm_conversation_reply_params_init, fn, "params");
        vkllm_conversation &c = *conversation;
        const std::string text = render(c, fn);
        const std::vector<int32_t> all = chat_tokens(c, text, fn);
        vkllm_session_info info;
        info.struct_size = sizeof info;
        check(vkllm_session_get_info(c.session, &info), fn, "reading the session");
        const bool streaming = (info.flags & VKLLM_SESSION_STREAMING) != 0;
        if (!streaming && all.size() > info.n_ctx)
            fail(VKLLM_ERR_CONTEXT_FULL,
                 "%s: the conversation is %zu tokens; the session's context holds %u", fn,
                 all.size(), info.n_ctx);
        // Keep what the cache shares with the rendering; at least one token is prefilled, for
        // the logits the reply starts from.
        const std::vector<int32_t> cached = cached_tokens(c, fn);
        size_t common = 0;
        while (common < cached.size() && common + 1 < all.size() && cached[common] == all[common])
            ++common;
        size_t reused = common;
        std::vector<int32_t> fresh(all.begin() + long(common), all.end());
        if (vkllm_session_truncate(c.session, c.seq, uint32_t(common)) != VKLLM_OK) {
            // A ring that has wrapped (streaming, sliding window) cannot rewind to the shared
            // prefix. As the CLI's chat does, the reply goes on after everything cached with what
            // the template adds after the last reply; where the rendering does not extend the
            // one up to that reply, the conversation is prefilled again from its start.
            size_t last = c.messages.size();
            while (last > 0 && c.messages[last - 1]->role != "assistant")
                --last;
            const std::string before = last > 0 ? render(c, fn, last, false) : std::string();
            uint32_t position = 0;
            check(vkllm_session_get_position(c.session, c.seq, &position), fn, "reading the cache");
            if (last > 0 && text.size() > before.size() &&
                text.compare(0, before.size(), before) == 0) {
                fresh = chat_tokens(c, text.substr(before.size()), fn, false);
                reused = position;
            } else {
                check(vkllm_session_reset(c.session, int32_t(c.seq)), fn, "emptying the sequence");
                fresh = all;
                reused = 0;
            }
        }
        const uint64_t held = reused + fresh.size();
        if (!streaming && held > info.n_ctx)
            fail(VKLLM_ERR_CONTEXT_FULL,
                 "%s: the conversation is %llu tokens; the session's context holds %u", fn,
                 static_cast<unsigned long long>(held), info.n_ctx);
        uint64_t room = streaming ? info.n_ctx : uint64_t(info.n_ctx) - held + 1;
        uint32_t limit = uint32_t(std::min<uint64_t>(room, UINT32_MAX));
        if (p.max_tokens > 0) limit = std::min(limit, p.max_tokens);

        Reply reply{&c, p.on_piece, p.user_data, nullptr, {}, {}, {}, {}, {}, nullptr};
        reply.parser = std::make_unique<vkllm::chat::ReplyParser>(
            vkllm::chat::ReplyFormat(c.format), vkllm_prompt_opens_reasoning(text.c_str()) != 0);
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.seq = c.seq;
        gp.max_tokens = limit;
        gp.render_special = c.format != VKLLM_REPLY_PLAIN ? 1 : 0;
        gp.stop = p.stop;
        gp.n_stop = p.n_stop;
        gp.on_token = Reply::on_token;
        gp.user_data = &reply;
        vkllm_generate_result r;
        std::memset(&r, 0, sizeof r);
        r.struct_size = sizeof r;
        const vkllm_status s =
            vkllm_session_generate(c.session, fresh.data(), fresh.size(), sampling, &gp, &r);
        if (reply.error) std::rethrow_exception(reply.error);
        if (s != VKLLM_OK && s != VKLLM_ERR_CANCELLED) check(s, fn, "generating");
        const std::string message = s == VKLLM_OK ? "" : vkllm_last_error();
        reply.emit(reply.parser->finish(), true);
        c.messages.push_back(make_message(reply.message(), c.messages.size(), fn));
        if (result) {
            vkllm_conversation_result out{};
            out.struct_size = sizeof out;
            out.n_prompt = held;
            out.n_reused = reused;
            out.n_prefilled = fresh.size();
            out.n_generated = r.n_generated;
            out.stop_reason = r.stop_reason;
            out.n_tool_calls = reply.calls.size();
            out.prefill_ms = r.prefill_ms;
            out.decode_ms = r.decode_ms;
            out.seed = r.seed;
            out.grammar_progress = r.grammar_progress;
            vkllm::api::copy_struct(out, result);
        }
        if (s == VKLLM_ERR_CANCELLED) fail(s, "%s: %s", fn, message.c_str());
    });
}
