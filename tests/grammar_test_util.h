// Helpers of the grammar tests: compile GBNF text, run text through a GrammarState, catch a
// parse error's message.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_state.h"

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

}  // namespace vkllm::grammar::testing
