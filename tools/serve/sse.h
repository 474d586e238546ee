// Server-sent events as OpenAI streams them: one JSON object per event, then [DONE].
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace serve {

// "data: JSON\n\n".
std::string sse_event(const nlohmann::json &data);

// The stream's last event.
extern const char kSseDone[];

}  // namespace serve
