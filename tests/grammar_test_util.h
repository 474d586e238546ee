// Helpers of the grammar tests: compile GBNF text, run text through a GrammarState, catch a
// parse error's message.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar::testing {

inline std::shared_ptr<const Grammar> compile(std::string_view text,
                                              std::string_view root = "root") {
    return std::make_shared<const Grammar>(parse_gbnf(text, root));
}

// The whole text is a sentence of the grammar, fed at once and fed byte by byte (every split of
// a UTF-8 character between two tokens).
inline bool matches(const std::shared_ptr<const Grammar> &g, std::string_view text) {
    GrammarState whole(g);
    bool at_once = whole.accept_bytes(text) && whole.is_complete();
    GrammarState bytes(g);
    bool ok = true;
    for (char c : text)
        ok = ok && bytes.accept_bytes(std::string_view(&c, 1));
    bool by_byte = ok && bytes.is_complete();
    EXPECT_EQ(at_once, by_byte) << "feeding \"" << text << "\" at once and byte by byte disagree";
    return at_once;
}

inline bool matches(std::string_view grammar, std::string_view text) {
    return matches(compile(grammar), text);
}

// The text can be continued into a sentence (every byte accepted), complete or not.
inline bool is_prefix(const std::shared_ptr<const Grammar> &g, std::string_view text) {
    GrammarState s(g);
    return s.accept_bytes(text);
}

// The message of the error parsing `text` raises, or "" when it parses.
inline std::string parse_error(std::string_view text, std::string_view root = "root",
                               const GbnfLimits &limits = {}) {
    try {
        parse_gbnf(text, root, limits);
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_INVALID_ARGUMENT);
        return e.what();
    }
    return "";
}

// Random derivations: from the start, pick uniformly among the code points of a small
// alphabet that some live stack can take, until the grammar is complete (and a coin says stop,
// so that long sentences are reached too). Past a soft bound, closing characters are preferred
// so that recursive schemas end.

inline std::vector<uint32_t> alphabet_for(const std::string &schema_text) {
    std::set<uint32_t> cps;
    for (const char *base : {"{}[]\",: \n\t0123456789-+.eEabcdfnrtulsxyzTZABCDEFu\\/@",
                             "\xC3\xA9\xE6\x97\xA5", "\xF0\x9F\x98\x80"}) {
        size_t pos = 0;
        uint32_t cp;
        std::string s = base;
        while (tokenizer::utf8_next(s, pos, cp))
            cps.insert(cp);
    }
    size_t pos = 0;
    uint32_t cp;
    while (tokenizer::utf8_next(schema_text, pos, cp))
        if (cp >= 0x20) cps.insert(cp);
    return {cps.begin(), cps.end()};
}

struct Derivation {
    std::string text;
    bool complete = false;
    bool stuck = false;
};

inline Derivation derive(const std::shared_ptr<const Grammar> &g,
                         const std::vector<uint32_t> &alphabet, std::mt19937 &rng) {
    GrammarState state(g);
    Derivation d;
    for (int step = 0; step < 4000; ++step) {
        if (state.is_complete() && (state.must_end() || rng() % 4 == 0)) break;
        std::vector<uint32_t> allowed;
        for (uint32_t cp : alphabet)
            for (const Stack &stack : state.stacks()) {
                uint32_t next;
                if (!stack.empty() && class_matches(g->elements, stack.back(), cp, &next)) {
                    allowed.push_back(cp);
                    break;
                }
            }
        if (allowed.empty()) {
            d.stuck = !state.is_complete();
            break;
        }
        uint32_t pick = allowed[rng() % allowed.size()];
        if (step > 200) {
            for (uint32_t closer : {uint32_t('"'), uint32_t(']'), uint32_t('}'), uint32_t('0')})
                if (std::find(allowed.begin(), allowed.end(), closer) != allowed.end()) {
                    pick = closer;
                    break;
                }
        }
        EXPECT_TRUE(state.accept_codepoint(pick)) << "a code point a stack top matches is refused";
        tokenizer::utf8_append(d.text, pick);
    }
    d.complete = state.is_complete();
    return d;
}

}  // namespace vkllm::grammar::testing
