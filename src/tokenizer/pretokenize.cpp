#include "tokenizer/pretokenize.h"

#include <array>
#include <cstdint>

#include "common/error.h"
#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

namespace {

// The character classes of the patterns, one bit each.
enum : uint16_t {
    kLetter = 1 << 0,      // \p{L}
    kNumber = 1 << 1,      // \p{N}
    kSpace = 1 << 2,       // \s
    kNewline = 1 << 3,     // [\r\n]
    kSlash = 1 << 4,       // /
    kSymbol = 1 << 5,      // [^\s\p{L}\p{N}]
    kWordPrefix = 1 << 6,  // [^\r\n\p{L}\p{N}]
    kUpperRun = 1 << 7,    // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
    kLowerRun = 1 << 8,    // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
};

uint16_t classify_slow(uint32_t cp) {
    uint16_t f = 0;
    switch (category(cp)) {
        case Category::Lu:
        case Category::Lt:
            f = kLetter | kUpperRun;
            break;
        case Category::Ll:
            f = kLetter | kLowerRun;
            break;
        case Category::Lm:
        case Category::Lo:
            f = kLetter | kUpperRun | kLowerRun;
            break;
        case Category::Mn:
        case Category::Mc:
        case Category::Me:
            f = kUpperRun | kLowerRun;
            break;
        case Category::Nd:
        case Category::Nl:
        case Category::No:
            f = kNumber;
            break;
        case Category::Other:
            f = is_whitespace(cp) ? kSpace : 0;
            break;
    }
    if (cp == '\r' || cp == '\n') f |= kNewline;
    if (cp == '/') f |= kSlash;
    if (!(f & (kSpace | kLetter | kNumber))) f |= kSymbol;
    if (!(f & (kNewline | kLetter | kNumber))) f |= kWordPrefix;
    return f;
}

uint16_t classify(uint32_t cp) {
    // Most text is mostly ASCII: skip the table searches for it.
    static const std::array<uint16_t, 128> ascii = [] {
        std::array<uint16_t, 128> a{};
        for (uint32_t c = 0; c < 128; ++c)
            a[c] = classify_slow(c);
        return a;
    }();
    return cp < 128 ? ascii[cp] : classify_slow(cp);
}

// The text as code points with their classes and byte offsets; matchers work on indices into it
// and return the index where their match ends (the start index when it does not match).
class Text {
  public:
    explicit Text(std::string_view bytes) : bytes_(bytes) {
        cps_.reserve(bytes.size());
        flags_.reserve(bytes.size());
        offsets_.reserve(bytes.size() + 1);
        for (size_t pos = 0; pos < bytes.size();) {
            Utf8Char c = utf8_decode(bytes, pos);
            cps_.push_back(c.cp);
            flags_.push_back(classify(c.cp));
            offsets_.push_back(pos);
            pos += c.len;
        }
        offsets_.push_back(bytes.size());
    }

    size_t size() const { return cps_.size(); }
    std::string_view bytes(size_t begin, size_t end) const {
        return bytes_.substr(offsets_[begin], offsets_[end] - offsets_[begin]);
    }
    bool is(size_t i, uint16_t cls) const { return i < size() && (flags_[i] & cls); }
    bool is_char(size_t i, uint32_t cp) const { return i < size() && cps_[i] == cp; }
    // The end of the run of cls from i, at most `limit` characters long.
    size_t run(size_t i, uint16_t cls, size_t limit = SIZE_MAX) const {
        size_t end = i;
        while (end - i < limit && is(end, cls))
            ++end;
        return end;
    }

    // 's|'t|'re|'ve|'m|'ll|'d, or its (?i:...) form when ignore_case.
    size_t contraction(size_t i, bool ignore_case) const {
        if (!is_char(i, '\'')) return i;
        auto letter = [&](size_t k) { return k < size() ? fold(cps_[k], ignore_case) : 0; };
        uint32_t a = letter(i + 1), b = letter(i + 2);
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return i + 3;
        return i;
    }

    // \s*[\r\n]+: the backtracking \s* ends the match after the last \r or \n of the whitespace.
    size_t newline_block(size_t i) const {
        size_t end = i;
        for (size_t k = i; is(k, kSpace); ++k)
            if (is(k, kNewline)) end = k + 1;
        return end;
    }

    // \s+(?!\S)|\s+ at whitespace: a run followed by more text leaves its last character to
    // start the next piece, unless that would leave nothing.
    size_t whitespace(size_t i) const {
        size_t end = run(i, kSpace);
        return end < size() && end - i >= 2 ? end - 1 : end;
    }

  private:
    // Simple case folding, restricted to what the contractions can meet: ASCII and the long s,
    // which folds to 's' (as the Rust and Python engines fold it).
    static uint32_t fold(uint32_t cp, bool ignore_case) {
        if (!ignore_case) return cp;
        if (cp >= 'A' && cp <= 'Z') return cp + ('a' - 'A');
        return cp == 0x17F ? 's' : cp;
    }

