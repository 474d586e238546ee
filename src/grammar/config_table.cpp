#include "grammar/config_table.h"

#include <algorithm>
#include <utility>

namespace vkllm::grammar {

namespace {

// A configuration gets its row at its fourth step from a finished character without one: those
// stepped from once or twice (deep in the trie, below rare prefixes) find their transition by a
// search of their intervals, the hot ones (a JSON string's, a number's) by one load. The row
// count is bounded so that the rows of one state stay under 4 MiB.
constexpr uint8_t kRowAfterMisses = 4;
constexpr size_t kMaxRows = 4096;
constexpr size_t kRowBytes = 256 * sizeof(int32_t);

// What a configuration costs beyond its stacks, for the budget: its record, the headers of its
// vectors and its index entry, roughly, not the allocator's exact figure.
constexpr size_t kConfigOverhead = 256;

std::string key_of(const std::vector<Stack> &stacks) {
    std::string key;
    auto put = [&key](uint32_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
    for (const Stack &s : stacks) {
        put(uint32_t(s.size()));
        for (uint32_t pos : s)
            put(pos);
    }
    return key;
}

}  // namespace

ConfigTable::ConfigTable(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {}

int32_t ConfigTable::intern(const std::vector<Stack> &stacks) {
    std::string key = key_of(stacks);
    auto found = index_.find(key);
    if (found != index_.end()) return found->second;
    int32_t id = int32_t(configs_.size());
    // The key once in the index, the stacks once more (their elements and vector headers).
    bytes_ += kConfigOverhead + 2 * key.size() + stacks.size() * sizeof(Stack);
    index_.emplace(std::move(key), id);
    Config c;
    c.stacks = stacks;
    configs_.push_back(std::move(c));
    return id;
}

void ConfigTable::partition(Config &c) {
    const std::vector<Element> &e = grammar_->elements;
    std::vector<std::pair<uint32_t, uint32_t>> accepted;
    c.starts.assign(1, 0);
    // Each class once: many stacks can share a top (they differ below it), and the classes at
    // distinct positions add up to at most the grammar's elements.
    std::vector<uint32_t> tops;
    for (const Stack &s : c.stacks)
        if (!s.empty()) tops.push_back(s.back());
    std::sort(tops.begin(), tops.end());
    tops.erase(std::unique(tops.begin(), tops.end()), tops.end());
    for (uint32_t top : tops) {
        CharClass cls = read_class(e, top);
        if (cls.any) {
            accepted.emplace_back(0, kMaxCodePoint);
            continue;
        }
        std::sort(cls.ranges.begin(), cls.ranges.end());
        uint32_t uncovered = 0;  // for a negated class: where its complement resumes
        for (auto [low, high] : cls.ranges) {
            c.starts.push_back(low);
            if (high < kMaxCodePoint) c.starts.push_back(high + 1);
            if (!cls.negated) {
                accepted.emplace_back(low, high);
            } else {
                if (low > uncovered) accepted.emplace_back(uncovered, low - 1);
                uncovered =
                    std::max(uncovered, high < kMaxCodePoint ? high + 1 : kMaxCodePoint + 1);
            }
        }
        if (cls.negated && uncovered <= kMaxCodePoint)
            accepted.emplace_back(uncovered, kMaxCodePoint);
    }
    std::sort(c.starts.begin(), c.starts.end());
    c.starts.erase(std::unique(c.starts.begin(), c.starts.end()), c.starts.end());
    std::sort(accepted.begin(), accepted.end());
    c.accepted.clear();
    for (auto [low, high] : accepted) {
        if (!c.accepted.empty() && low <= uint64_t(c.accepted.back().second) + 1)
            c.accepted.back().second = std::max(c.accepted.back().second, high);
        else
            c.accepted.emplace_back(low, high);
    }
    // Every interval lies wholly inside or outside the accepted set: its bounds are among the
    // interval starts.
    c.next.resize(c.starts.size());
    size_t a = 0;
    for (size_t k = 0; k < c.starts.size(); ++k) {
        while (a < c.accepted.size() && c.accepted[a].second < c.starts[k])
            ++a;
        bool in = a < c.accepted.size() && c.accepted[a].first <= c.starts[k];
        c.next[k] = in ? kUnknown : kRefused;
    }
    c.high_interval =
        size_t(std::upper_bound(c.starts.begin(), c.starts.end(), 0x80u) - c.starts.begin()) - 1;
    c.uniform_high = c.high_interval + 1 == c.starts.size();
    c.partitioned = true;
    bytes_ += c.starts.size() * 2 * sizeof(uint32_t) + c.accepted.size() * 2 * sizeof(uint32_t);
}

bool ConfigTable::may_complete(const Config &c, const PartialUtf8 &partial) const {
    uint32_t low, high;
    if (!utf8_completions(partial, low, high)) return false;
    // The first accepted interval that ends at or after `low`.
    auto it = std::lower_bound(
        c.accepted.begin(), c.accepted.end(), low,
        [](const std::pair<uint32_t, uint32_t> &r, uint32_t v) { return r.second < v; });
    return it != c.accepted.end() && it->first <= high;
}

int32_t ConfigTable::step_codepoint(int32_t from, uint32_t cp) {
    Config &c = configs_[size_t(from)];
    size_t k =
        size_t(std::upper_bound(c.starts.begin(), c.starts.end(), cp) - c.starts.begin()) - 1;
    if (c.next[k] != kUnknown) return c.next[k];
    // Every code point of the interval takes the same stacks, so its start stands for all.
    int32_t to = kRefused;
    if (grammar::step_codepoint(*grammar_, c.stacks, c.starts[k], scratch_)) to = intern(scratch_);
    Config &after = configs_[size_t(from)];  // intern may have moved configs_
    after.next[k] = to;
    if (after.uniform_high && k == after.high_interval) after.high_next = to;
    return to;
}

bool ConfigTable::step_slow(const Position &from, uint8_t byte, Position &to) {
    if (!configs_[size_t(from.config)].partitioned) partition(configs_[size_t(from.config)]);
    PartialUtf8 partial = from.partial;
    uint32_t cp = 0;
    int32_t next = kRefused;
    switch (utf8_step(partial, byte, cp)) {
        case Utf8Step::Invalid:
            break;
        case Utf8Step::Pending:
            if (may_complete(configs_[size_t(from.config)], partial)) next = from.config;
            break;
        case Utf8Step::Complete:
            next = step_codepoint(from.config, cp);
            break;
    }
    if (from.partial.remaining == 0) {
        Config &c = configs_[size_t(from.config)];
        if (c.row < 0 && c.misses < kRowAfterMisses) ++c.misses;
        if (c.row < 0 && c.misses == kRowAfterMisses && rows_.size() / 256 < kMaxRows) {
            c.row = int32_t(rows_.size() / 256);
            rows_.resize(rows_.size() + 256, kUnknown);
            bytes_ += kRowBytes;
        }
        if (c.row >= 0) rows_[size_t(c.row) << 8 | byte] = next;
    }
    if (next == kRefused) return false;
    to.config = next;
    to.partial = partial;
    return true;
}

void ConfigTable::trim(size_t budget) {
    if (bytes_ > budget) clear();
}

void ConfigTable::clear() {
    configs_ = {};
    rows_ = {};
    index_ = {};
    bytes_ = 0;
}

}  // namespace vkllm::grammar
