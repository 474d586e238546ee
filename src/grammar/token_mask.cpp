#include "grammar/token_mask.h"

#include <string>

#include "grammar/config_table.h"

namespace vkllm::grammar {

namespace {

// The configuration table a state keeps between masks may hold this much; past it, it is emptied
// (before a walk, and after one that grew it past the budget) and rebuilt on demand.
constexpr size_t kTableBudget = size_t(32) << 20;

}  // namespace

MaskStats token_mask(const GrammarState &state, const TokenTrie &trie, std::vector<uint8_t> &mask) {
    MaskStats stats;
    mask.assign(trie.vocab_size(), 0);
    const std::vector<TokenTrie::Visit> &order = trie.preorder();
    const std::vector<int32_t> &tokens = trie.tokens();
    ConfigTable &table = state.config_table();
    table.trim(kTableBudget);

    // at_depth[d]: where the walk stands after the first d bytes of the node being visited,
    // that is, after its ancestors (depth first: an ancestor's entry is never overwritten while
    // its subtree is walked).
    std::vector<ConfigTable::Position> at_depth(trie.max_depth() + 1);
    at_depth[0].config = table.intern(state.stacks());
    at_depth[0].partial = state.partial();
    const size_t end = order.size() - 1;
    for (size_t i = 1; i < end;) {
        const TokenTrie::Visit &v = order[i];
        if (!table.step(at_depth[v.depth - 1], v.byte, at_depth[v.depth])) {
            i = v.subtree_end;  // no token below starts with bytes the grammar can take
            continue;
        }
        ++stats.nodes_visited;
        uint32_t last = order[i + 1].first_token;
        for (uint32_t t = v.first_token; t < last; ++t)
            mask[size_t(tokens[t])] = 1;
        stats.allowed += last - v.first_token;
        ++i;
    }
    table.trim(kTableBudget);
    return stats;
}

bool token_allowed(const GrammarState &state, const TokenTrie &trie, int32_t token) {
    if (token < 0 || size_t(token) >= trie.vocab_size()) return false;
    const std::string &piece = trie.piece(token);
    if (piece.empty()) return false;
    std::vector<Stack> stacks = state.stacks();
    PartialUtf8 partial = state.partial();
    for (char c : piece)
        if (!advance_byte(state.grammar(), stacks, partial, uint8_t(c))) return false;
    return true;
}

}  // namespace vkllm::grammar
