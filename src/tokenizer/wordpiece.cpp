#include "tokenizer/wordpiece.h"

#include <algorithm>

#include "common/error.h"
#include "tokenizer/bert_pretokenize.h"
#include "tokenizer/spm.h"
#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

namespace {

// BERT's max_input_chars_per_word: a longer word is one unknown token, never split.
constexpr size_t kMaxWordChars = 100;
const std::string_view kWordStart = "\xE2\x96\x81";  // U+2581

}  // namespace

WordPieceEncoder::WordPieceEncoder(const Vocab &vocab) : vocab_(vocab), unk_(vocab.unk) {
    if (unk_ < 0) unk_ = vocab_.find("[UNK]");
    if (unk_ < 0)
        fail(VKLLM_ERR_FORMAT,
             "the WordPiece vocabulary has no unknown token (tokenizer.ggml.unknown_token_id, or "
             "a token [UNK])");
    for (const std::string &t : vocab_.tokens)
        longest_token_ = std::max(longest_token_, t.size());
}

// Control tokens ([CLS], [SEP]) are never pieces of a word.
int32_t WordPieceEncoder::find_piece(std::string_view text) const {
    int32_t id = vocab_.find(text);
    if (id < 0) return -1;
    TokenType t = vocab_.type(id);
    return t == TokenType::Control || t == TokenType::Unknown ? -1 : id;
}

void WordPieceEncoder::encode_word(std::string_view word, std::vector<int32_t> &out) const {
    // Character boundaries, so that pieces never cut a character.
    std::vector<size_t> bounds{0};
    for (size_t pos = 0; pos < word.size();) {
        pos += utf8_decode(word, pos).len;
        bounds.push_back(pos);
        if (bounds.size() > kMaxWordChars + 1) {
            out.push_back(unk_);
            return;
        }
    }
    size_t first_id = out.size();
    std::string key;
    for (size_t start = 0; start + 1 < bounds.size();) {
        size_t end = bounds.size() - 1;
        for (; end > start; --end) {
            key.assign(start == 0 ? kWordStart : std::string_view());
            key.append(word.substr(bounds[start], bounds[end] - bounds[start]));
            if (key.size() > longest_token_) continue;
            int32_t id = find_piece(key);
            if (id >= 0) {
                out.push_back(id);
                break;
            }
        }
        if (end == start) {  // nothing covers the rest: the whole word is unknown
            out.resize(first_id);
            out.push_back(unk_);
            return;
        }
        start = end;
    }
}

void WordPieceEncoder::encode(std::string_view text, std::vector<int32_t> &out) const {
    for (const std::string &word : bert_words(text))
        encode_word(word, out);
}

std::string WordPieceEncoder::decode(int32_t id) const {
    return unescape_spaces(vocab_.tokens[size_t(id)]);
}

}  // namespace vkllm::tokenizer
