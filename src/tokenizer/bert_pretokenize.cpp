#include "tokenizer/bert_pretokenize.h"

#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

namespace {

// The CJK blocks BERT isolates (the Hugging Face tokenizers' ranges, 0x2B920 included). Hangul,
// kana and fullwidth forms are not among them: they stay inside their words.
bool is_cjk_ideograph(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_space(uint32_t cp) {
    return cp == '\t' || cp == '\n' || cp == '\r' || is_whitespace(cp);
}

// Tab, newline and carriage return are controls that BERT keeps, as whitespace.
bool is_dropped(uint32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return false;
    return cp == 0 || cp == kReplacementChar || is_control_or_format(cp);
}

// ASCII symbols count as punctuation too ("$", "+", "^", "`"), as in BERT's _is_punctuation.
bool is_punctuation(uint32_t cp) {
    if (cp < 0x80)
        return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) ||
               (cp >= 0x5B && cp <= 0x60) || (cp >= 0x7B && cp <= 0x7E);
    Category c = category(cp);
    return c >= Category::Pc && c <= Category::Po;
}

}  // namespace

std::vector<std::string> bert_words(std::string_view text) {
    // The normalizer's steps in its order: clean, space out CJK, NFD, drop Mn, lowercase.
    std::vector<uint32_t> cleaned;
    cleaned.reserve(text.size());
    size_t pos = 0;
    uint32_t cp;
    while (utf8_next(text, pos, cp)) {
        if (is_dropped(cp)) continue;
        if (is_space(cp)) {
            cleaned.push_back(' ');
        } else if (is_cjk_ideograph(cp)) {
            cleaned.push_back(' ');
            cleaned.push_back(cp);
            cleaned.push_back(' ');
        } else {
            cleaned.push_back(cp);
        }
    }
    std::vector<uint32_t> normalized;
    normalized.reserve(cleaned.size());
    for (uint32_t c : nfd(cleaned))
        if (category(c) != Category::Mn) append_lowercase(c, normalized);

    std::vector<std::string> words;
    bool in_word = false;
    for (uint32_t c : normalized) {
        if (is_space(c)) {
            in_word = false;
        } else if (is_punctuation(c)) {
            words.emplace_back();
            utf8_append(words.back(), c);
            in_word = false;
        } else {
            if (!in_word) words.emplace_back();
            utf8_append(words.back(), c);
            in_word = true;
        }
    }
    return words;
}

}  // namespace vkllm::tokenizer
