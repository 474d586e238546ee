// The engine's latency histograms (Prometheus buckets, serve::Histogram in engine.h).
#pragma once

#include <vector>

#include "engine.h"

namespace serve {

Histogram make_histogram(std::vector<double> bounds);
void observe(Histogram &h, double value);

// Seconds from a request's submission to its first token: 5 ms to a minute.
Histogram time_to_first_token_histogram();
// Seconds between two tokens of a choice: 1 ms to 10 s.
Histogram time_per_token_histogram();

}  // namespace serve
