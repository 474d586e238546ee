#include "metrics_text.h"

#include <cstdio>
#include <cstdlib>

namespace serve {

namespace {

// The shortest text that reads back as v (bucket bounds read "0.1", not 0.1's 17 digits).
std::string number(double v) {
    char buf[32];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

void metric(std::string &out, const char *name, const char *type, const char *help, double value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
           name + " " + number(value) + "\n";
}

void histogram(std::string &out, const char *name, const char *help, const Histogram &h) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds.size() && i < h.counts.size(); ++i) {
        cumulative += h.counts[i];
        out += std::string(name) + "_bucket{le=\"" + number(h.bounds[i]) + "\"} " +
               std::to_string(cumulative) + "\n";
    }
    out += std::string(name) + "_bucket{le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += std::string(name) + "_sum " + number(h.sum) + "\n";
    out += std::string(name) + "_count " + std::to_string(h.count) + "\n";
}

}  // namespace

void HttpCounters::count(const std::string &route, int status) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counts_[{route, status}];
}

std::map<std::pair<std::string, int>, uint64_t> HttpCounters::snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counts_;
}

std::string metrics_text(const EngineStats &s, const HttpCounters &http) {
    std::string out;
    out +=
        "# HELP vkllm_http_requests_total HTTP requests answered, by route and status.\n"
        "# TYPE vkllm_http_requests_total counter\n";
    for (const auto &[key, n] : http.snapshot())
        out += "vkllm_http_requests_total{route=\"" + key.first + "\",status=\"" +
               std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
    metric(out, "vkllm_requests_started_total", "counter",
           "Generation requests admitted to a slot.", double(s.requests_started));
    metric(out, "vkllm_requests_finished_total", "counter", "Generation requests completed.",
           double(s.requests_finished));
    metric(out, "vkllm_requests_cancelled_total", "counter",
           "Generation requests cancelled (the client went away).", double(s.requests_cancelled));
    metric(out, "vkllm_prompt_tokens_total", "counter", "Prompt tokens of admitted requests.",
           double(s.prompt_tokens));
    metric(out, "vkllm_prefilled_tokens_total", "counter",
           "Prompt tokens prefilled (the rest came from a slot's cache).",
           double(s.prefilled_tokens));
    metric(out, "vkllm_generated_tokens_total", "counter", "Tokens generated.",
           double(s.generated_tokens));
    metric(out, "vkllm_queue_length", "gauge", "Requests waiting for a slot.",
           double(s.queue_length));
    metric(out, "vkllm_slots_busy", "gauge", "Slots decoding a sequence.", double(s.slots_busy));
    metric(out, "vkllm_slots_total", "gauge", "Slots (--parallel).", double(s.slots_total));
    histogram(out, "vkllm_time_to_first_token_seconds",
              "Seconds from a request's arrival to its first generated token.",
              s.time_to_first_token);
    histogram(out, "vkllm_time_per_output_token_seconds",
              "Seconds between consecutive generated tokens of a choice.", s.time_per_token);
    return out;
}

}  // namespace serve
