// The one loop that reads a request's results, shared by streamed and whole answers: it waits
// on the handle and hands each batch of deltas on, and cancels the request when the client is
// gone, so its slots come back within a step.
#pragma once

#include <functional>
#include <vector>

#include "engine.h"

namespace serve {

enum class Outcome { Done, ClientGone, Failed };

// client_alive is asked between waits (a streaming client's socket); on_deltas returns false
// when it could not pass them on (a write failed). Failed: handle.error() says why.
Outcome consume(RequestHandle &handle, const std::function<bool()> &client_alive,
                const std::function<bool(std::vector<ChoiceDelta> &)> &on_deltas);

}  // namespace serve
