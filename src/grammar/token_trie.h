// The vocabulary as a trie of each token's decoded bytes, built once per tokenizer and shared by
// every grammar over it. The mask walks it: tokens that share a prefix share the work of
// matching that prefix, and a byte the grammar refuses prunes every token below it at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vkllm::tokenizer {
class Tokenizer;
}

namespace vkllm::grammar {

class TokenTrie {
  public:
    struct Node {
        uint32_t first_edge = 0, edge_count = 0;    // into edges(), sorted by byte
        uint32_t first_token = 0, token_count = 0;  // into tokens(): the ids spelled up to here
    };
    struct Edge {
        uint8_t byte;
        uint32_t child;
    };
    // A node as the mask's walk reads it. The nodes are numbered depth first, children in byte
    // order, so a node's subtree is the range [id, subtree_end) and its tokens are
    // tokens()[first_token, preorder()[id + 1].first_token): the walk is one pass over this
    // array, skipping a refused subtree with one jump.
    struct Visit {
        uint32_t subtree_end;
        uint32_t first_token;
        uint32_t depth;  // bytes from the root: the node's parent is the last node before it
                         // at depth - 1
        uint8_t byte;    // the byte of the edge into the node (0 at the root)
    };

    // pieces[id]: the bytes token id stands for in generated text; an empty piece (control
    // tokens, BOS) is in no node, so text never allows it.
    explicit TokenTrie(const std::vector<std::string> &pieces);
    // The pieces as generated text shows them (Tokenizer::piece without special text).
    static TokenTrie from_tokenizer(const tokenizer::Tokenizer &tokenizer);

    const std::vector<Node> &nodes() const { return nodes_; }  // nodes()[0] is the root
    const std::vector<Edge> &edges() const { return edges_; }
    const std::vector<int32_t> &tokens() const { return tokens_; }
    // One Visit per node, then one whose first_token is tokens().size().
    const std::vector<Visit> &preorder() const { return preorder_; }
    size_t max_depth() const { return max_depth_; }
    size_t vocab_size() const { return pieces_.size(); }
    const std::string &piece(int32_t id) const { return pieces_[size_t(id)]; }
    // What the trie holds in memory, its copy of the pieces included.
    size_t memory_bytes() const;

  private:
    std::vector<Node> nodes_;
    std::vector<Edge> edges_;
    std::vector<int32_t> tokens_;
    std::vector<Visit> preorder_;
    size_t max_depth_ = 0;
    std::vector<std::string> pieces_;
};

}  // namespace vkllm::grammar
