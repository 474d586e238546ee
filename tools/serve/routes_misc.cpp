// The small routes: /v1/models, /health, /metrics, llama-server's /tokenize and /detokenize,
// and the chat page at /.
#include "http_reply.h"
#include "logprobs.h"
#include "openai_json.h"
#include "page_html.h"
#include "prompt.h"
#include "routes.h"
#include "utf8.h"

namespace serve {

using nlohmann::json;

namespace {

void models(const ServerContext &ctx, httplib::Response &res) {
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    json meta = {{"n_ctx", ctx.engine->context_size()}, {"n_vocab", ctx.n_vocab}};
    if (vkllm_model_get_info(ctx.model, &mi) == VKLLM_OK) {
        meta["architecture"] = mi.architecture;
        meta["n_ctx_train"] = mi.n_ctx_train;
    }
    static const long long created = unix_time();
    send_json(res, 200,
              {{"object", "list"},
               {"data", json::array({{{"id", ctx.model_id},
                                      {"object", "model"},
                                      {"created", created},
                                      {"owned_by", "vkllm"},
                                      {"meta", meta}}})}});
}

void tokenize_route(const ServerContext &ctx, const std::string &body, httplib::Response &res) {
    TokenizeRequest r;
    try {
        r = parse_tokenize_request(parse_body(body));
    } catch (const RequestError &e) {
        send_request_error(res, e);
        return;
    }
    uint32_t flags = (r.add_special ? VKLLM_TOKENIZE_ADD_SPECIAL : 0) |
                     (r.parse_special ? VKLLM_TOKENIZE_PARSE_SPECIAL : 0);
    json tokens = json::array();
    for (int32_t id : tokenize(ctx.tokenizer, r.content, flags)) {
        if (!r.with_pieces) {
            tokens.push_back(id);
            continue;
        }
        // As llama-server: the piece as a string when it is whole UTF-8, else its bytes.
        std::string piece = token_piece(ctx.tokenizer, id);
        json p = json::array();
        if (invalid_utf8_at(piece) == std::string::npos)
            p = piece;
        else
            for (unsigned char c : piece)
                p.push_back(int(c));
        tokens.push_back({{"id", id}, {"piece", p}});
    }
    send_json(res, 200, {{"tokens", tokens}});
}

void detokenize_route(const ServerContext &ctx, const std::string &body, httplib::Response &res) {
    std::vector<int32_t> tokens;
    try {
        tokens = parse_detokenize_request(parse_body(body), ctx.limits());
    } catch (const RequestError &e) {
        send_request_error(res, e);
        return;
    }
    send_json(res, 200, {{"content", detokenize(ctx.tokenizer, tokens, true)}});
}

}  // namespace

void add_misc_routes(httplib::Server &server, ServerContext &ctx) {
    server.Get("/v1/models",
               [&ctx](const httplib::Request &, httplib::Response &res) { models(ctx, res); });
    server.Get("/health", [](const httplib::Request &, httplib::Response &res) {
        send_json(res, 200, {{"status", "ok"}});
    });
    server.Get("/metrics", [&ctx](const httplib::Request &, httplib::Response &res) {
        res.set_content(metrics_text(ctx.engine->stats(), ctx.counters),
                        "text/plain; version=0.0.4");
    });
    post_with_deadline(server, "/tokenize", ctx.options.timeout_s,
                       [&ctx](const httplib::Request &, const std::string &body,
                              httplib::Response &res) { tokenize_route(ctx, body, res); });
    post_with_deadline(server, "/detokenize", ctx.options.timeout_s,
                       [&ctx](const httplib::Request &, const std::string &body,
                              httplib::Response &res) { detokenize_route(ctx, body, res); });
    server.Get("/", [](const httplib::Request &, httplib::Response &res) {
        // The page's script and style are inline: nothing else may run in it.
        res.set_header("Content-Security-Policy",
                       "default-src 'none'; script-src 'unsafe-inline'; style-src "
                       "'unsafe-inline'; connect-src 'self'");
        res.set_content(kPageHtml, "text/html; charset=utf-8");
    });
}

}  // namespace serve
