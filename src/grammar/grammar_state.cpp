#include "grammar/grammar_state.h"

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "grammar/config_table.h"

namespace vkllm::grammar {

namespace {

[[noreturn]] void too_ambiguous() {
    fail(VKLLM_ERR_INVALID_ARGUMENT,
         "grammar: more than %zu parse branches are alive at once; the grammar is too ambiguous "
         "(alternatives that match the same text, repeated or nested)",
         kMaxStacks);
}

// Appends the expansions of `stack` to `out` (duplicates included: the caller merges them).
// Left recursion is refused at parse time, so every path down the references ends at a class or
// an empty stack; `budget` bounds the paths, which rules that may be empty can multiply
// (r1 ::= r2 r2, r2 ::= r3 r3, ... with every rN nullable has 2^N of them).
void expand_into(const Grammar &g, Stack stack, std::vector<Stack> &out, size_t &budget) {
    const std::vector<Element> &e = g.elements;
    std::vector<Stack> todo;
    todo.push_back(std::move(stack));
    while (!todo.empty()) {
        if (budget-- == 0) too_ambiguous();
        Stack s = std::move(todo.back());
        todo.pop_back();
        if (s.empty() || e[s.back()].type != ElementType::RuleRef) {
            out.push_back(std::move(s));
            continue;
        }
        uint32_t ref = s.back();
        s.pop_back();
        if (!ends_alternative(e[ref + 1].type)) s.push_back(ref + 1);
        uint32_t alt = g.rule_start[e[ref].value];
        while (true) {
            Stack next = s;
            if (!ends_alternative(e[alt].type)) next.push_back(alt);
            todo.push_back(std::move(next));
            while (!ends_alternative(e[alt].type))
                ++alt;
            if (e[alt].type == ElementType::End) break;
            ++alt;
        }
    }
}

// Sorts and merges equal stacks: branches that meet again are followed once.
void merge(std::vector<Stack> &stacks) {
    std::sort(stacks.begin(), stacks.end());
    stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
    if (stacks.size() > kMaxStacks) too_ambiguous();
}

constexpr size_t kExpansionBudget = 64 * kMaxStacks;

}  // namespace

void expand(const Grammar &g, const Stack &stack, std::vector<Stack> &out) {
    size_t budget = kExpansionBudget;
    expand_into(g, stack, out, budget);
    merge(out);
}

std::vector<Stack> initial_stacks(const Grammar &g, uint32_t rule) {
    std::vector<Stack> out;
    size_t budget = kExpansionBudget;
    uint32_t alt = g.rule_start[rule];
    while (true) {
        Stack s;
        if (!ends_alternative(g.elements[alt].type)) s.push_back(alt);
        expand_into(g, std::move(s), out, budget);
        while (!ends_alternative(g.elements[alt].type))
            ++alt;
        if (g.elements[alt].type == ElementType::End) break;
        ++alt;
    }
    merge(out);
    return out;
}

GrammarState::GrammarState(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
    reset();
}

GrammarState::TableSlot::TableSlot() = default;
GrammarState::TableSlot::TableSlot(const TableSlot &) {}
GrammarState::TableSlot::TableSlot(TableSlot &&) noexcept = default;
GrammarState::TableSlot &GrammarState::TableSlot::operator=(const TableSlot &other) {
    if (this != &other) table.reset();
    return *this;
}
GrammarState::TableSlot &GrammarState::TableSlot::operator=(TableSlot &&) noexcept = default;
GrammarState::TableSlot::~TableSlot() = default;

ConfigTable &GrammarState::config_table() const {
    if (!table_.table) table_.table = std::make_unique<ConfigTable>(grammar_);
    return *table_.table;
}

void GrammarState::reset() {
    stacks_ = initial_stacks(*grammar_, grammar_->root);
    partial_ = PartialUtf8{};
}

bool step_codepoint(const Grammar &g, const std::vector<Stack> &stacks, uint32_t cp,
                    std::vector<Stack> &out) {
    const std::vector<Element> &e = g.elements;
    out.clear();
    size_t budget = kExpansionBudget;
    for (const Stack &s : stacks) {
        if (s.empty()) continue;
        uint32_t next;
        if (!class_matches(e, s.back(), cp, &next)) continue;
        Stack moved(s.begin(), s.end() - 1);
        if (!ends_alternative(e[next].type)) moved.push_back(next);
        expand_into(g, std::move(moved), out, budget);
    }
    if (out.empty()) return false;
    merge(out);
    return true;
}

bool advance_codepoint(const Grammar &g, std::vector<Stack> &stacks, uint32_t cp) {
    std::vector<Stack> out;
    if (!step_codepoint(g, stacks, cp, out)) return false;
    stacks = std::move(out);
    return true;
}

namespace {

// Some stack can take a code point the partial character may still become.
bool feasible(const Grammar &g, const std::vector<Stack> &stacks, const PartialUtf8 &partial) {
    uint32_t low, high;
    if (!utf8_completions(partial, low, high)) return false;
    for (const Stack &s : stacks)
        if (!s.empty() && class_may_match(g.elements, s.back(), low, high)) return true;
    return false;
}

}  // namespace

bool advance_byte(const Grammar &g, std::vector<Stack> &stacks, PartialUtf8 &p, uint8_t byte) {
    uint32_t cp = 0;
    switch (utf8_step(p, byte, cp)) {
        case Utf8Step::Invalid:
            return false;
        case Utf8Step::Pending:
            return feasible(g, stacks, p);
        case Utf8Step::Complete:
            return advance_codepoint(g, stacks, cp);
    }
    return false;
}

bool GrammarState::accept_codepoint(uint32_t cp) {
    if (partial_.remaining != 0) return false;
    return advance_codepoint(*grammar_, stacks_, cp);
}

bool GrammarState::accept_bytes(std::string_view bytes) {
    // On copies, so that a rejection leaves the state as it was.
    std::vector<Stack> stacks = stacks_;
    PartialUtf8 p = partial_;
    for (char ch : bytes)
        if (!advance_byte(*grammar_, stacks, p, uint8_t(ch))) return false;
    stacks_ = std::move(stacks);
    partial_ = p;
    return true;
}

bool GrammarState::is_complete() const {
    if (partial_.remaining != 0) return false;
    for (const Stack &s : stacks_)
        if (s.empty()) return true;
    return false;
}

bool GrammarState::must_end() const {
    if (partial_.remaining != 0) return false;
    for (const Stack &s : stacks_)
        if (!s.empty()) return false;
    return true;
}

}  // namespace vkllm::grammar
