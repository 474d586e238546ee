// vkllm-serve's request parsing (tools/serve/request_parse.h) on arbitrary bodies. The first
// byte picks the route (c: chat, p: completions, t: tokenize, d: detokenize; others by their
// value), the rest is the body. Only RequestError may leave the parser, and what it accepts
// keeps the limits the engine relies on: a difference traps.
#include <cmath>
#include <string>

#include "request_parse.h"

namespace {

const serve::Limits kLimits{512, 4, 1000};

void check(bool ok) {
    if (!ok) __builtin_trap();
}

void check_common(const serve::CommonFields &c) {
    const serve::GenerationRequest &g = c.generation;
    check(g.n_choices >= 1 && g.n_choices <= kLimits.max_n);
    check(g.max_tokens <= kLimits.max_tokens);
    check(g.stop.size() <= 4);
    for (const std::string &s : g.stop)
        check(!s.empty());
    const serve::Sampling &s = g.sampling;
    check(s.temperature >= 0 && s.temperature <= 2);
    check(s.top_p >= 0 && s.top_p <= 1);
    check(std::fabs(s.presence_penalty) <= 2 && std::fabs(s.frequency_penalty) <= 2);
    for (const vkllm_logit_bias &b : s.logit_bias) {
        check(b.token >= 0 && uint32_t(b.token) < kLimits.n_vocab);
        check((std::isinf(b.bias) && b.bias < 0) || std::fabs(b.bias) <= 100);
    }
    check(g.top_logprobs >= -1 && g.top_logprobs <= VKLLM_MAX_TOP_LOGPROBS);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const char c = char(data[0]);
    const int route = c == 'c' ? 0 : c == 'p' ? 1 : c == 't' ? 2 : c == 'd' ? 3 : data[0] % 4;
    const std::string body(reinterpret_cast<const char *>(data) + 1, size - 1);
    try {
        nlohmann::json j = serve::parse_body(body);
        check(j.is_object());
        if (route == 1) {
            serve::CompletionRequest r = serve::parse_completion_request(j, kLimits);
            check_common(r.common);
            check(!r.prompt_is_tokens || !r.prompt_tokens.empty());
            for (int32_t t : r.prompt_tokens)
                check(t >= 0 && uint32_t(t) < kLimits.n_vocab);
            check(r.logprobs >= -1 && r.logprobs <= 5);
        } else if (route == 2) {
            serve::parse_tokenize_request(j);
        } else if (route == 3) {
            for (int32_t t : serve::parse_detokenize_request(j, kLimits))
                check(t >= 0 && uint32_t(t) < kLimits.n_vocab);
        } else {
            serve::ChatRequest r = serve::parse_chat_request(j, kLimits);
            check_common(r.common);
            // The template gets a non-empty array of messages whose content is text or null.
            nlohmann::json messages = nlohmann::json::parse(r.messages_json);
            check(messages.is_array() && !messages.empty());
            for (const nlohmann::json &m : messages) {
                auto content = m.find("content");
                check(content == m.end() || content->is_string() || content->is_null());
            }
            if (!r.tools_json.empty()) check(nlohmann::json::parse(r.tools_json).is_array());
            if (r.format != serve::ResponseFormat::Text)
                check(nlohmann::json::parse(r.schema_json).is_object());
        }
    } catch (const serve::RequestError &) {
    }
    return 0;
}
