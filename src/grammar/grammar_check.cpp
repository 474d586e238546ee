#include "grammar/grammar_check.h"

#include <utility>

namespace vkllm::grammar {

namespace {

// Calls f(rule, first element, one-past-last element) for every alternative of every rule.
template <typename F>
void for_each_alternative(const Grammar &g, F f) {
    for (uint32_t r = 0; r < g.rule_count(); ++r) {
        uint32_t begin = g.rule_start[r];
        for (uint32_t pos = begin;; ++pos) {
            ElementType t = g.elements[pos].type;
            if (!ends_alternative(t)) continue;
            f(r, begin, pos);
            if (t == ElementType::End) break;
            begin = pos + 1;
        }
    }
}

}  // namespace

std::vector<bool> nullable_rules(const Grammar &g) {
    // A worklist over alternatives, linear in the grammar's size: an alternative becomes empty
    // once every rule it references is nullable; one with a terminal never does. (A fixpoint
    // that rescans everything is quadratic on a hostile chain of rules.)
    size_t n = g.rule_count();
    std::vector<bool> nullable(n, false);
    std::vector<uint32_t> alt_rule, pending;        // per alternative
    std::vector<std::vector<uint32_t>> used_in(n);  // rule -> alternatives using it
    std::vector<uint32_t> work;
    for_each_alternative(g, [&](uint32_t r, uint32_t begin, uint32_t end) {
        uint32_t alt = uint32_t(alt_rule.size());
        uint32_t refs = 0;
        bool terminal = false;
        for (uint32_t p = begin; p < end; ++p) {
            const Element &e = g.elements[p];
            if (e.type == ElementType::RuleRef) {
                used_in[e.value].push_back(alt);
                ++refs;
            } else {
                terminal = true;
            }
        }
        alt_rule.push_back(r);
        // A terminal keeps the alternative from ever being empty: its count never reaches 0.
        pending.push_back(terminal ? UINT32_MAX : refs);
        if (!terminal && refs == 0 && !nullable[r]) {
            nullable[r] = true;
            work.push_back(r);
        }
    });
    while (!work.empty()) {
        uint32_t r = work.back();
        work.pop_back();
        for (uint32_t alt : used_in[r]) {
            if (pending[alt] == UINT32_MAX || --pending[alt] != 0) continue;
            uint32_t owner = alt_rule[alt];
            if (!nullable[owner]) {
                nullable[owner] = true;
                work.push_back(owner);
            }
        }
    }
    return nullable;
}

int64_t find_left_recursion(const Grammar &g) {
    std::vector<bool> nullable = nullable_rules(g);
    size_t n = g.rule_count();
    // Edges A -> B: B can be the first thing A expands to.
    std::vector<std::vector<uint32_t>> first(n);
    for_each_alternative(g, [&](uint32_t r, uint32_t begin, uint32_t end) {
        for (uint32_t p = begin; p < end; ++p) {
            const Element &e = g.elements[p];
            if (e.type != ElementType::RuleRef) break;
            first[r].push_back(e.value);
            if (!nullable[e.value]) break;
        }
    });
    // Iterative depth-first search (a recursive one overflows on 100,000 chained rules).
    enum : uint8_t { kNew, kOpen, kDone };
    std::vector<uint8_t> state(n, kNew);
    std::vector<std::pair<uint32_t, size_t>> stack;
    for (uint32_t start = 0; start < n; ++start) {
        if (state[start] != kNew) continue;
        stack.emplace_back(start, 0);
        state[start] = kOpen;
        while (!stack.empty()) {
            auto &[r, next] = stack.back();
            if (next == first[r].size()) {
                state[r] = kDone;
                stack.pop_back();
                continue;
            }
            uint32_t to = first[r][next++];
            if (state[to] == kOpen) return to;
            if (state[to] == kNew) {
                state[to] = kOpen;
                stack.emplace_back(to, 0);
            }
        }
    }
    return -1;
}

}  // namespace vkllm::grammar
