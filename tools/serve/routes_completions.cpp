// POST /v1/completions: a text or token-id prompt continued as it is, with echo and the legacy
// logprobs shape, whole or streamed.
#include <memory>

#include "consume.h"
#include "http_reply.h"
#include "logprobs.h"
#include "openai_json.h"
#include "prompt.h"
#include "routes.h"
#include "sse.h"

namespace serve {

using nlohmann::json;

namespace {

struct CompletionAnswer {
    const ServerContext *ctx;
    std::shared_ptr<RequestHandle> handle;
    std::string id = new_id("cmpl-");
    long long created = unix_time();
    std::string prompt_text;
    int32_t first_prompt_token = -1;
    bool echo = false;
    int32_t logprobs = -1;
    bool include_usage = false;
    std::vector<std::string> text;
    std::vector<std::string> finish;
    std::vector<json> lp;        // each choice's legacy logprobs object
    std::vector<size_t> offset;  // each choice's text offset so far
    bool echoed = false;

    ~CompletionAnswer() {
        if (handle) handle->cancel();
    }

    json chunk(json choices) const {
        json c = {{"id", id},
                  {"object", "text_completion"},
                  {"created", created},
                  {"model", ctx->model_id},
                  {"system_fingerprint", "vkllm"},
                  {"choices", std::move(choices)}};
        if (include_usage) c["usage"] = nullptr;
        return c;
    }

    // The echoed prompt starts every choice; with logprobs its tokens' logprobs come first
    // (the engine fills them before the first delta).
    void add_echo(uint32_t i) {
        text[i] = prompt_text;
        if (logprobs < 0) return;
        offset[i] = 0;
        append_legacy_unscored(lp[i], token_piece(ctx->tokenizer, first_prompt_token), offset[i]);
        append_legacy_logprobs(lp[i], ctx->tokenizer, handle->prompt_logprobs(), offset[i]);
        offset[i] = prompt_text.size();
    }

    void reset_choices(size_t n) {
        text.assign(n, "");
        finish.assign(n, "");
        lp.assign(n, empty_legacy_logprobs());
        offset.assign(n, prompt_text.size());
    }

    void add_delta(const ChoiceDelta &d) {
        text[d.index] += d.text;
        if (logprobs >= 0)
            append_legacy_logprobs(lp[d.index], ctx->tokenizer, d.logprobs, offset[d.index]);
        if (d.finished) finish[d.index] = d.finish_reason.empty() ? "stop" : d.finish_reason;
    }

    json choice(uint32_t i, const json &reason) const {
        return {{"index", i},
                {"text", text[i]},
                {"logprobs", logprobs >= 0 ? lp[i] : json()},
                {"finish_reason", reason}};
    }

    // Streams what accumulated for each choice since the last call, then clears it.
    bool flush(EventSink &sink, const std::vector<ChoiceDelta> *deltas) {
        std::vector<bool> touched(text.size(), deltas == nullptr);
        if (deltas)
            for (const ChoiceDelta &d : *deltas)
                touched[d.index] = true;
        for (uint32_t i = 0; i < text.size(); ++i) {
            if (!touched[i]) continue;
            json reason = finish[i].empty() ? json() : json(finish[i]);
            if (!text[i].empty() || !reason.is_null())
                if (!sink.write(sse_event(chunk(json::array({choice(i, reason)}))))) return false;
            text[i].clear();
            finish[i].clear();
            lp[i] = empty_legacy_logprobs();
        }
        return true;
    }

    void stream(EventSink &sink) {
        auto echo_once = [&] {
            if (echoed || !echo) return;
            echoed = true;
            for (uint32_t i = 0; i < text.size(); ++i)
                add_echo(i);
        };
        Outcome o = consume(*handle, sink.alive, [&](std::vector<ChoiceDelta> &deltas) {
            if (echo && !echoed) {
                echo_once();
                if (!flush(sink, nullptr)) return false;
            }
            for (const ChoiceDelta &d : deltas)
                add_delta(d);
            return flush(sink, &deltas);
        });
        if (o == Outcome::ClientGone) return;
        if (o == Outcome::Failed) {
            sink.write(sse_event(error_body(handle->error(), "server_error")));
            return;
        }
        if (echo && !echoed) {
            echo_once();
            if (!flush(sink, nullptr)) return;
        }
        if (include_usage) {
            json last = chunk(json::array());
            last["usage"] = usage_json(handle->usage());
            if (!sink.write(sse_event(last))) return;
        }
        sink.write(kSseDone);
    }

    void whole(httplib::Response &res, const std::function<bool()> &alive) {
        bool started = false;
        Outcome o = consume(*handle, alive, [&](std::vector<ChoiceDelta> &deltas) {
            if (!started && echo)
                for (uint32_t i = 0; i < text.size(); ++i)
                    add_echo(i);
            started = true;
            for (const ChoiceDelta &d : deltas)
                add_delta(d);
            return true;
        });
        if (o != Outcome::Done) {
            send_error(res, 500, "generation failed: " + handle->error());
            return;
        }
        if (!started && echo)
            for (uint32_t i = 0; i < text.size(); ++i)
                add_echo(i);
        json choices = json::array();
        for (uint32_t i = 0; i < text.size(); ++i)
            choices.push_back(choice(i, finish[i].empty() ? "stop" : finish[i]));
        json body = chunk(choices);
        body.erase("usage");
        body["usage"] = usage_json(handle->usage());
        send_json(res, 200, body);
    }
};

void complete(const ServerContext &ctx, const httplib::Request &req, const std::string &body,
              httplib::Response &res) {
    CompletionRequest request;
    auto answer = std::make_shared<CompletionAnswer>();
    try {
        request = parse_completion_request(parse_body(body), ctx.limits());
        request.common.generation.prompt = completion_prompt(ctx, request, &answer->prompt_text);
        fit_to_context(ctx, request.common, "prompt");
    } catch (const RequestError &e) {
        send_request_error(res, e);
        return;
    }
    answer->ctx = &ctx;
    answer->first_prompt_token = request.common.generation.prompt[0];
    answer->echo = request.echo;
    answer->logprobs = request.logprobs;
    answer->include_usage = request.common.include_usage;
    answer->reset_choices(request.common.generation.n_choices);
    answer->handle = submit(*ctx.engine, std::move(request.common.generation), res, "prompt");
    if (!answer->handle) return;
    if (request.common.stream)
        stream_events(res, [answer](EventSink &sink) { answer->stream(sink); });
    else
        answer->whole(res, client_alive(ctx, req));
}

}  // namespace

void add_completions_route(httplib::Server &server, ServerContext &ctx) {
    post_with_deadline(server, "/v1/completions", ctx.options.timeout_s,
                       [&ctx](const httplib::Request &req, const std::string &body,
                              httplib::Response &res) { complete(ctx, req, body, res); });
}

}  // namespace serve
