#include "tokenizer/spm.h"

#include <cstdio>
#include <cstdlib>
#include <queue>

#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

SpmEncoder::SpmEncoder(const Vocab &vocab) : vocab_(vocab) {
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        byte_token_[b] = vocab.find(name);
    }
}

// A piece that is a token is emitted as it is; any other piece (the merges only ever join
// strings that are tokens, so only single characters get here) falls back to its bytes.
void SpmEncoder::emit(std::string_view text, std::vector<int32_t> &out) const {
    int32_t id = vocab_.find(text);
    if (id >= 0) {
        out.push_back(id);
        return;
    }
    for (unsigned char b : text) {
        int32_t byte = byte_token_[b];
        if (byte >= 0)
            out.push_back(byte);
        else if (vocab_.unk >= 0)
            out.push_back(vocab_.unk);
    }
}

void SpmEncoder::encode(std::string_view text, std::vector<int32_t> &out) const {
    struct Symbol {
        size_t start, len;
        int32_t prev, next;
    };
    std::vector<Symbol> sym;
    for (size_t pos = 0; pos < text.size();) {
        size_t len = utf8_decode(text, pos).len;
        sym.push_back(Symbol{pos, len, int32_t(sym.size()) - 1, int32_t(sym.size()) + 1});
        pos += len;
    }
    if (sym.empty()) return;
    sym.back().next = -1;

    // Highest score first; among equal scores the leftmost pair.
    struct Bigram {
        float score;
        int32_t left;
        size_t len;  // combined length when pushed: a changed symbol makes it stale
        bool operator<(const Bigram &o) const {
            return score != o.score ? score < o.score : left > o.left;
        }
    };
    std::priority_queue<Bigram> heap;
    auto consider = [&](int32_t left) {
        if (left < 0 || sym[size_t(left)].next < 0) return;
        const Symbol &l = sym[size_t(left)];
        const Symbol &r = sym[size_t(l.next)];
        int32_t id = vocab_.find(text.substr(l.start, l.len + r.len));
        if (id < 0) return;
        float score = vocab_.scores.empty() ? 0.0f : vocab_.scores[size_t(id)];
        heap.push(Bigram{score, left, l.len + r.len});
    };
    for (int32_t i = 0; i + 1 < int32_t(sym.size()); ++i)
        consider(i);
    while (!heap.empty()) {
        Bigram b = heap.top();
        heap.pop();
        Symbol &l = sym[size_t(b.left)];
        if (l.len == 0 || l.next < 0 || l.len + sym[size_t(l.next)].len != b.len) continue;
        Symbol &r = sym[size_t(l.next)];
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = b.left;
        consider(l.prev);
        consider(b.left);
    }
    for (int32_t i = 0; i >= 0; i = sym[size_t(i)].next)
        emit(text.substr(sym[size_t(i)].start, sym[size_t(i)].len), out);
}

std::string SpmEncoder::decode(int32_t id) const {
    const std::string &text = vocab_.tokens[size_t(id)];
    if (vocab_.type(id) == TokenType::Byte && text.size() == 6 && text.compare(0, 3, "<0x") == 0 &&
        text[5] == '>') {
        std::string hex = text.substr(3, 2);
        char *end = nullptr;
        long byte = std::strtol(hex.c_str(), &end, 16);
        if (end == hex.c_str() + 2) return std::string(1, char(byte));
    }
    return unescape_spaces(text);
}

namespace {
const char kSpace[] = "\xE2\x96\x81";  // U+2581
}

std::string escape_spaces(std::string_view text, bool prefix) {
    std::string out = prefix ? kSpace : "";
    for (char ch : text) {
        if (ch == ' ')
            out += kSpace;
        else
            out += ch;
    }
    return out;
}

std::string unescape_spaces(std::string_view text) {
    std::string out;
    for (size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, 3, kSpace) == 0) {
            out += ' ';
            pos += 3;
        } else {
            out += text[pos++];
        }
    }
    return out;
}

}  // namespace vkllm::tokenizer
