// Where a new prompt goes: the free slot whose cache shares the longest prefix with it, or a
// fork of another slot (busy or free) that shares more. At least one prompt token is always
// left to evaluate, for the logits the first token is sampled from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace serve {

struct SlotView {
    const std::vector<int32_t> *cache;  // the token ids in the slot's sequence
    bool free;
};

struct PrefixPlan {
    uint32_t slot = 0;       // the free slot the prompt is prefilled into
    int32_t fork_from = -1;  // a slot to fork the first `keep` positions from, or -1
    size_t keep = 0;         // prompt tokens already there after the truncate or fork
};

// `reuse` false (the caller needs every prompt position's logits): keep nothing. Needs at
// least one free slot; prefers, among equals, the lowest slot.
PrefixPlan plan_prefix(const std::vector<SlotView> &slots, const std::vector<int32_t> &prompt,
                       bool reuse);

}  // namespace serve
