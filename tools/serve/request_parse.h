// Request bodies of the server's routes, read into what the engine and the routes need: JSON
// text -> checked values, or a RequestError naming the field at fault. Pure: no HTTP, no
// device, no model (the vocabulary size comes in Limits), so the fuzz target
// (fuzz/fuzz_serve_request.cpp) runs it alone.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine.h"

namespace serve {

// A request the server refuses with 400: `param` names the field ("messages[1].content",
// "temperature"; "" for the body as a whole), `code` OpenAI's error code where it has one.
class RequestError : public std::runtime_error {
  public:
    RequestError(const std::string &message, std::string param, std::string code = "")
        : std::runtime_error(message), param_(std::move(param)), code_(std::move(code)) {}
    const std::string &param() const { return param_; }
    const std::string &code() const { return code_; }

  private:
    std::string param_;
    std::string code_;
};

// Deepest nesting of arrays and objects a body may have.
constexpr int kMaxJsonDepth = 64;

// Parses a request body: nesting deeper than kMaxJsonDepth is refused before the parser sees
// it (a scan of the bytes), malformed JSON and invalid UTF-8 are refused, and the body must be
// an object.
nlohmann::json parse_body(const std::string &body);

// What the server's options and the model allow.
struct Limits {
    uint32_t max_tokens = 4096;  // --max-tokens-limit
    uint32_t max_n = 4;          // --parallel
    uint32_t n_vocab = 0;        // logit_bias keys and token ids must be below it
};

enum class ResponseFormat { Text, JsonObject, JsonSchema };

// Fields both completion routes share: sampling, stop, n, max_tokens, streaming.
struct CommonFields {
    GenerationRequest generation;  // everything but the prompt
    bool max_tokens_given = false;
    bool stream = false;
    bool include_usage = false;
};

// tool_choice: the model decides (auto; "none" gives the template no tools), or a call is
// forced: any of the tools ("required") or a named one.
enum class ToolChoice { Auto, Required, Named };

struct ChatRequest {
    CommonFields common;
    // The messages as a JSON array for vkllm_chat_render_json, content-part arrays joined
    // into one string.
    std::string messages_json;
    std::string tools_json;  // "" when no tools reach the template (none given, or "none")
    ToolChoice tool_choice = ToolChoice::Auto;
    std::string tool_name;  // ToolChoice::Named's function
    ResponseFormat format = ResponseFormat::Text;
    std::string schema_json;  // json_schema's schema
    bool logprobs = false;
    int32_t top_logprobs = 0;
};

ChatRequest parse_chat_request(const nlohmann::json &body, const Limits &limits);

struct CompletionRequest {
    CommonFields common;
    bool prompt_is_tokens = false;
    std::string prompt_text;
    std::vector<int32_t> prompt_tokens;
    bool echo = false;
    int32_t logprobs = -1;  // -1: none; 0 to 5 alternatives
};

CompletionRequest parse_completion_request(const nlohmann::json &body, const Limits &limits);

struct TokenizeRequest {
    std::string content;
    bool add_special = false;
    bool parse_special = true;
    bool with_pieces = false;
};

TokenizeRequest parse_tokenize_request(const nlohmann::json &body);

std::vector<int32_t> parse_detokenize_request(const nlohmann::json &body, const Limits &limits);

}  // namespace serve
