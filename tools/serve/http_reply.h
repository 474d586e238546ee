// Writing answers: JSON bodies, OpenAI's error objects with their status, the engine's
// refusals as HTTP statuses, and the event stream of a streamed answer.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "engine.h"
#include "request_parse.h"
#include "server_context.h"

namespace serve {

void send_json(httplib::Response &res, int status, const nlohmann::json &body);

// OpenAI's error object; the type follows from the status (invalid_request_error for 400, ...).
void send_error(httplib::Response &res, int status, const std::string &message,
                const std::string &param = "", const std::string &code = "");

void send_request_error(httplib::Response &res, const RequestError &e);

// Submits to the engine; on a refusal writes the answer (429 with Retry-After for a full queue,
// 400 for a request that cannot fit or run) and returns null.
// prompt_param names the prompt's field ("messages", "prompt") in a too-long refusal.
std::shared_ptr<RequestHandle> submit(Engine &engine, GenerationRequest request,
                                      httplib::Response &res, const char *prompt_param);

// Answers with server-sent events written by `produce`, which runs on the connection's thread
// after the headers went out. write() returns false once the client is gone; alive() tells the
// same without writing.
struct EventSink {
    std::function<bool(const std::string &)> write;
    std::function<bool()> alive;
};
void stream_events(httplib::Response &res, std::function<void(EventSink &)> produce);

// A POST route whose body must arrive whole within `timeout_s` of its headers: httplib's read
// timeout bounds each wait for bytes, so a client dribbling a byte at a time would hold a
// thread for ever. Past the deadline: 408; a body cut short: 400; over the body limit: 413
// (httplib's); each closes the connection. The handler gets the whole body.
using BodyHandler = std::function<void(const httplib::Request &req, const std::string &body,
                                       httplib::Response &res)>;
void post_with_deadline(httplib::Server &server, const std::string &path, int timeout_s,
                        BodyHandler handler);

// Whether the client of a request answered whole is still connected (ConnectionWatch): asked
// between waits, so that a client that gives up frees its slots as a stream's does.
std::function<bool()> client_alive(const ServerContext &ctx, const httplib::Request &req);

}  // namespace serve
