#include "grammar/grammar.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/error.h"

namespace vkllm::grammar {

CharClass read_class(const std::vector<Element> &e, uint32_t pos) {
    CharClass c;
    c.negated = e[pos].type == ElementType::CharNot;
    c.any = e[pos].type == ElementType::CharAny;
    if (c.any) {
        c.next = pos + 1;
        return c;
    }
    do {
        uint32_t low = e[pos].value, high = low;
        if (e[pos + 1].type == ElementType::CharUpper) {
            high = e[pos + 1].value;
            ++pos;
        }
        c.ranges.emplace_back(low, high);
        ++pos;
    } while (e[pos].type == ElementType::CharAlt);
    c.next = pos;
    return c;
}

bool class_matches(const std::vector<Element> &e, uint32_t pos, uint32_t cp, uint32_t *next) {
    // The hot path of the engine: no allocation, one pass over the class.
    if (e[pos].type == ElementType::CharAny) {
        *next = pos + 1;
        return true;
    }
    bool negated = e[pos].type == ElementType::CharNot;
    bool found = false;
    do {
        uint32_t low = e[pos].value, high = low;
        if (e[pos + 1].type == ElementType::CharUpper) {
            high = e[pos + 1].value;
            ++pos;
        }
        found = found || (low <= cp && cp <= high);
        ++pos;
    } while (e[pos].type == ElementType::CharAlt);
    *next = pos;
    return found != negated;
}

bool class_may_match(const std::vector<Element> &e, uint32_t pos, uint32_t low, uint32_t high) {
    CharClass c = read_class(e, pos);
    if (c.any) return true;
    if (!c.negated) {
        for (auto [a, b] : c.ranges)
            if (a <= high && low <= b) return true;
        return false;
    }
    // A negated class matches some code point of [low, high] unless its ranges cover all of it.
    std::sort(c.ranges.begin(), c.ranges.end());
    uint64_t first_uncovered = low;
    for (auto [a, b] : c.ranges) {
        if (a > first_uncovered) break;
        first_uncovered = std::max<uint64_t>(first_uncovered, uint64_t(b) + 1);
    }
    return first_uncovered <= high;
}

namespace {

void append_char(std::string &out, uint32_t cp, bool first_in_class) {
    switch (cp) {
        case '\t':
            out += "\\t";
            return;
        case '\n':
            out += "\\n";
            return;
        case '\r':
            out += "\\r";
            return;
        case '\\':
            out += "\\\\";
            return;
        case '"':
            out += "\\\"";
            return;
        case '[':
            out += "\\[";
            return;
        case ']':
            out += "\\]";
            return;
        case '-':
            out += "\\-";
            return;
        default:
            break;
    }
    if (cp == '^' && first_in_class) {
        out += "\\x5E";  // "[^" would negate the class
    } else if (cp >= 0x20 && cp < 0x7f) {
        out += char(cp);
    } else if (cp <= 0xff) {
        out += sformat("\\x%02X", cp);
    } else if (cp <= 0xffff) {
        out += sformat("\\u%04X", cp);
    } else {
        out += sformat("\\U%08X", cp);
    }
}

// Printable names: helper rules are "owner#N" inside (no user name has '#'); printed as
// "owner-N", with more dashes where a user rule already has that name, so the text parses back.
std::vector<std::string> printable_names(const Grammar &g) {
    std::set<std::string> taken(g.names.begin(), g.names.end());
    std::vector<std::string> names = g.names;
    for (std::string &n : names) {
        size_t hash = n.find('#');
        if (hash == std::string::npos) continue;
        std::string candidate = n.substr(0, hash) + "-" + n.substr(hash + 1);
        while (taken.count(candidate))
            candidate.insert(hash, "-");
        taken.insert(candidate);
        n = candidate;
    }
    return names;
}

}  // namespace

std::string to_gbnf(const Grammar &g) {
    std::vector<std::string> names = printable_names(g);
    std::string out;
    for (size_t r = 0; r < g.rule_count(); ++r) {
        out += names[r] + " ::=";
        uint32_t pos = g.rule_start[r];
        bool empty = true;  // the alternative so far has no item
        while (true) {
            const Element &el = g.elements[pos];
            if (ends_alternative(el.type)) {
                // An empty alternative is written "": a newline right after ::= or | would
                // continue the rule on the next line.
                if (empty) out += " \"\"";
                if (el.type == ElementType::End) break;
                out += " |";
                empty = true;
                ++pos;
                continue;
            }
            empty = false;
            if (el.type == ElementType::RuleRef) {
                out += " " + names[el.value];
                ++pos;
            } else if (el.type == ElementType::CharAny) {
                out += " .";
                ++pos;
            } else {
                CharClass c = read_class(g.elements, pos);
                out += c.negated ? " [^" : " [";
                bool first = true;
                for (auto [a, b] : c.ranges) {
                    append_char(out, a, first && !c.negated);
                    first = false;
                    if (b != a) {
                        out += '-';
                        append_char(out, b, false);
                    }
                }
                out += ']';
                pos = c.next;
            }
        }
        out += '\n';
    }
    return out;
}

}  // namespace vkllm::grammar
