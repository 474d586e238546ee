// The parse configurations (sets of live stacks) that the token masks of one GrammarState have
// met, each interned once, with its transitions computed on first use: a lazily built automaton
// over the parser's configurations, kept between masks.
//
// A configuration's transitions are by code point, and few: the boundaries of the character
// classes on its stacks' tops cut the code points into intervals inside which every class says
// the same, and a step depends only on which classes matched. Inside a JSON string that is a
// handful of intervals ("\"", "\\", the controls, the rest), so a walk over the whole vocabulary
// computes a handful of steps, whatever scripts the vocabulary spells; UTF-8 is decoded by the
// walk itself (a PartialUtf8 next to the configuration), an unfinished character checked
// against the union of what the tops accept. A configuration stepped often gets a dense row of
// its transitions by byte after a finished character (ASCII bytes, and the lead bytes of the
// others): one load per trie node. Continuation bytes take a fast path where, as in a JSON
// string, every code point from U+0080 up leads to the same configuration.
//
// The table depends on the grammar alone, so it stays valid as the state moves; a state that
// reaches new contexts (a string nested deeper) adds a few configurations per context. It is
// emptied when it grows past a memory budget, between masks: rebuilt, never wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/grammar_state.h"

namespace vkllm::grammar {

class ConfigTable {
  public:
    // Where a walk stands: a configuration and the bytes of an unfinished character.
    struct Position {
        int32_t config = 0;
        PartialUtf8 partial;
    };

    explicit ConfigTable(std::shared_ptr<const Grammar> grammar);

    // The configuration's id, the same for equal sets of stacks.
    int32_t intern(const std::vector<Stack> &stacks);

    // One byte from `from`: false when the grammar refuses it (or it breaks UTF-8), else `to`.
    // Throws as advance_byte does (a grammar too ambiguous).
    bool step(const Position &from, uint8_t byte, Position &to) {
        const Config &c = configs_[size_t(from.config)];
        if (from.partial.remaining == 0) {
            if (c.row >= 0) {
                int32_t next = rows_[size_t(c.row) << 8 | byte];
                if (next >= 0) {
                    to.config = next;
                    to.partial = lead_partial(byte);
                    return true;
                }
                if (next == kRefused) return false;
            }
        } else if (c.high_next >= 0) {
            // Every code point from U+0080 up takes this configuration to one and the same:
            // only UTF-8 itself can refuse a continuation byte.
            PartialUtf8 partial = from.partial;
            uint32_t cp, low, high;
            switch (utf8_step(partial, byte, cp)) {
                case Utf8Step::Invalid:
                    return false;
                case Utf8Step::Pending:
                    if (!utf8_completions(partial, low, high)) return false;
                    to.config = from.config;
                    to.partial = partial;
                    return true;
                case Utf8Step::Complete:
                    to.config = c.high_next;
                    to.partial = PartialUtf8{};
                    return true;
            }
        }
        return step_slow(from, byte, to);
    }

    size_t size() const { return configs_.size(); }
    size_t memory_bytes() const { return bytes_; }

    // Empties the table when it holds more than `budget` bytes.
    void trim(size_t budget);

  private:
    static constexpr int32_t kRefused = -1;
    static constexpr int32_t kUnknown = -2;

    struct Config {
        std::vector<Stack> stacks;
        bool partitioned = false;
        // Interval k is [starts[k], starts[k + 1]) (the last one ends past U+10FFFF); next[k]
        // the configuration after any code point in it, kRefused, or kUnknown until asked.
        std::vector<uint32_t> starts;
        std::vector<int32_t> next;
        // The code points some top accepts, as sorted disjoint closed intervals.
        std::vector<std::pair<uint32_t, uint32_t>> accepted;
        // The interval holding U+0080, and when it runs to U+10FFFF and its next is known, that
        // next (else -1): the continuation bytes' fast path.
        size_t high_interval = 0;
        bool uniform_high = false;
        int32_t high_next = -1;
        // Its row in rows_ (-1: none yet): the transitions from a finished character, by byte:
        // the next configuration after an ASCII byte; after a lead byte, this configuration (the
        // walk then carries lead_partial(byte)) when some character it starts is accepted.
        int32_t row = -1;
        uint8_t misses = 0;  // steps taken without a row
    };

    static PartialUtf8 lead_partial(uint8_t byte) {
        PartialUtf8 p;
        uint32_t cp;
        utf8_step(p, byte, cp);
        return p;
    }

    bool step_slow(const Position &from, uint8_t byte, Position &to);
    int32_t step_codepoint(int32_t from, uint32_t cp);
    bool may_complete(const Config &c, const PartialUtf8 &partial) const;
    void partition(Config &c);
    void clear();

    std::shared_ptr<const Grammar> grammar_;
    std::vector<Config> configs_;
    std::vector<int32_t> rows_;  // 256 transitions a row (kUnknown: not computed yet)
    std::unordered_map<std::string, int32_t> index_;  // a configuration's bytes -> its id
    std::vector<Stack> scratch_;                      // stacks after a code point
    size_t bytes_ = 0;
};

}  // namespace vkllm::grammar
