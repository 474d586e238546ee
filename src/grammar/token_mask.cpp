#include "grammar/token_mask.h"

#include <string>
#include <unordered_map>
#include <utility>

namespace vkllm::grammar {

namespace {

// The parse configurations (stacks + half a character) met during one walk, each with its
// transitions by byte, computed once. Inside a JSON string every character leads back to the
// same configuration, so the walk over most of the vocabulary becomes table look-ups instead
// of stack copies: a lazily built automaton over the parser's configurations.
class Configurations {
  public:
    explicit Configurations(const Grammar &g) : g_(g) {}

    int32_t add(std::vector<Stack> stacks, PartialUtf8 partial) {
        std::string key = key_of(stacks, partial);
        auto [it, added] = index_.emplace(std::move(key), int32_t(configs_.size()));
        if (added) configs_.push_back({std::move(stacks), partial});
        return it->second;
    }

    // The configuration after `byte`, or -1 when the grammar refuses it.
    int32_t step(int32_t from, uint8_t byte) {
        uint64_t edge = uint64_t(from) << 8 | byte;
        auto found = next_.find(edge);
        if (found != next_.end()) return found->second;
        std::vector<Stack> stacks = configs_[size_t(from)].stacks;
        PartialUtf8 partial = configs_[size_t(from)].partial;
        int32_t to = -1;
        if (advance_byte(g_, stacks, partial, byte)) to = add(std::move(stacks), partial);
        next_.emplace(edge, to);
        return to;
    }

  private:
    static std::string key_of(const std::vector<Stack> &stacks, const PartialUtf8 &p) {
        std::string key;
        auto put = [&key](uint32_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
        put(p.value);
        put(p.remaining);
        put(p.length);
        for (const Stack &s : stacks) {
            put(uint32_t(s.size()));
            for (uint32_t pos : s)
                put(pos);
        }
        return key;
    }

    struct Config {
        std::vector<Stack> stacks;
        PartialUtf8 partial;
    };
    const Grammar &g_;
    std::vector<Config> configs_;
    // (configuration << 8 | byte) -> the next one or -1; sparse, as a walk tries few bytes of
    // most configurations (a table of 256 per configuration costs 1 KiB each, and a grammar
    // that tells every token apart has as many configurations as trie nodes).
    std::unordered_map<uint64_t, int32_t> next_;
    std::unordered_map<std::string, int32_t> index_;
};

}  // namespace

MaskStats token_mask(const GrammarState &state, const TokenTrie &trie, std::vector<uint8_t> &mask) {
    MaskStats stats;
    mask.assign(trie.vocab_size(), 0);
    const auto &nodes = trie.nodes();
    const auto &edges = trie.edges();
    const auto &tokens = trie.tokens();
    Configurations configs(state.grammar());

    // An explicit stack of frames: the longest piece (hundreds of blanks in some vocabularies)
    // sets the depth, which a recursive walk would put on the thread's stack.
    struct Frame {
        uint32_t node;
        uint32_t next_edge;  // the next child to try
        int32_t config;
    };
    std::vector<Frame> frames;
    frames.push_back({0, 0, configs.add(state.stacks(), state.partial())});
    while (!frames.empty()) {
        Frame &top = frames.back();
        const TokenTrie::Node &node = nodes[top.node];
        if (top.next_edge == node.edge_count) {
            frames.pop_back();
            continue;
        }
        const TokenTrie::Edge &edge = edges[node.first_edge + top.next_edge++];
        int32_t to = configs.step(top.config, edge.byte);
        if (to < 0) continue;
        ++stats.nodes_visited;
        const TokenTrie::Node &reached = nodes[edge.child];
        for (uint32_t i = 0; i < reached.token_count; ++i) {
            mask[size_t(tokens[reached.first_token + i])] = 1;
            ++stats.allowed;
        }
        if (reached.edge_count > 0) frames.push_back({edge.child, 0, to});
    }
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
