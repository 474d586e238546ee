#include "token_json.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace vkllm_tool {

namespace {

// Length of the valid UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
size_t utf8_length(std::string_view s) {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
    unsigned char b = byte(0);
    if (b < 0x80) return 1;
    size_t n = b >= 0xC2 && b <= 0xDF   ? 2
               : b >= 0xE0 && b <= 0xEF ? 3
               : b >= 0xF0 && b <= 0xF4 ? 4
                                        : 0;
    if (n == 0 || s.size() < n) return 0;
    // The second byte's range depends on the first; the rest are plain continuation bytes.
    unsigned char lo = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
    if (byte(1) < lo || byte(1) > hi) return 0;
    for (size_t i = 2; i < n; ++i)
        if ((byte(i) & 0xC0) != 0x80) return 0;
    return n;
}

std::string piece(const vkllm_tokenizer *tok, int32_t token) {
    size_t len = 0;
    vkllm_status s = vkllm_tokenizer_get_piece(tok, token, 0, nullptr, 0, &len);
    if (s != VKLLM_OK && s != VKLLM_ERR_BUFFER_TOO_SMALL) return "";
    std::vector<char> buf(len + 1);
    if (vkllm_tokenizer_get_piece(tok, token, 0, buf.data(), buf.size(), &len) != VKLLM_OK)
        return "";
    return std::string(buf.data(), len);
}

std::string json_number(float v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(v));
    return buf;
}

}  // namespace

std::string json_text(std::string_view bytes) {
    std::string out = "\"";
    for (size_t i = 0; i < bytes.size();) {
        size_t n = utf8_length(bytes.substr(i));
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
            continue;
        }
        char c = bytes[i];
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (n == 1 && static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            out += buf;
        } else {
            out.append(bytes.substr(i, n));
        }
        i += n;
    }
    return out + "\"";
}

std::string json_bytes(std::string_view bytes) {
    std::string out = "[";
    for (size_t i = 0; i < bytes.size(); ++i)
        out += (i ? "," : "") + std::to_string(static_cast<unsigned char>(bytes[i]));
    return out + "]";
}

std::string token_json(const vkllm_tokenizer *tok, int32_t token, float logprob,
                       const vkllm_token_logprob *top, size_t n_top) {
    auto fields = [&](int32_t id, float lp) {
        std::string p = piece(tok, id);
        return "\"id\":" + std::to_string(id) + ",\"text\":" + json_text(p) +
               ",\"bytes\":" + json_bytes(p) + ",\"logprob\":" + json_number(lp);
    };
    std::string out = "{" + fields(token, logprob) + ",\"top\":[";
    for (size_t i = 0; i < n_top; ++i)
        out += (i ? ",{" : "{") + fields(top[i].token, top[i].logprob) + "}";
    return out + "]}";
}

}  // namespace vkllm_tool
