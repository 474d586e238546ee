// The parse configurations (the live stacks and an unfinished character) that the token masks of
// one GrammarState have met, each interned once with its transitions by byte computed on first
// use: a lazily built automaton over the parser's configurations.
//
// Why it pays: inside a JSON string every ordinary character leads back to the same
// configuration, so a mask's walk over most of the vocabulary becomes table look-ups; and the
// table outlives the mask, because the next token's state is a configuration the last walk
// already reached (the token taken is a path of that walk), transitions included.
//
// A configuration stepped from often gets a dense row of 256 transitions (one load per trie
// node); the rest keep theirs in a hash map, as a grammar that tells every token apart has as
// many configurations as trie nodes, each stepped a few times. The table is emptied when it
// grows past a memory budget, between masks: the cache is then rebuilt, never wrong.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar_state.h"

namespace vkllm::grammar {

class ConfigTable {
  public:
    static constexpr int32_t kRefused = -1;

    explicit ConfigTable(std::shared_ptr<const Grammar> grammar);

    // The configuration's id, the same for equal stacks and partial character.
    int32_t intern(const std::vector<Stack> &stacks, const PartialUtf8 &partial);

    // The configuration after `byte`, or kRefused. Throws as advance_byte does (too ambiguous).
    int32_t step(int32_t from, uint8_t byte) {
        int32_t row = row_of_[size_t(from)];
        if (row >= 0) {
            int32_t to = rows_[size_t(row) << 8 | byte];
            if (to != kUnknown) return to;
        }
        return step_slow(from, byte);
    }

    size_t size() const { return configs_.size(); }
    size_t rows() const { return rows_.size() / 256; }
    size_t memory_bytes() const { return bytes_; }

    // Empties the table when it holds more than `budget` bytes.
    void trim(size_t budget);

  private:
    static constexpr int32_t kUnknown = -2;

    int32_t step_slow(int32_t from, uint8_t byte);
    void clear();

    struct Config {
        std::vector<Stack> stacks;
        PartialUtf8 partial;
    };
    std::shared_ptr<const Grammar> grammar_;
    std::vector<Config> configs_;
    std::vector<int32_t> row_of_;  // per configuration: its dense row, or -1
    std::vector<uint8_t> misses_;  // per configuration without a row: transitions computed
    std::vector<int32_t> rows_;    // 256 transitions a row (kUnknown: not computed yet)
    std::unordered_map<uint64_t, int32_t> sparse_;    // (configuration << 8 | byte) -> next
    std::unordered_map<std::string, int32_t> index_;  // a configuration's bytes -> its id
    std::vector<Stack> scratch_;                      // step_slow's output stacks
    size_t bytes_ = 0;
};

}  // namespace vkllm::grammar
