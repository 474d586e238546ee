// Which tokens may come next under a grammar: the token trie walked against the parse state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "grammar/grammar_state.h"
#include "grammar/token_trie.h"

namespace vkllm::grammar {

struct MaskStats {
    size_t nodes_visited = 0;  // trie nodes whose bytes the grammar could take
    size_t allowed = 0;        // tokens set in the mask
};

// mask[id] = 1 for every token whose bytes the state can take next (the rest 0), for the
// trie's vocabulary. Tokens without text (control tokens, end of generation) are 0: whether
// generation may end is state.is_complete(). Depth-first over the trie carrying the stacks
// byte by byte; a byte no stack can take prunes its whole subtree.
MaskStats token_mask(const GrammarState &state, const TokenTrie &trie, std::vector<uint8_t> &mask);

// Whether one token may come next: its bytes run through a copy of the state. What the
// sampler asks first about the token it chose, before paying for a mask.
bool token_allowed(const GrammarState &state, const TokenTrie &trie, int32_t token);

}  // namespace vkllm::grammar
