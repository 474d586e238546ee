#include "grammar/constraint.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "grammar/token_mask.h"

namespace vkllm::grammar {

Constraint::Constraint(std::shared_ptr<const CompiledGrammar> compiled)
    : compiled_(std::move(compiled)), state_(compiled_->grammar) {}

Progress Constraint::progress() const {
    if (state_.must_end()) return Progress::Finished;
    return state_.is_complete() ? Progress::Complete : Progress::Incomplete;
}

Progress Constraint::progress_of(std::string_view text) const {
    GrammarState fresh(compiled_->grammar);
    if (!fresh.accept_bytes(text) || !fresh.is_complete()) return Progress::Incomplete;
    return fresh.must_end() ? Progress::Finished : Progress::Complete;
}

bool Constraint::is_end(int32_t token) const {
    return std::binary_search(compiled_->end_tokens.begin(), compiled_->end_tokens.end(), token);
}

bool Constraint::allows(int32_t token) const {
    if (is_end(token)) return state_.is_complete();
    const TokenTrie &trie = *compiled_->trie;
    if (token < 0 || size_t(token) >= trie.vocab_size()) return false;
    return token_allowed(state_, trie, token);
}

size_t Constraint::mask(float *logits, size_t n) {
    const TokenTrie &trie = *compiled_->trie;
    token_mask(state_, trie, allowed_);
    bool complete = state_.is_complete();
    for (int32_t end : compiled_->end_tokens)
        if (size_t(end) < allowed_.size()) allowed_[size_t(end)] = complete;
    size_t left = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i < allowed_.size() && allowed_[i])
            ++left;
        else
            logits[i] = -INFINITY;
    }
    return left;
}

void Constraint::accept(int32_t token) {
    if (is_end(token)) {
        if (!state_.is_complete())
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "token %d ends the text, but the grammar is not complete yet", token);
        return;
    }
    const TokenTrie &trie = *compiled_->trie;
    if (token < 0 || size_t(token) >= trie.vocab_size() || trie.piece(token).empty() ||
        !state_.accept_bytes(trie.piece(token)))
        fail(VKLLM_ERR_INVALID_ARGUMENT, "token %d is not allowed by the grammar here", token);
}

void Constraint::reset() {
    state_.reset();
}

}  // namespace vkllm::grammar
