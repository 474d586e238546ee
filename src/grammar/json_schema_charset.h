// Sets of code points for JSON Schema `pattern`s: sorted ranges with union and complement, the
// shorthand classes (\d, \w, \s, `.`) as ECMAScript and Python's `re` both read them, and the
// GBNF for the JSON text of any character of a set.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace vkllm::grammar::schema::pattern {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// A set of code points as sorted, disjoint, non-adjacent closed ranges.
class CharSet {
  public:
    using Range = std::pair<uint32_t, uint32_t>;

    void add(uint32_t lo, uint32_t hi) {
        ranges_.emplace_back(lo, hi);
        normalize();
    }
    void add(const CharSet &other) {
        ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
        normalize();
    }
    CharSet complement() const {
        CharSet out;
        uint32_t next = 0;
        for (const Range &r : ranges_) {
            if (r.first > next) out.ranges_.emplace_back(next, r.first - 1);
            next = r.second + 1;
        }
        if (next <= kMaxCodePoint && !(ranges_.size() && ranges_.back().second == kMaxCodePoint))
            out.ranges_.emplace_back(next, kMaxCodePoint);
        return out;
    }
    CharSet minus(const CharSet &other) const { return complement().with(other).complement(); }
    CharSet with(const CharSet &other) const {
        CharSet out = *this;
        out.add(other);
        return out;
    }
    bool contains(uint32_t cp) const {
        for (const Range &r : ranges_)
            if (cp >= r.first && cp <= r.second) return true;
        return false;
    }
    bool empty() const { return ranges_.empty(); }
    const std::vector<Range> &ranges() const { return ranges_; }

    static CharSet of(std::initializer_list<Range> ranges) {
        CharSet out;
        for (const Range &r : ranges)
            out.ranges_.push_back(r);
        out.normalize();
        return out;
    }
    // The code points `keep` holds, as ranges (built once per shorthand class).
    template <typename Pred>
    static CharSet where(Pred keep) {
        CharSet out;
        bool open = false;
        uint32_t start = 0;
        for (uint32_t cp = 0; cp <= kMaxCodePoint + 1; ++cp) {
            bool in = cp <= kMaxCodePoint && keep(cp);
            if (in && !open) start = cp;
            if (!in && open) out.ranges_.emplace_back(start, cp - 1);
            open = in;
        }
        return out;
    }

  private:
    std::vector<Range> ranges_;

    void normalize() {
        std::sort(ranges_.begin(), ranges_.end());
        std::vector<Range> merged;
        for (const Range &r : ranges_) {
            if (!merged.empty() && r.first <= merged.back().second + 1)
                merged.back().second = std::max(merged.back().second, r.second);
            else
                merged.push_back(r);
        }
        ranges_ = std::move(merged);
    }
};

// A class item as two sets: the code points both engines match (`lower`) and those either may
// match (`upper`). A class uses `lower`; a negated one the complement of `upper`, so that it
// too holds only what both engines match.
struct Sets {
    CharSet lower, upper;
};

// The shorthand classes, each the part ECMAScript and Python's `re` agree on: \d is [0-9] in
// ECMAScript and every Unicode digit in Python, so \d is [0-9] and \D leaves out every Unicode
// number; \w and \W likewise with letters, marks and numbers; \s is the whitespace both
// define, and \S leaves out what either calls whitespace.
const CharSet &digits();
const CharSet &word();
// `.`: any code point but the line terminators (ECMAScript's four; Python's is \n alone).
const CharSet &dot();
// UTF-16 surrogates: no characters of UTF-8 text.
const CharSet &surrogates();

// One code point, in both sets.
Sets same(uint32_t cp);
// \d \D \w \W \s \S (c is the letter).
Sets shorthand(uint32_t c);

// The JSON text of any character of `set`, as a GBNF expression ("nothing" for none).
std::string set_text(const CharSet &set);
// The JSON text of the character cp, as a GBNF literal (escaped where JSON escapes it).
std::string char_text(uint32_t cp);

}  // namespace vkllm::grammar::schema::pattern
