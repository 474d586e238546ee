// POST /v1/chat/completions: messages through the model's chat template, the reply split by
// its parser into content, reasoning_content and tool_calls, whole or streamed.
#include <memory>

#include "consume.h"
#include "http_reply.h"
#include "openai_json.h"
#include "prompt.h"
#include "reply_state.h"
#include "routes.h"
#include "sse.h"
#include "tool_choice.h"

namespace serve {

using nlohmann::json;

namespace {

// What one request's answer needs besides the engine's handle.
struct ChatAnswer {
    const ServerContext *ctx;
    std::shared_ptr<RequestHandle> handle;
    std::string id = new_id("chatcmpl-");
    long long created = unix_time();
    bool logprobs = false;
    bool include_usage = false;
    std::vector<ChoiceReply> replies;
    std::vector<std::string> finish;
    std::vector<json> logprob_lists;  // whole answers: each choice's logprobs.content

    // An answer dropped before its end (the client left before the stream began) frees its
    // slots; cancelling a finished request changes nothing.
    ~ChatAnswer() {
        if (handle) handle->cancel();
    }

    json tool_calls(const std::vector<ToolCall> &calls, size_t first_index, bool streamed) const {
        json out = json::array();
        for (size_t i = 0; i < calls.size(); ++i) {
            json c = {{"id", calls[i].id},
                      {"type", "function"},
                      {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
            if (streamed) c["index"] = first_index + i;
            out.push_back(c);
        }
        return out;
    }

    // The reason a choice ended: a reply that called tools ends with "tool_calls".
    std::string finish_reason(uint32_t i, const std::string &engine_reason) const {
        if (!replies[i].calls().empty() && engine_reason == "stop") return "tool_calls";
        return engine_reason.empty() ? "stop" : engine_reason;
    }

    json chunk(json choices) const {
        json c = {{"id", id},
                  {"object", "chat.completion.chunk"},
                  {"created", created},
                  {"model", ctx->model_id},
                  {"system_fingerprint", "vkllm"},
                  {"choices", std::move(choices)}};
        if (include_usage) c["usage"] = nullptr;
        return c;
    }

    json choice_chunk(uint32_t index, json delta, const json &lp, const json &reason) const {
        return chunk(json::array({{{"index", index},
                                   {"delta", std::move(delta)},
                                   {"logprobs", lp},
                                   {"finish_reason", reason}}}));
    }

    // The events of a batch of deltas; false when the client is gone.
    bool stream_deltas(std::vector<ChoiceDelta> &deltas, EventSink &sink) {
        for (ChoiceDelta &d : deltas) {
            ChoiceReply &reply = replies.at(d.index);
            const size_t calls_before = reply.calls().size();
            ReplyPiece piece = reply.push(d.text);
            if (d.finished) {
                ReplyPiece rest = reply.finish();
                piece.content += rest.content;
                piece.reasoning += rest.reasoning;
                piece.calls.insert(piece.calls.end(), rest.calls.begin(), rest.calls.end());
            }
            json lp = logprobs && !d.logprobs.empty()
                          ? json{{"content", chat_logprobs(ctx->tokenizer, d.logprobs)}}
                          : json();
            if (!piece.empty() || !lp.is_null()) {
                json delta = json::object();
                if (!piece.content.empty() || (piece.reasoning.empty() && piece.calls.empty()))
                    delta["content"] = piece.content;
                if (!piece.reasoning.empty()) delta["reasoning_content"] = piece.reasoning;
                if (!piece.calls.empty())
                    delta["tool_calls"] = tool_calls(piece.calls, calls_before, true);
                if (!sink.write(sse_event(choice_chunk(d.index, delta, lp, nullptr)))) return false;
            }
            if (d.finished &&
                !sink.write(sse_event(choice_chunk(d.index, json::object(), nullptr,
                                                   finish_reason(d.index, d.finish_reason)))))
                return false;
        }
        return true;
    }

    void stream(EventSink &sink) {
        for (uint32_t i = 0; i < replies.size(); ++i)
            if (!sink.write(sse_event(
                    choice_chunk(i, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr)))) {
                handle->cancel();
                return;
            }
        Outcome o = consume(*handle, sink.alive, [&](std::vector<ChoiceDelta> &deltas) {
            return stream_deltas(deltas, sink);
        });
        if (o == Outcome::ClientGone) return;
        if (o == Outcome::Failed) {
            sink.write(sse_event(error_body(handle->error(), "server_error")));
            return;
        }
        if (include_usage) {
            json last = chunk(json::array());
            last["usage"] = usage_json(handle->usage());
            if (!sink.write(sse_event(last))) return;
        }
        sink.write(kSseDone);
    }

    void whole(httplib::Response &res, const std::function<bool()> &alive) {
        Outcome o = consume(*handle, alive, [&](std::vector<ChoiceDelta> &deltas) {
            for (ChoiceDelta &d : deltas) {
                replies.at(d.index).push(d.text);
                if (d.finished) {
                    replies[d.index].finish();
                    finish[d.index] = d.finish_reason;
                }
                if (logprobs)
                    for (const json &t : chat_logprobs(ctx->tokenizer, d.logprobs))
                        logprob_lists[d.index].push_back(t);
            }
            return true;
        });
        if (o != Outcome::Done) {
            send_error(res, 500, "generation failed: " + handle->error());
            return;
        }
        json choices = json::array();
        for (uint32_t i = 0; i < replies.size(); ++i) {
            const ChoiceReply &r = replies[i];
            json message = {
                {"role", "assistant"},
                {"content",
                 r.content().empty() && !r.calls().empty() ? json() : json(r.content())}};
            if (!r.reasoning().empty()) message["reasoning_content"] = r.reasoning();
            if (!r.calls().empty()) message["tool_calls"] = tool_calls(r.calls(), 0, false);
            choices.push_back(
                {{"index", i},
                 {"message", message},
                 {"logprobs", logprobs ? json{{"content", logprob_lists[i]}} : json()},
                 {"finish_reason", finish_reason(i, finish[i])}});
        }
        send_json(res, 200,
                  {{"id", id},
                   {"object", "chat.completion"},
                   {"created", created},
                   {"model", ctx->model_id},
                   {"system_fingerprint", "vkllm"},
                   {"choices", choices},
                   {"usage", usage_json(handle->usage())}});
    }
};

void chat(const ServerContext &ctx, const httplib::Request &req, const std::string &body,
          httplib::Response &res) {
    ChatRequest request;
    ChatPrompt prompt;
    try {
        request = parse_chat_request(parse_body(body), ctx.limits());
        prompt = chat_prompt(ctx, request);
        request.common.generation.prompt = prompt.tokens;
        if (request.format != ResponseFormat::Text)
            request.common.generation.sampling.grammar = schema_grammar(ctx, request.schema_json);
        else if (request.tool_choice != ToolChoice::Auto)
            request.common.generation.sampling.grammar = tool_call_grammar(ctx, request);
        fit_to_context(ctx, request.common, "messages");
    } catch (const RequestError &e) {
        send_request_error(res, e);
        return;
    }
    const uint32_t n = request.common.generation.n_choices;
    auto answer = std::make_shared<ChatAnswer>();
    answer->ctx = &ctx;
    answer->logprobs = request.logprobs;
    answer->include_usage = request.common.include_usage;
    for (uint32_t i = 0; i < n; ++i)
        answer->replies.emplace_back(ctx.reply_format, prompt.opens_reasoning);
    answer->finish.resize(n);
    answer->logprob_lists.assign(n, json::array());
    answer->handle = submit(*ctx.engine, std::move(request.common.generation), res, "messages");
    if (!answer->handle) return;
    if (request.common.stream)
        stream_events(res, [answer](EventSink &sink) { answer->stream(sink); });
    else
        answer->whole(res, client_alive(ctx, req));
}

}  // namespace

void add_chat_route(httplib::Server &server, ServerContext &ctx) {
    post_with_deadline(server, "/v1/chat/completions", ctx.options.timeout_s,
                       [&ctx](const httplib::Request &req, const std::string &body,
                              httplib::Response &res) { chat(ctx, req, body, res); });
}

}  // namespace serve
