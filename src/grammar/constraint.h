// A grammar applied to sampling: which tokens may come next, and the parse state that the
// tokens of a generation advance. The sampler asks `allows` about the token its chain chose
// (a few stack steps) and pays for `mask` (a walk of the whole token trie) only when the answer
// is no.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "grammar/grammar_state.h"
#include "grammar/token_trie.h"

namespace vkllm::grammar {

// A grammar compiled for one vocabulary: read-only, shared by every sampler that applies it.
struct CompiledGrammar {
    std::shared_ptr<const Grammar> grammar;
    std::shared_ptr<const TokenTrie> trie;
    std::vector<int32_t> end_tokens;  // the tokenizer's end-of-generation ids, ascending
};

enum class Progress { Incomplete = 0, Complete = 1, Finished = 2 };

class Constraint {
  public:
    explicit Constraint(std::shared_ptr<const CompiledGrammar> compiled);

    Progress progress() const;
    // Where a fresh parse of `text` from the grammar's start stands: Incomplete also when the
    // grammar refuses the text. For text cut short of what the tokens accepted said (a stop
    // string), whose state the token-by-token parse never passed through.
    Progress progress_of(std::string_view text) const;
    // Whether `token` may come next: its bytes continue the text, or it is an end token and the
    // text is complete. Ids the trie does not know are never allowed.
    bool allows(int32_t token) const;
    // Sets to -INFINITY each of the first n logits whose token may not come next; returns how
    // many tokens stay allowed.
    size_t mask(float *logits, size_t n);
    // Advances over a generated token; VKLLM_ERR_INVALID_ARGUMENT (state unchanged) for one
    // that is not allowed. End tokens leave the state as it is.
    void accept(int32_t token);
    void reset();

  private:
    bool is_end(int32_t token) const;

    std::shared_ptr<const CompiledGrammar> compiled_;
    GrammarState state_;
    std::vector<uint8_t> allowed_;  // the last mask, reused to spare an allocation per step
};

}  // namespace vkllm::grammar
