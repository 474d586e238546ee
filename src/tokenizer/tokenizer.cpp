#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "common/error.h"
#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

namespace {

// Length of the incomplete UTF-8 character at the end of s (0 when s ends on a boundary or
// with bytes that can never complete a character, which are then passed on as they are).
size_t incomplete_tail(const std::string &s) {
    size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        unsigned char c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
        size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        return need > back ? back : 0;
    }
    return 0;
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
    if (vocab_.model == VocabModel::Bpe) {
        const PreTokenizerRules *rules = find_pretokenizer(vocab_.pre);
        if (!rules)
            fail(VKLLM_ERR_UNSUPPORTED,
                 "pre-tokenizer \"%s\" (tokenizer.ggml.pre) is not supported; the supported "
                 "names are listed in the README (\"Tokenizers\"): %s",
                 vocab_.pre.c_str(), pretokenizer_names().c_str());
        if (vocab_.pre.empty())
            warning_ =
                "no tokenizer.ggml.pre: llama.cpp's \"default\" pre-tokenizer is used, which may "
                "not split text as the model was trained (regenerate the file with a current "
                "converter)";
        pre_ = std::make_unique<PreTokenizer>(*rules);
        bpe_ =
            std::make_unique<BpeEncoder>(vocab_, rules->has(kIgnoreMerges), !rules->has(kRawUtf8));
    } else if (vocab_.model == VocabModel::Spm) {
        spm_ = std::make_unique<SpmEncoder>(vocab_);
    } else {
        wpm_ = std::make_unique<WordPieceEncoder>(vocab_);
    }
    // Added tokens are matched leftmost-longest, as Hugging Face tokenizers and SentencePiece's
    // user-defined symbols are. <unk> is one of them, as in llama.cpp.
    for (int32_t id = 0; id < vocab_.size(); ++id) {
        TokenType t = vocab_.type(id);
        const std::string &text = vocab_.tokens[size_t(id)];
        if ((t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) &&
            !text.empty())
            specials_[static_cast<unsigned char>(text[0])].push_back(id);
    }
    for (auto &bucket : specials_)
        std::stable_sort(bucket.begin(), bucket.end(), [this](int32_t a, int32_t b) {
            return vocab_.tokens[size_t(a)].size() > vocab_.tokens[size_t(b)].size();
        });
}

void Tokenizer::encode_text(std::string_view text, bool first, std::vector<int32_t> &out) const {
    if (spm_) {
        spm_->encode(escape_spaces(text, vocab_.add_space_prefix && first), out);
        return;
    }
    if (wpm_) {
        wpm_->encode(text, out);
        return;
    }
    const PreTokenizerRules &rules = pre_->rules();
    std::string normalized;
    if (rules.has(kNfc)) {
        normalized = nfc(text);
        text = normalized;
    }
    if (rules.has(kEscapeSpaces)) {
        normalized = escape_spaces(text, false);
        text = normalized;
    }
    for (std::string_view piece : pre_->split(text))
        bpe_->encode(piece, out);
}

// A SentencePiece model's user-defined pieces (Gemma's runs of spaces, tabs and newlines, its
// HTML tags) are part of its segmentation: SentencePiece cuts them out of any text, and so does
// llama.cpp with special-token parsing off. Control and unknown tokens only when asked.
int32_t Tokenizer::special_at(std::string_view text, size_t pos, bool parse_special) const {
    for (int32_t id : specials_[static_cast<unsigned char>(text[pos])]) {
        if (!parse_special && vocab_.type(id) != TokenType::UserDefined) continue;
        const std::string &s = vocab_.tokens[size_t(id)];
        if (text.compare(pos, s.size(), s) == 0) return id;
    }
    return -1;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, EncodeOptions options) const {
    std::vector<int32_t> out;
    if (options.add_special && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
    // SentencePiece adds its dummy prefix to text at the start or right after a special token.
    bool after_special = true;
    size_t start = 0;
    if (options.parse_special || spm_) {
        for (size_t pos = 0; pos < text.size();) {
            int32_t match = special_at(text, pos, options.parse_special);
            if (match < 0) {
                ++pos;
                continue;
            }
            if (pos > start) {
                encode_text(text.substr(start, pos - start), after_special, out);
                after_special = false;
            }
            out.push_back(match);
            after_special = true;
            pos += vocab_.tokens[size_t(match)].size();
            start = pos;
        }
    }
    if (start < text.size()) encode_text(text.substr(start), after_special, out);
    if (options.add_special && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
    return out;
}

std::vector<int32_t> Tokenizer::encode_pair(std::string_view first, std::string_view second,
                                            EncodeOptions options) const {
    EncodeOptions inner = options;
    inner.add_special = false;
    std::vector<int32_t> out = encode(first, inner);
    std::vector<int32_t> tail = encode(second, inner);
    if (options.add_special) {
        if (vocab_.add_bos && vocab_.bos >= 0) out.insert(out.begin(), vocab_.bos);
        int32_t between = vocab_.sep >= 0 ? vocab_.sep : vocab_.eos;
        if (between >= 0) out.push_back(between);
        if (vocab_.add_eos && vocab_.eos >= 0) tail.push_back(vocab_.eos);
    }
    out.insert(out.end(), tail.begin(), tail.end());
    return out;
}

std::string Tokenizer::piece(int32_t id, bool special) const {
    // Every path from an id to text passes here: an id without a token (negative, or a padded
    // embedding row past the vocabulary) is refused, never used as an index.
    if (id < 0 || id >= vocab_.size())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "token %d is outside the vocabulary (0 to %d)", id,
             vocab_.size() - 1);
    TokenType t = vocab_.type(id);
    if (t == TokenType::Control || t == TokenType::Unknown || t == TokenType::Unused)
        return special ? vocab_.tokens[size_t(id)] : std::string();
    if (t == TokenType::UserDefined) return vocab_.tokens[size_t(id)];
    if (bpe_) return bpe_->decode(id);
    return spm_ ? spm_->decode(id) : wpm_->decode(id);
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids, bool special) const {
    std::string out;
    for (int32_t id : ids)
        out += piece(id, special);
    if (!bpe_ && vocab_.add_space_prefix && !out.empty() && out[0] == ' ') out.erase(0, 1);
    return out;
}

bool Tokenizer::is_end_of_generation(int32_t id) const {
    const auto &eog = vocab_.end_of_generation;
    return std::binary_search(eog.begin(), eog.end(), id);
}

std::string StreamDecoder::push(int32_t id) {
    std::string p = tokenizer_.piece(id, special_);
    const Vocab &v = tokenizer_.vocab();
    if (first_ && !p.empty()) {
        if (v.model != VocabModel::Bpe && v.add_space_prefix && p[0] == ' ') p.erase(0, 1);
        first_ = false;
    }
    pending_ += p;
    size_t hold = incomplete_tail(pending_);
    std::string out = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    out.swap(pending_);
    first_ = at_text_start_;
    return out;
}

}  // namespace vkllm::tokenizer
