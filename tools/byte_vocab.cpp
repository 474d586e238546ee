#include "byte_vocab.h"

#include <string>
#include <vector>

namespace vkllm_tool {

namespace {

std::string utf8(uint32_t cp) {
    std::string s;
    if (cp < 0x80) {
        s += char(cp);
    } else if (cp < 0x800) {
        s += char(0xC0 | (cp >> 6));
        s += char(0x80 | (cp & 0x3F));
    } else {
        s += char(0xE0 | (cp >> 12));
        s += char(0x80 | ((cp >> 6) & 0x3F));
        s += char(0x80 | (cp & 0x3F));
    }
    return s;
}

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the others are
// moved, in byte order, to U+0100 and up, so every token is printable text.
std::vector<std::string> byte_tokens() {
    std::vector<std::string> tokens(256);
    uint32_t moved = 0;
    for (uint32_t b = 0; b < 256; ++b) {
        bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
        tokens[b] = utf8(printable ? b : 256 + moved++);
    }
    return tokens;
}

constexpr int32_t kNormal = 1, kControl = 3, kUnused = 5;  // llama.cpp's token types

}  // namespace

size_t write_byte_vocab(const VocabStyle &style, size_t n_vocab, vkllm::format::GgufWriter &w) {
    std::vector<std::string> tokens = byte_tokens();
    // "Ġ" is the space byte: the commonest English merges, ending in " the".
    const std::vector<std::string> merges = {"Ġ t", "h e", "i n", "Ġ a", "e r", "Ġt he"};
    for (const std::string &m : merges) {
        std::string joined = m;
        joined.erase(m.find(' '), 1);
        tokens.push_back(joined);
    }
    std::vector<int32_t> types(tokens.size(), kNormal);
    const size_t first_control = tokens.size();
    for (const char *c : style.control) {
        tokens.push_back(c);
        types.push_back(kControl);
    }
    while (tokens.size() < n_vocab) {
        tokens.push_back("<|unused_" + std::to_string(tokens.size()) + "|>");
        types.push_back(kUnused);
    }
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", style.pre);
    w.set_string_array("tokenizer.ggml.tokens", tokens);
    w.set_array("tokenizer.ggml.token_type", vkllm::format::ValueType::I32, types.data(),
                types.size());
    w.set_string_array("tokenizer.ggml.merges", merges);
    if (style.bos >= 0)
        w.set_u32("tokenizer.ggml.bos_token_id", uint32_t(first_control + style.bos));
    if (style.eos >= 0)
        w.set_u32("tokenizer.ggml.eos_token_id", uint32_t(first_control + style.eos));
    if (style.pad >= 0)
        w.set_u32("tokenizer.ggml.padding_token_id", uint32_t(first_control + style.pad));
    if (style.add_bos >= 0) w.set_bool("tokenizer.ggml.add_bos_token", style.add_bos != 0);
    return tokens.size();
}

}  // namespace vkllm_tool
