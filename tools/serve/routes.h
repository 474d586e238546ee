// The server's routes, each file adding its own to the httplib server.
#pragma once

#include <httplib.h>

#include "server_context.h"

namespace serve {

void add_chat_route(httplib::Server &server, ServerContext &ctx);         // routes_chat.cpp
void add_completions_route(httplib::Server &server, ServerContext &ctx);  // routes_completions.cpp
// /v1/models, /health, /metrics, /tokenize, /detokenize and the page at / (routes_misc.cpp).
void add_misc_routes(httplib::Server &server, ServerContext &ctx);

}  // namespace serve
