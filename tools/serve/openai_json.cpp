#include "openai_json.h"

#include <chrono>
#include <cmath>
#include <random>

#include "logprobs.h"
#include "utf8.h"

namespace serve {

using nlohmann::json;

namespace {

json logprob_value(float v) {
    // A banned token's -inf has no JSON number; OpenAI writes -9999 for "impossible".
    return std::isfinite(v) ? json(v) : json(-9999.0);
}

json byte_list(const std::string &s) {
    json out = json::array();
    for (unsigned char c : s)
        out.push_back(int(c));
    return out;
}

// A token's text as a JSON string: a token that is part of a character gets U+FFFD.
json text(const std::string &s) {
    return json(to_valid_utf8(s));
}

}  // namespace

std::string dump(const json &j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json error_body(const std::string &message, const std::string &type, const std::string &param,
                const std::string &code) {
    json e = {{"message", message},
              {"type", type},
              {"param", param.empty() ? json() : json(param)},
              {"code", code.empty() ? json() : json(code)}};
    return {{"error", e}};
}

std::string new_id(const char *prefix) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char hex[] = "0123456789abcdef";
    std::string id = prefix;
    for (int i = 0; i < 24; ++i)
        id += hex[rng() & 15];
    return id;
}

long long unix_time() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

json usage_json(const Usage &u) {
    return {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json chat_logprobs(const vkllm_tokenizer *tokenizer, const std::vector<TokenLogprob> &tokens) {
    json out = json::array();
    for (const TokenLogprob &t : tokens) {
        json top = json::array();
        for (const TopLogprob &alt : t.top) {
            std::string piece = token_piece(tokenizer, alt.token);
            top.push_back({{"token", text(piece)},
                           {"logprob", logprob_value(alt.logprob)},
                           {"bytes", byte_list(piece)}});
        }
        out.push_back({{"token", text(t.bytes)},
                       {"logprob", logprob_value(t.logprob)},
                       {"bytes", byte_list(t.bytes)},
                       {"top_logprobs", top}});
    }
    return out;
}

json empty_legacy_logprobs() {
    return {{"tokens", json::array()},
            {"token_logprobs", json::array()},
            {"top_logprobs", json::array()},
            {"text_offset", json::array()}};
}

void append_legacy_unscored(json &out, const std::string &piece, size_t &offset) {
    out["tokens"].push_back(text(piece));
    out["token_logprobs"].push_back(nullptr);
    out["top_logprobs"].push_back(nullptr);
    out["text_offset"].push_back(offset);
    offset += piece.size();
}

void append_legacy_logprobs(json &out, const vkllm_tokenizer *tokenizer,
                            const std::vector<TokenLogprob> &tokens, size_t &offset) {
    for (const TokenLogprob &t : tokens) {
        json top = json::object();
        for (const TopLogprob &alt : t.top)
            top[to_valid_utf8(token_piece(tokenizer, alt.token))] = logprob_value(alt.logprob);
        out["tokens"].push_back(text(t.bytes));
        out["token_logprobs"].push_back(logprob_value(t.logprob));
        out["top_logprobs"].push_back(top);
        out["text_offset"].push_back(offset);
        offset += t.bytes.size();
    }
}

}  // namespace serve
