// `vkllm run --jsonl`: one JSON object per generated token, its log-probability and the most
// likely alternatives, on one line each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "vkllm.h"

namespace vkllm_tool {

// A JSON string of bytes that may not be UTF-8 (a token can be part of a character): valid
// UTF-8 sequences are kept, quotes, backslashes and control characters escaped, and each byte
// that does not begin a valid sequence becomes U+FFFD, as Python's errors="replace" decodes.
// The exact bytes go beside it (json_bytes).
std::string json_text(std::string_view bytes);
// The bytes as a JSON array of numbers: [104,105].
std::string json_bytes(std::string_view bytes);

// The line of one token: {"id":..,"text":..,"bytes":[..],"logprob":..,"top":[{"id":..,
// "text":..,"bytes":[..],"logprob":..},..]}, the text of each token its piece as the text
// stream writes it (control tokens without text). A log-probability that is not a finite
// number (JSON has none) is null.
std::string token_json(const vkllm_tokenizer *tok, int32_t token, float logprob,
                       const vkllm_token_logprob *top, size_t n_top);

}  // namespace vkllm_tool
