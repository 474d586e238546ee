// The httplib server's settings that make it safe to face clients: enough threads for every
// slot, queued request and some more; timeouts for slow clients; body and header limits; the
// API key; OpenAI's error objects for what httplib refuses itself; 405 for a known route asked
// with another method; the requests counted for /metrics.
#pragma once

#include <httplib.h>

#include "server_context.h"

namespace serve {

// The most headers a request may send (more: 431).
constexpr size_t kMaxHeaders = 100;

void configure_server(httplib::Server &server, ServerContext &ctx);

}  // namespace serve
