#include "grammar/token_trie.h"

#include <algorithm>
#include <numeric>

#include "tokenizer/tokenizer.h"

namespace vkllm::grammar {

TokenTrie::TokenTrie(const std::vector<std::string> &pieces) : pieces_(pieces) {
    // Ids in byte order of their pieces: then each piece's path is its predecessor's up to their
    // common prefix, plus new nodes, created in depth-first order; one pass, no per-node map.
    std::vector<int32_t> order;
    order.reserve(pieces.size());
    for (size_t id = 0; id < pieces.size(); ++id)
        if (!pieces[id].empty()) order.push_back(int32_t(id));
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return pieces[size_t(a)] < pieces[size_t(b)]; });

    std::vector<std::vector<Edge>> children(1);
    std::vector<std::vector<int32_t>> ending(1);
    std::vector<uint32_t> path{0};  // path[d]: the node after d bytes of the previous piece
    const std::string *previous = nullptr;
    for (int32_t id : order) {
        const std::string &p = pieces[size_t(id)];
        size_t common = 0;
        if (previous) {
            size_t limit = std::min(previous->size(), p.size());
            while (common < limit && (*previous)[common] == p[common])
                ++common;
        }
        path.resize(common + 1);
        for (size_t d = common; d < p.size(); ++d) {
            uint32_t child = uint32_t(children.size());
            children.emplace_back();
            ending.emplace_back();
            children[path[d]].push_back({uint8_t(p[d]), child});
            path.push_back(child);
        }
        ending[path[p.size()]].push_back(id);
        previous = &p;
    }

    nodes_.resize(children.size());
    for (size_t n = 0; n < children.size(); ++n) {
        Node &node = nodes_[n];
        node.first_edge = uint32_t(edges_.size());
        node.edge_count = uint32_t(children[n].size());
        edges_.insert(edges_.end(), children[n].begin(), children[n].end());
        node.first_token = uint32_t(tokens_.size());
        node.token_count = uint32_t(ending[n].size());
        tokens_.insert(tokens_.end(), ending[n].begin(), ending[n].end());
    }

    // Nodes were created in the sorted pieces' order, which is depth first with children in
    // byte order; every child comes after its parent, so one backward pass closes subtrees.
    preorder_.resize(nodes_.size() + 1);
    for (size_t n = 0; n < nodes_.size(); ++n) {
        preorder_[n].first_token = nodes_[n].first_token;
        for (uint32_t e = 0; e < nodes_[n].edge_count; ++e) {
            const Edge &edge = edges_[nodes_[n].first_edge + e];
            preorder_[edge.child].depth = preorder_[n].depth + 1;
            preorder_[edge.child].byte = edge.byte;
        }
        max_depth_ = std::max<size_t>(max_depth_, preorder_[n].depth);
    }
    for (size_t n = nodes_.size(); n-- > 0;) {
        const Node &node = nodes_[n];
        preorder_[n].subtree_end =
            node.edge_count == 0
                ? uint32_t(n + 1)
                : preorder_[edges_[node.first_edge + node.edge_count - 1].child].subtree_end;
    }
    preorder_[nodes_.size()].first_token = uint32_t(tokens_.size());
}

size_t TokenTrie::memory_bytes() const {
    size_t bytes = nodes_.capacity() * sizeof(Node) + edges_.capacity() * sizeof(Edge) +
                   tokens_.capacity() * sizeof(int32_t) + preorder_.capacity() * sizeof(Visit) +
                   pieces_.capacity() * sizeof(std::string);
    for (const std::string &p : pieces_)
        if (p.capacity() > std::string().capacity()) bytes += p.capacity() + 1;
    return bytes;
}

TokenTrie TokenTrie::from_tokenizer(const tokenizer::Tokenizer &tokenizer) {
    std::vector<std::string> pieces(size_t(tokenizer.vocab().size()));
    for (size_t id = 0; id < pieces.size(); ++id)
        pieces[id] = tokenizer.piece(int32_t(id), false);
    return TokenTrie(pieces);
}

}  // namespace vkllm::grammar
