// /metrics: Prometheus' text exposition format (version 0.0.4) of the engine's counters and
// of the HTTP requests answered, by route and status.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "engine.h"

namespace serve {

// Requests answered, by route (the pattern, not the path asked for, so a client cannot grow
// the table: unknown paths count as "other") and status. Thread-safe.
class HttpCounters {
  public:
    void count(const std::string &route, int status);
    std::map<std::pair<std::string, int>, uint64_t> snapshot() const;

  private:
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, uint64_t> counts_;
};

std::string metrics_text(const EngineStats &stats, const HttpCounters &http);

}  // namespace serve
