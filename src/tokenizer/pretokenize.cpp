#include "tokenizer/pretokenize.h"

#include <utility>

namespace vkllm::tokenizer {

PreTokenizer::PreTokenizer(const PreTokenizerRules &rules) : rules_(rules) {
    for (const char *pattern : rules.regexes)
        if (pattern) regexes_.emplace_back(pattern);
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
    CodePoints t(text);
    std::vector<std::pair<size_t, size_t>> pieces, next;
    if (t.size() > 0) pieces.push_back({0, t.size()});
    std::vector<Regex::Match> matches;
    for (const Regex &regex : regexes_) {
        next.clear();
        for (auto [begin, end] : pieces) {
            matches.clear();
            regex.find_all(t, begin, end, matches);
            // Matches and the text between them are pieces alike; empty matches only split.
            size_t at = begin;
            for (const Regex::Match &m : matches) {
                if (m.begin > at) next.push_back({at, m.begin});
                if (m.end > m.begin) next.push_back({m.begin, m.end});
                at = m.end > at ? m.end : at;
            }
            if (at < end) next.push_back({at, end});
        }
        pieces.swap(next);
    }
    std::vector<std::string_view> out;
    out.reserve(pieces.size());
    for (auto [begin, end] : pieces)
        out.push_back(text.substr(t.offset(begin), t.offset(end) - t.offset(begin)));
    return out;
}

}  // namespace vkllm::tokenizer
