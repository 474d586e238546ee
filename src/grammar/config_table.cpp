#include "grammar/config_table.h"

#include <utility>

namespace vkllm::grammar {

namespace {

// A configuration gets its dense row at its fourth computed transition: the few stepped from
// once or twice (deep in the trie, below rare prefixes) stay in the map, while the hot ones
// (a JSON string's, a number's) get a row within the first walk. The row count is bounded so
// that the rows of one state stay under 4 MiB.
constexpr uint8_t kRowAfterMisses = 4;
constexpr size_t kMaxRows = 4096;

// What a configuration, a row and a map entry cost, for the budget: the bytes held, roughly
// (vector and map node headers included), not the allocator's exact figure.
constexpr size_t kConfigOverhead = sizeof(std::vector<Stack>) + sizeof(PartialUtf8) + 64;
constexpr size_t kRowBytes = 256 * sizeof(int32_t);
constexpr size_t kSparseEntryBytes = 32;

std::string key_of(const std::vector<Stack> &stacks, const PartialUtf8 &p) {
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

}  // namespace

ConfigTable::ConfigTable(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {}

int32_t ConfigTable::intern(const std::vector<Stack> &stacks, const PartialUtf8 &partial) {
    std::string key = key_of(stacks, partial);
    auto found = index_.find(key);
    if (found != index_.end()) return found->second;
    int32_t id = int32_t(configs_.size());
    // The key once in the index, the stacks once more (their elements and vector headers).
    bytes_ += kConfigOverhead + 2 * key.size() + stacks.size() * sizeof(Stack);
    index_.emplace(std::move(key), id);
    // The copy is made before push_back can reallocate: `stacks` may be another
    // configuration's (step_slow's Partial case).
    configs_.push_back(Config{stacks, partial});
    row_of_.push_back(-1);
    misses_.push_back(0);
    return id;
}

int32_t ConfigTable::step_slow(int32_t from, uint8_t byte) {
    size_t f = size_t(from);
    uint64_t edge = uint64_t(from) << 8 | byte;
    int32_t to = kRefused;
    auto known = row_of_[f] < 0 ? sparse_.find(edge) : sparse_.end();
    if (known != sparse_.end()) {
        to = known->second;
    } else {
        PartialUtf8 partial = configs_[f].partial;
        switch (step_byte(*grammar_, configs_[f].stacks, partial, byte, scratch_)) {
            case ByteStep::Refused:
                to = kRefused;
                break;
            case ByteStep::Partial:
                to = intern(configs_[f].stacks, partial);
                break;
            case ByteStep::Advanced:
                to = intern(scratch_, partial);
                break;
        }
    }
    if (row_of_[f] < 0 && misses_[f] < kRowAfterMisses) ++misses_[f];
    if (row_of_[f] < 0 && misses_[f] == kRowAfterMisses && rows() < kMaxRows) {
        row_of_[f] = int32_t(rows());
        rows_.resize(rows_.size() + 256, kUnknown);
        bytes_ += kRowBytes;
    }
    if (row_of_[f] >= 0) {
        rows_[size_t(row_of_[f]) << 8 | byte] = to;
    } else if (known == sparse_.end()) {
        sparse_.emplace(edge, to);
        bytes_ += kSparseEntryBytes;
    }
    return to;
}

void ConfigTable::trim(size_t budget) {
    if (bytes_ > budget) clear();
}

void ConfigTable::clear() {
    configs_ = {};
    row_of_ = {};
    misses_ = {};
    rows_ = {};
    sparse_ = {};
    index_ = {};
    bytes_ = 0;
}

}  // namespace vkllm::grammar
