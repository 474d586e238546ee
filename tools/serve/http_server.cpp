#include "http_server.h"

#include <algorithm>
#include <string>

#include "auth.h"
#include "http_reply.h"
#include "routes.h"

namespace serve {

namespace {

struct Route {
    const char *path;
    const char *method;
};

const Route kRoutes[] = {
    {"/v1/chat/completions", "POST"},
    {"/v1/completions", "POST"},
    {"/tokenize", "POST"},
    {"/detokenize", "POST"},
    {"/v1/models", "GET"},
    {"/health", "GET"},
    {"/metrics", "GET"},
    {"/", "GET"},
};

// The route a request counts under: its path when it is a route, else "other", so /metrics
// has a bounded number of series whatever clients ask for.
std::string route_label(const std::string &path) {
    for (const Route &r : kRoutes)
        if (path == r.path) return path;
    return "other";
}

bool is_public(const std::string &path) {
    return path == "/" || path == "/health";
}

// The body of a refusal httplib made itself (it leaves the body empty).
void fill_error(const ServerContext &ctx, const httplib::Request &req, httplib::Response &res) {
    switch (res.status) {
        case 404:
            send_error(res, 404, "no route " + req.path);
            break;
        case 413:
            // httplib keeps form-encoded bodies (curl -d's default type) to 8 KiB.
            if (req.get_header_value("Content-Type")
                    .rfind("application/x-www-form-urlencoded", 0) == 0)
                send_error(res, 413,
                           "a form-encoded body is limited to 8192 bytes: send the JSON with "
                           "'Content-Type: application/json'");
            else
                send_error(res, 413,
                           "the body is larger than " + std::to_string(ctx.options.body_limit) +
                               " bytes (--body-limit)");
            break;
        case 414:
            send_error(res, 414, "the request's URI is too long");
            break;
        case 431:
            send_error(res, 431, "too many or too large headers");
            break;
        default:
            send_error(res, res.status,
                       res.status < 500 ? "the request is malformed" : "the server failed");
    }
}

void method_not_allowed(httplib::Server &server) {
    for (const Route &r : kRoutes) {
        const std::string allowed = r.method;
        auto refuse = [allowed](const httplib::Request &req, httplib::Response &res) {
            res.set_header("Allow", allowed);
            send_error(res, 405, req.method + " " + req.path + ": only " + allowed + " is allowed");
        };
        if (allowed == "POST") server.Get(r.path, refuse);
        if (allowed == "GET") server.Post(r.path, refuse);
        server.Put(r.path, refuse);
        server.Patch(r.path, refuse);
        server.Delete(r.path, refuse);
    }
}

}  // namespace

void configure_server(httplib::Server &server, ServerContext &ctx) {
    const Options &o = ctx.options;
    const uint32_t queue = o.queue ? o.queue : 4 * o.parallel;
    // A connection holds a thread while it is served (a stream, for its whole length); the
    // pool's own queue holds connections beyond it until a thread is free.
    const size_t threads = std::max<size_t>(64, size_t(o.parallel) + queue + 16);
    server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server.set_read_timeout(o.timeout_s, 0);
    server.set_write_timeout(o.timeout_s, 0);
    server.set_keep_alive_timeout(5);
    server.set_payload_max_length(o.body_limit);

    server.set_pre_routing_handler([&ctx](const httplib::Request &req, httplib::Response &res) {
        if (ctx.connections) ctx.connections->headers_done(req.remote_addr, req.remote_port);
        if (req.headers.size() > kMaxHeaders) {
            res.set_header("Connection", "close");
            send_error(res, 431,
                       "the request has " + std::to_string(req.headers.size()) +
                           " headers; at most " + std::to_string(kMaxHeaders) + " are read");
            return httplib::Server::HandlerResponse::Handled;
        }
        const std::string &key = ctx.options.api_key;
        if (!key.empty() && !is_public(req.path) &&
            !bearer_matches(req.get_header_value("Authorization"), key)) {
            res.set_header("WWW-Authenticate", "Bearer");
            res.set_header("Connection", "close");
            send_error(res, 401,
                       req.has_header("Authorization")
                           ? "the API key is wrong"
                           : "an API key is required: 'Authorization: Bearer KEY'",
                       "", "invalid_api_key");
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    server.set_error_handler(httplib::Server::HandlerWithResponse(
        [&ctx](const httplib::Request &req, httplib::Response &res) {
            if (res.body.empty()) fill_error(ctx, req, res);
            return httplib::Server::HandlerResponse::Handled;
        }));
    server.set_exception_handler(
        [](const httplib::Request &, httplib::Response &res, std::exception_ptr ep) {
            std::string what = "unknown";
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception &e) {
                what = e.what();
            } catch (...) {
            }
            send_error(res, 500, "the server failed: " + what);
        });
    server.set_logger([&ctx](const httplib::Request &req, const httplib::Response &res) {
        ctx.counters.count(route_label(req.path), res.status);
        if (ctx.connections) ctx.connections->response_done(req.remote_addr, req.remote_port);
    });

    add_chat_route(server, ctx);
    add_completions_route(server, ctx);
    add_misc_routes(server, ctx);
    method_not_allowed(server);
}

}  // namespace serve
