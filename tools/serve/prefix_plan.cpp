#include "prefix_plan.h"

#include <algorithm>

namespace serve {

static size_t common_prefix(const std::vector<int32_t> &a, const std::vector<int32_t> &b) {
    size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i])
        ++i;
    return i;
}

PrefixPlan plan_prefix(const std::vector<SlotView> &slots, const std::vector<int32_t> &prompt,
                       bool reuse) {
    const size_t limit = prompt.empty() ? 0 : prompt.size() - 1;
    std::vector<size_t> shared(slots.size(), 0);
    if (reuse)
        for (size_t i = 0; i < slots.size(); ++i)
            shared[i] = std::min(common_prefix(*slots[i].cache, prompt), limit);

    PrefixPlan plan;
    bool found = false;
    for (size_t i = 0; i < slots.size(); ++i) {
        if (!slots[i].free) continue;
        // Among free slots sharing nothing, the one holding least: it loses the least.
        if (!found || shared[i] > plan.keep ||
            (shared[i] == plan.keep && shared[i] == 0 &&
             slots[i].cache->size() < slots[plan.slot].cache->size())) {
            plan.slot = uint32_t(i);
            plan.keep = shared[i];
            found = true;
        }
    }
    for (size_t i = 0; i < slots.size(); ++i) {
        if (i != plan.slot && shared[i] > plan.keep) {
            plan.fork_from = int32_t(i);
            plan.keep = shared[i];
        }
    }
    return plan;
}

}  // namespace serve
