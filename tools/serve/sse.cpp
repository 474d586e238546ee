#include "sse.h"

#include "openai_json.h"

namespace serve {

const char kSseDone[] = "data: [DONE]\n\n";

std::string sse_event(const nlohmann::json &data) {
    return "data: " + dump(data) + "\n\n";
}

}  // namespace serve
