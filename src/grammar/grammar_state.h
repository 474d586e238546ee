// Where a generation stands in a grammar: the set of parse stacks that are still alive, as
// llama.cpp's grammar engine keeps them (a pushdown automaton run on every branch at once).
// Each stack holds positions in Grammar::elements, the top last; after every step the top of each
// stack is a character class (what may come next) and an empty stack means the root rule is
// complete. Text arrives as bytes: a token may end inside a UTF-8 character, and the bytes so far
// are carried over to the next token.
//
// Why stacks rather than an Earley parser: GBNF as written for LLMs (JSON, lists, choices) is
// nearly deterministic, so the live stacks number a handful; each code point costs a few
// comparisons and no chart grows with the output. Left recursion, the one thing the stacks
// cannot do, is refused when the grammar is parsed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace vkllm::grammar {

using Stack = std::vector<uint32_t>;
class ConfigTable;

// The bytes of an unfinished UTF-8 character: its bits so far and the bytes it still needs.
struct PartialUtf8 {
    uint32_t value = 0;
    uint32_t remaining = 0;  // 0: none pending
    uint32_t length = 0;     // the whole sequence's length, for the overlong check
};

// The live stacks past this many mean an ambiguous grammar whose branches multiply with the
// output (("a" | "a")* ...): the engine refuses to go on rather than grow without bound.
constexpr size_t kMaxStacks = 4096;

// One thread at a time uses a state, token_mask included: the mask keeps its cache in the
// state it reads (config_table()).
class GrammarState {
  public:
    explicit GrammarState(std::shared_ptr<const Grammar> grammar);

    // Each returns false, leaving the state as it was, when the grammar cannot continue with
    // the input. They throw VKLLM_ERR_INVALID_ARGUMENT past kMaxStacks.
    bool accept_codepoint(uint32_t cp);
    // Invalid UTF-8 (a stray continuation byte, an overlong form, a surrogate, a value above
    // U+10FFFF) is rejected; a sequence cut at the end is kept for the next call, and rejected
    // at once when no completion of it could match.
    bool accept_bytes(std::string_view bytes);

    // The root rule has matched everything so far and no UTF-8 character is half done: the text
    // may end here (an end-of-generation token is allowed).
    bool is_complete() const;
    // Nothing more can follow: the only live stacks are complete ones.
    bool must_end() const;

    void reset();

    const Grammar &grammar() const { return *grammar_; }
    const std::vector<Stack> &stacks() const { return stacks_; }
    const PartialUtf8 &partial() const { return partial_; }

    // The token mask's automaton over this grammar's parse configurations (config_table.h),
    // kept between masks: it depends on the grammar alone, never on where the state stands, so
    // accepting text and reset() keep it. A copy of the state starts with an empty one.
    ConfigTable &config_table() const;

  private:
    // Owns the table; copying gives an empty slot rather than a second owner.
    class TableSlot {
      public:
        TableSlot();
        TableSlot(const TableSlot &);
        TableSlot(TableSlot &&) noexcept;
        TableSlot &operator=(const TableSlot &);
        TableSlot &operator=(TableSlot &&) noexcept;
        ~TableSlot();
        std::unique_ptr<ConfigTable> table;
    };

    std::shared_ptr<const Grammar> grammar_;
    std::vector<Stack> stacks_;
    PartialUtf8 partial_;
    mutable TableSlot table_;
};

// The stacks `stack` stands for once every rule reference on its top is expanded: each result's
// top is a character class, or the result is empty. Appends them to `out`, skipping duplicates.
void expand(const Grammar &g, const Stack &stack, std::vector<Stack> &out);

// The stacks at the start of rule `rule` (the root: the state before any text).
std::vector<Stack> initial_stacks(const Grammar &g, uint32_t rule);

// One code point: false when no stack can take it (the stacks are then left as they were).
bool advance_codepoint(const Grammar &g, std::vector<Stack> &stacks, uint32_t cp);
// The same from stacks left untouched: the stacks after `cp` replace what `out` held; false
// when there are none.
bool step_codepoint(const Grammar &g, const std::vector<Stack> &stacks, uint32_t cp,
                    std::vector<Stack> &out);

// One byte of UTF-8 text, the character it belongs to carried in `partial`: false when the
// byte is invalid UTF-8 or no stack can take the character (or any completion of it); the
// stacks and `partial` are then unspecified. What GrammarState::accept_bytes and token_allowed
// step with (the mask's walk decodes with utf8_step and steps code points).
bool advance_byte(const Grammar &g, std::vector<Stack> &stacks, PartialUtf8 &partial, uint8_t byte);

// UTF-8 alone, one byte: Invalid (a stray continuation byte, an overlong form, a surrogate, a
// value above U+10FFFF, a byte never valid); Pending (`p` updated, the character unfinished);
// Complete (`cp` is the character, `p` is reset).
enum class Utf8Step { Invalid, Pending, Complete };
// The smallest code point of each sequence length (shorter would be an overlong form).
constexpr uint32_t kUtf8Min[] = {0, 0, 0x80, 0x800, 0x10000};
// Inline: the mask's walk decodes every byte of the vocabulary's non-ASCII pieces with it.
inline Utf8Step utf8_step(PartialUtf8 &p, uint8_t byte, uint32_t &cp) {
    uint32_t b = byte;
    if (p.remaining > 0) {
        if ((b & 0xC0) != 0x80) return Utf8Step::Invalid;
        p.value = (p.value << 6) | (b & 0x3F);
        if (--p.remaining > 0) return Utf8Step::Pending;
        cp = p.value;
        if (cp < kUtf8Min[p.length] || cp > kMaxCodePoint || (cp >= 0xD800 && cp <= 0xDFFF))
            return Utf8Step::Invalid;
        p = PartialUtf8{};
        return Utf8Step::Complete;
    }
    if (b < 0x80) {
        cp = b;
        return Utf8Step::Complete;
    }
    if (b >= 0xC2 && b <= 0xDF) {
        p = {b & 0x1F, 1, 2};
    } else if (b >= 0xE0 && b <= 0xEF) {
        p = {b & 0x0F, 2, 3};
    } else if (b >= 0xF0 && b <= 0xF4) {
        p = {b & 0x07, 3, 4};
    } else {
        return Utf8Step::Invalid;  // a continuation byte with nothing before it, or never valid
    }
    return Utf8Step::Pending;
}

// The code points an unfinished character can still become, [low, high]; false when none can
// (ED A0..ED BF only lead to surrogates).
inline bool utf8_completions(const PartialUtf8 &p, uint32_t &low, uint32_t &high) {
    uint32_t shift = 6 * p.remaining;
    low = std::max(p.value << shift, kUtf8Min[p.length]);
    high = std::min((p.value << shift) | ((1u << shift) - 1), kMaxCodePoint);
    // ED A0..ED BF can only become surrogates, which UTF-8 may not encode.
    bool surrogates_only = low >= 0xD800 && high <= 0xDFFF;
    return low <= high && !surrogates_only;
}

}  // namespace vkllm::grammar