    std::string_view bytes_;
    std::vector<uint32_t> cps_;
    std::vector<uint16_t> flags_;
    std::vector<size_t> offsets_;  // of each code point, then the end
};

// Every character is a letter, a number, whitespace or in [^\s\p{L}\p{N}], and each pattern has
// an alternative that starts with each, so every pattern matches at every position: there are no
// gaps, and the final whitespace alternatives are reached only at whitespace.

size_t gpt2(const Text &t, size_t i) {
    if (size_t end = t.contraction(i, false); end > i) return end;
    // ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+': the space is whitespace, in none of the classes,
    // so giving it back never helps.
    size_t start = t.is_char(i, ' ') ? i + 1 : i;
    for (uint16_t cls : {kLetter, kNumber, kSymbol})
        if (t.is(start, cls)) return t.run(start, cls);
    return t.whitespace(i);
}

size_t qwen2(const Text &t, size_t i, size_t max_digits) {
    if (size_t end = t.contraction(i, true); end > i) return end;
    // [^\r\n\p{L}\p{N}]?\p{L}+: the prefix class holds no letter, so the word starts at i or i + 1.
    if (t.is(i, kLetter)) return t.run(i, kLetter);
    if (t.is(i, kWordPrefix) && t.is(i + 1, kLetter)) return t.run(i + 1, kLetter);
    if (t.is(i, kNumber)) return t.run(i, kNumber, max_digits);
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    size_t start = t.is_char(i, ' ') ? i + 1 : i;
    if (t.is(start, kSymbol)) return t.run(t.run(start, kSymbol), kNewline);
    if (size_t end = t.newline_block(i); end > i) return end;
    return t.whitespace(i);
}

// U*W+C? from i, or i when nothing matches. U* gives back characters until the next one can
// start W+, so W+ starts at the last W character of the U run or at the one just after the run.
size_t o200k_lower_tail(const Text &t, size_t i) {
    size_t k = i, lower = SIZE_MAX;
    for (; t.is(k, kUpperRun); ++k)
        if (t.is(k, kLowerRun)) lower = k;
    if (t.is(k, kLowerRun)) lower = k;
    return lower == SIZE_MAX ? i : t.contraction(t.run(lower, kLowerRun), true);
}

// [^\r\n\p{L}\p{N}]?U*W+C?, or i when nothing matches. The prefix is tried taken, then left out:
// it can be a mark, which U and W hold too.
size_t o200k_lower_word(const Text &t, size_t i) {
    if (t.is(i, kWordPrefix))
        if (size_t end = o200k_lower_tail(t, i + 1); end > i + 1) return end;
    return o200k_lower_tail(t, i);
}

// [^\r\n\p{L}\p{N}]?U+W*C?, or i when nothing matches.
size_t o200k_upper_word(const Text &t, size_t i) {
    size_t start = t.is(i, kWordPrefix) && t.is(i + 1, kUpperRun) ? i + 1 : i;
    if (!t.is(start, kUpperRun)) return i;
    return t.contraction(t.run(t.run(start, kUpperRun), kLowerRun), true);
}

size_t o200k(const Text &t, size_t i) {
    if (size_t end = o200k_lower_word(t, i); end > i) return end;
    if (size_t end = o200k_upper_word(t, i); end > i) return end;
    if (t.is(i, kNumber)) return t.run(i, kNumber, 3);
    // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
    size_t start = t.is_char(i, ' ') ? i + 1 : i;
    if (t.is(start, kSymbol)) return t.run(t.run(start, kSymbol), kNewline | kSlash);
    if (size_t end = t.newline_block(i); end > i) return end;
    return t.whitespace(i);
}

size_t match(PreTokenizer kind, const Text &t, size_t i) {
    switch (kind) {
        case PreTokenizer::Gpt2:
            return gpt2(t, i);
        case PreTokenizer::Llama3:
            return qwen2(t, i, 3);
        case PreTokenizer::Qwen2:
            return qwen2(t, i, 1);
        case PreTokenizer::O200k:
            return o200k(t, i);
    }
    fail(VKLLM_ERR_INTERNAL, "pretokenize: unknown pre-tokenizer %d", int(kind));
}

}  // namespace

std::vector<std::string_view> pretokenize(PreTokenizer kind, std::string_view text) {
    Text t(text);
    std::vector<std::string_view> pieces;
    for (size_t i = 0; i < t.size();) {
        size_t end = match(kind, t, i);
        if (end <= i) fail(VKLLM_ERR_INTERNAL, "pretokenize: no match at code point %zu", i);
        pieces.push_back(t.bytes(i, end));
        i = end;
    }
    return pieces;
}

}  // namespace vkllm::tokenizer
