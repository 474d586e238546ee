#include "http_reply.h"

#include <chrono>

#include "openai_json.h"

namespace serve {

namespace {

const char *error_type(int status) {
    switch (status) {
        case 400:
        case 404:
        case 405:
        case 413:
        case 431:
            return status == 404 ? "not_found_error" : "invalid_request_error";
        case 401:
            return "authentication_error";
        case 429:
            return "rate_limit_error";
        default:
            return "server_error";
    }
}

}  // namespace

void send_json(httplib::Response &res, int status, const nlohmann::json &body) {
    res.status = status;
    res.set_content(dump(body), "application/json");
}

void send_error(httplib::Response &res, int status, const std::string &message,
                const std::string &param, const std::string &code) {
    send_json(res, status, error_body(message, error_type(status), param, code));
}

void send_request_error(httplib::Response &res, const RequestError &e) {
    send_error(res, 400, e.what(), e.param(), e.code());
}

std::shared_ptr<RequestHandle> submit(Engine &engine, GenerationRequest request,
                                      httplib::Response &res, const char *prompt_param) {
    std::shared_ptr<RequestHandle> handle;
    std::string message;
    switch (engine.submit(std::move(request), &handle, &message)) {
        case SubmitResult::Accepted:
            return handle;
        case SubmitResult::QueueFull:
            res.set_header("Retry-After", "1");
            send_error(res, 429, "the server is busy: " + message, "", "server_busy");
            return nullptr;
        case SubmitResult::TooLong:
            send_error(res, 400, message, prompt_param, "context_length_exceeded");
            return nullptr;
        case SubmitResult::Invalid:
            send_error(res, 400, message);
            return nullptr;
    }
    send_error(res, 500, "the engine refused the request: " + message);
    return nullptr;
}

void stream_events(httplib::Response &res, std::function<void(EventSink &)> produce) {
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    res.set_chunked_content_provider(
        "text/event-stream", [produce](size_t, httplib::DataSink &sink) {
            EventSink events;
            events.write = [&sink](const std::string &text) {
                return sink.is_writable() && sink.write(text.data(), text.size());
            };
            events.alive = [&sink] { return sink.is_writable(); };
            produce(events);
            sink.done();
            return true;
        });
}

void post_with_deadline(httplib::Server &server, const std::string &path, int timeout_s,
                        BodyHandler handler) {
    server.Post(path, [timeout_s, handler](const httplib::Request &req, httplib::Response &res,
                                           const httplib::ContentReader &reader) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
        std::string body;
        bool late = false;
        const bool whole = reader([&](const char *data, size_t length) {
            body.append(data, length);
            late = std::chrono::steady_clock::now() > deadline;
            return !late;
        });
        if (whole) {
            handler(req, body, res);
            return;
        }
        res.set_header("Connection", "close");
        if (late)
            send_error(res, 408,
                       "the body did not arrive within " + std::to_string(timeout_s) +
                           " seconds (--timeout)");
        else if (res.status != 413)  // a 413's message is the error handler's
            send_error(res, 400, "the body ended before its Content-Length");
    });
}

std::function<bool()> client_alive(const ServerContext &ctx, const httplib::Request &req) {
    ConnectionWatch *watch = ctx.connections;
    return [watch, addr = req.remote_addr, port = req.remote_port] {
        return !watch || !watch->peer_closed(addr, port);
    };
}

}  // namespace serve
