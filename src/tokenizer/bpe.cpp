#include "tokenizer/bpe.h"

#include <cstdio>
#include <queue>

#include "tokenizer/spm.h"
#include "tokenizer/unicode.h"

namespace vkllm::tokenizer {

namespace {

uint64_t pair_key(int32_t left, int32_t right) {
    return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
}

}  // namespace

BpeEncoder::BpeEncoder(const Vocab &vocab, bool ignore_merges, bool byte_level)
    : vocab_(vocab), ignore_merges_(ignore_merges), byte_level_(byte_level) {
    // GPT-2's table: printable bytes map to themselves, the other 68 to U+0100.. in order.
    uint32_t next = 0x100;
    for (uint32_t b = 0; b < 256; ++b) {
        bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
        uint32_t cp = printable ? b : next++;
        utf8_append(byte_char_[b], cp);
        char_byte_[cp] = uint8_t(b);
        if (byte_level) {
            byte_token_[b] = vocab.find(byte_char_[b]);
        } else {
            // A <0xXX> byte token, else a token that is the byte itself (what llama.cpp looks
            // up); a byte with neither is dropped, as llama.cpp drops it.
            char name[8];
            std::snprintf(name, sizeof name, "<0x%02X>", b);
            byte_token_[b] = vocab.find(name);
            if (byte_token_[b] < 0) byte_token_[b] = vocab.find(std::string(1, char(b)));
        }
    }
    merges_.reserve(vocab.merges.size());
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
        const std::string &m = vocab.merges[rank];
        size_t space = m.find(' ', 1);  // a token is never empty, and holds no space
        if (space == std::string::npos) continue;
        int32_t left = vocab.find(m.substr(0, space));
        int32_t right = vocab.find(m.substr(space + 1));
        int32_t result = vocab.find(m.substr(0, space) + m.substr(space + 1));
        if (left < 0 || right < 0 || result < 0) continue;  // a merge the vocabulary cannot use
        merges_.emplace(pair_key(left, right), Merge{int32_t(rank), result});  // best rank wins
    }
}

// What no token covers: its bytes' tokens. A byte without one is <unk> in byte-level BPE (a
// malformed vocabulary) and dropped in UTF-8 BPE, as llama.cpp does.
void BpeEncoder::fallback(std::string_view text, std::vector<int32_t> &out) const {
    for (unsigned char b : text) {
        int32_t id = byte_token_[b] >= 0 ? byte_token_[b] : byte_level_ ? vocab_.unk : -1;
        if (id >= 0) out.push_back(id);
    }
}

void BpeEncoder::encode(std::string_view piece, std::vector<int32_t> &out) const {
    if (piece.empty()) return;
    if (ignore_merges_) {
        std::string text;
        if (byte_level_) {
            for (unsigned char b : piece)
                text += byte_char_[b];
        } else {
            text = piece;
        }
        int32_t id = vocab_.find(text);
        if (id >= 0) {
            out.push_back(id);
            return;
        }
    }
    // Symbols in a doubly linked list; candidate merges in a min-heap by (rank, position),
    // dropped lazily when one of their symbols has changed since they were pushed.
    struct Symbol {
        int32_t id;  // -1: no token (UTF-8 BPE), -2: merged away
        int32_t prev, next;
        uint32_t version;
        size_t start, len;  // bytes of the piece
    };
    std::vector<Symbol> sym;
    sym.reserve(piece.size());
    for (size_t pos = 0; pos < piece.size();) {
        size_t len = byte_level_ ? 1 : utf8_decode(piece, pos).len;
        int32_t id = byte_level_ ? byte_token_[static_cast<unsigned char>(piece[pos])]
                                 : vocab_.find(std::string(piece.substr(pos, len)));
        int32_t i = int32_t(sym.size());
        sym.push_back(Symbol{id, i - 1, i + 1, 0, pos, len});
        pos += len;
    }
    sym.back().next = -1;
    struct Candidate {
        int32_t rank, left;
        uint32_t left_version, right_version;
        bool operator>(const Candidate &o) const {
            return rank != o.rank ? rank > o.rank : left > o.left;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> heap;
    auto consider = [&](int32_t left) {
        if (left < 0) return;
        int32_t right = sym[size_t(left)].next;
        if (right < 0 || sym[size_t(left)].id < 0 || sym[size_t(right)].id < 0) return;
        auto it = merges_.find(pair_key(sym[size_t(left)].id, sym[size_t(right)].id));
        if (it != merges_.end())
            heap.push(Candidate{it->second.rank, left, sym[size_t(left)].version,
                                sym[size_t(right)].version});
    };
    for (int32_t i = 0; i + 1 < int32_t(sym.size()); ++i)
        consider(i);
    while (!heap.empty()) {
        Candidate c = heap.top();
        heap.pop();
        Symbol &l = sym[size_t(c.left)];
        if (l.id < 0 || l.version != c.left_version || l.next < 0) continue;
        Symbol &r = sym[size_t(l.next)];
        if (r.version != c.right_version) continue;
        l.id = merges_.at(pair_key(l.id, r.id)).result;
        ++l.version;
        l.len += r.len;
        r.id = -2;
        ++r.version;
        l.next = r.next;
        if (r.next >= 0) sym[size_t(r.next)].prev = c.left;
        consider(l.prev);
        consider(c.left);
    }
    for (const Symbol &s : sym) {
        if (s.id >= 0)
            out.push_back(s.id);
        else if (s.id == -1)
            fallback(piece.substr(s.start, s.len), out);
    }
}

std::string BpeEncoder::decode(int32_t id) const {
    const std::string &text = vocab_.tokens[size_t(id)];
    if (!byte_level_) {
        if (vocab_.type(id) == TokenType::Byte)
            for (int b = 0; b < 256; ++b)
                if (byte_token_[b] == id) return std::string(1, char(b));
        return unescape_spaces(text);
    }
    std::string out;
    size_t pos = 0;
    uint32_t cp;
    while (utf8_next(text, pos, cp)) {
        auto it = char_byte_.find(cp);
        if (it != char_byte_.end())
            out += char(it->second);
        else
            utf8_append(out, cp);  // not byte-mapped text (an added token): as written
    }
    return out;
}

}  // namespace vkllm::tokenizer
