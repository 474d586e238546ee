// OpenAI's JSON shapes the server answers with: error objects, usage, logprobs in the chat
// shape and in the legacy completions shape, tool calls. Text the model wrote may hold invalid
// UTF-8 (a token is not always a whole character): dump() writes U+FFFD for it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine.h"
#include "vkllm.h"

namespace serve {

// JSON text, invalid UTF-8 replaced by U+FFFD.
std::string dump(const nlohmann::json &j);

// {"error": {"message", "type", "param", "code"}}; an empty param or code is null.
nlohmann::json error_body(const std::string &message, const std::string &type,
                          const std::string &param = "", const std::string &code = "");

// A fresh id: prefix followed by 24 random hex digits.
std::string new_id(const char *prefix);

// Seconds since 1970.
long long unix_time();

nlohmann::json usage_json(const Usage &usage);

// Chat's logprobs.content entries: token, logprob, bytes, top_logprobs.
nlohmann::json chat_logprobs(const vkllm_tokenizer *tokenizer,
                             const std::vector<TokenLogprob> &tokens);

// The legacy completions shape, appended to `out` ({"tokens", "token_logprobs",
// "top_logprobs", "text_offset"}); `offset` is the text offset of the first token, advanced.
void append_legacy_logprobs(nlohmann::json &out, const vkllm_tokenizer *tokenizer,
                            const std::vector<TokenLogprob> &tokens, size_t &offset);

// An echoed prompt's first token, which has no logprob (null).
void append_legacy_unscored(nlohmann::json &out, const std::string &piece, size_t &offset);

nlohmann::json empty_legacy_logprobs();

}  // namespace serve
