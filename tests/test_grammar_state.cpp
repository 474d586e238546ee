// The grammar engine (src/grammar/grammar_state): text fed as bytes, UTF-8 characters cut
// between tokens, rejection that leaves the state as it was, completion, and a dozen grammars
// of the kind apps ask for, each with sentences it must accept and texts it must refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "grammar_test_util.h"
#include "realistic_grammars.h"

namespace vkllm::grammar {
namespace {

using testing::compile;
using testing::GrammarCase;
using testing::is_prefix;
using testing::kGrammarCases;
using testing::kJson;
using testing::matches;

TEST(GrammarState, UnicodeCharactersCutAtEveryByteAreCarriedOver) {
    auto g = compile("root ::= \"é€😀\" [α-ω]");
    std::string text = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xCE\xB2";  // é € 😀 β
    for (size_t cut = 0; cut <= text.size(); ++cut) {
        GrammarState s(g);
        ASSERT_TRUE(s.accept_bytes(text.substr(0, cut))) << cut;
        ASSERT_TRUE(s.accept_bytes(text.substr(cut))) << cut;
        EXPECT_TRUE(s.is_complete()) << cut;
    }
}

TEST(GrammarState, HalfACharacterIsNotComplete) {
    auto g = compile("root ::= [a-z]* \"é\"?");
    GrammarState s(g);
    ASSERT_TRUE(s.accept_bytes("ab"));
    EXPECT_TRUE(s.is_complete());
    ASSERT_TRUE(s.accept_bytes("\xC3"));
    EXPECT_FALSE(s.is_complete());
    EXPECT_EQ(s.partial().remaining, 1u);
    ASSERT_TRUE(s.accept_bytes("\xA9"));
    EXPECT_TRUE(s.is_complete());
    EXPECT_TRUE(s.must_end());
}

TEST(GrammarState, ALeadByteNoCompletionCouldMatchIsRejectedAtOnce) {
    auto g = compile("root ::= [a-z]+ | \"€\"");
    EXPECT_FALSE(is_prefix(g, "\xC3"));  // two-byte characters: none is allowed
    EXPECT_TRUE(is_prefix(g, "\xE2"));   // € is E2 82 AC
    EXPECT_TRUE(is_prefix(g, "\xE2\x82"));
    EXPECT_FALSE(is_prefix(g, "\xE2\x83"));  // U+20C0..U+20FF: not €
    EXPECT_FALSE(is_prefix(g, "\xF0"));
}

TEST(GrammarState, NegatedClassesAllowPartialCharactersTheyDoNotExclude) {
    auto g = compile("root ::= [^é]");
    EXPECT_TRUE(is_prefix(g, "\xC3"));  // many other two-byte characters start so
    EXPECT_FALSE(matches(g, "\xC3\xA9"));
    EXPECT_TRUE(matches(g, "\xC3\xA8"));  // è
    // A negated class covering every completion of the lead byte refuses it.
    auto two_byte = compile("root ::= [^\\u0080-\\u07FF]");
    EXPECT_FALSE(is_prefix(two_byte, "\xC3"));
    EXPECT_TRUE(is_prefix(two_byte, "\xE2"));
}

TEST(GrammarState, InvalidUtf8IsRejected) {
    auto g = compile("root ::= .*");
    EXPECT_TRUE(matches(g, "any \xF0\x9F\x98\x80 text"));
    EXPECT_FALSE(is_prefix(g, "\x80"));              // a continuation byte alone
    EXPECT_FALSE(is_prefix(g, "\xC0\x80"));          // overlong NUL
    EXPECT_FALSE(is_prefix(g, "\xE0\x80\x80"));      // overlong
    EXPECT_FALSE(is_prefix(g, "\xED\xA0\x80"));      // a surrogate
    EXPECT_FALSE(is_prefix(g, "\xED\xA0"));          // can only become a surrogate
    EXPECT_TRUE(is_prefix(g, "\xED\x9F"));           // U+D7C0..U+D7FF
    EXPECT_FALSE(is_prefix(g, "\xF4\x90\x80\x80"));  // above U+10FFFF
    EXPECT_FALSE(is_prefix(g,
                           "\xC3"
                           "a"));  // a lead byte, then ASCII
    EXPECT_FALSE(is_prefix(g, "\xFF"));
}

TEST(GrammarState, ARejectedInputLeavesTheStateAsItWas) {
    auto g = compile("root ::= \"ab\" \"c\"+");
    GrammarState s(g);
    ASSERT_TRUE(s.accept_bytes("a"));
    std::vector<Stack> before = s.stacks();
    EXPECT_FALSE(s.accept_bytes("bx"));  // 'b' fits, 'x' does not: nothing is kept
    EXPECT_EQ(s.stacks(), before);
    EXPECT_FALSE(s.accept_codepoint('c'));
    EXPECT_TRUE(s.accept_bytes("bc"));
    EXPECT_TRUE(s.is_complete());
    EXPECT_FALSE(s.must_end());  // more c's may follow
}

TEST(GrammarState, CodePointsAreRefusedWhileACharacterIsHalfDone) {
    auto g = compile("root ::= .+");
    GrammarState s(g);
    ASSERT_TRUE(s.accept_bytes("\xE2\x82"));
    EXPECT_FALSE(s.accept_codepoint('a'));
    EXPECT_TRUE(s.accept_bytes("\xAC"));
    EXPECT_TRUE(s.accept_codepoint('a'));
}

TEST(GrammarState, ResetStartsOver) {
    auto g = compile("root ::= \"x\" \"y\"");
    GrammarState s(g);
    ASSERT_TRUE(s.accept_bytes("x"));
    EXPECT_FALSE(s.accept_bytes("x"));
    s.reset();
    EXPECT_TRUE(s.accept_bytes("xy"));
    EXPECT_TRUE(s.must_end());
}

TEST(GrammarState, EmptyRulesAndEmptyRootAreComplete) {
    // An empty rule is written "": a newline right after ::= does not end the rule.
    auto g = compile("root ::= a b\na ::= \"\"\nb ::= a a");
    GrammarState s(g);
    EXPECT_TRUE(s.is_complete());
    EXPECT_TRUE(s.must_end());
    EXPECT_FALSE(s.accept_bytes("x"));
}

TEST(GrammarState, BranchesThatMeetAgainAreKeptOnce) {
    // Both alternatives match the same text: without merging, the branches would double with
    // every character.
    auto g = compile("root ::= (\"a\" | \"a\" | [a])*");
    GrammarState s(g);
    for (int i = 0; i < 200; ++i)
        ASSERT_TRUE(s.accept_bytes("a"));
    EXPECT_LE(s.stacks().size(), 4u);
}

TEST(GrammarState, AGrammarWhoseBranchesMultiplyIsStoppedNotRunForever) {
    // Every 'a' opens a rule that may close with 'b' or with 'c': after n a's there are 2^n
    // different stacks of pending closers.
    auto g = compile("root ::= \"a\" root \"b\" | \"a\" root \"c\" | \"\"");
    GrammarState s(g);
    try {
        for (int i = 0; i < 30; ++i)
            s.accept_bytes("a");
        FAIL() << "expected the stack limit";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(e.what()).find("too ambiguous"), std::string::npos);
    }
}

// ---- realistic grammars --------------------------------------------------------------------

class RealisticGrammar : public ::testing::TestWithParam<GrammarCase> {};

TEST_P(RealisticGrammar, AcceptsItsSentencesAndRejectsTheRest) {
    const GrammarCase &c = GetParam();
    auto g = compile(c.grammar);
    for (const std::string &s : c.accept)
        EXPECT_TRUE(matches(g, s)) << "should accept: " << s;
    for (const std::string &s : c.reject)
        EXPECT_FALSE(matches(g, s)) << "should reject: " << s;
}

TEST_P(RealisticGrammar, EveryPrefixOfASentenceCanContinue) {
    const GrammarCase &c = GetParam();
    auto g = compile(c.grammar);
    for (const std::string &s : c.accept)
        for (size_t n = 0; n <= s.size(); ++n)
            EXPECT_TRUE(is_prefix(g, s.substr(0, n))) << s << " cut at " << n;
}

std::vector<std::string> sorted_lines(const std::string &text) {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
        lines.push_back(text.substr(start, nl - start));
    std::sort(lines.begin(), lines.end());
    return lines;
}

TEST_P(RealisticGrammar, PrintsBackToTextThatParsesToTheSameGrammar) {
    std::string printed = to_gbnf(*compile(GetParam().grammar));
    std::string again = to_gbnf(*compile(printed));
    EXPECT_EQ(sorted_lines(printed), sorted_lines(again)) << printed;
}

// Random sentences derived from the compiled grammar itself (alternatives chosen at random,
// the one with the fewest rule references once deep), which the engine must all accept, fed
// whole and byte by byte: the engine against the grammar it runs, on text nobody wrote by hand.
class Deriver {
  public:
    Deriver(const Grammar &g, uint32_t seed) : g_(g), rng_(seed) {}

    bool sentence(std::string &out) {
        out.clear();
        return rule(g_.root, 0, out);
    }

  private:
    bool rule(uint32_t r, int depth, std::string &out) {
        if (depth > 200) return false;
        std::vector<std::pair<uint32_t, int>> alts;  // start, rule references in it
        uint32_t pos = g_.rule_start[r], start = pos;
        int refs = 0;
        for (;; ++pos) {
            ElementType t = g_.elements[pos].type;
            if (t == ElementType::RuleRef) ++refs;
            if (!ends_alternative(t)) continue;
            alts.emplace_back(start, refs);
            if (t == ElementType::End) break;
            start = pos + 1;
            refs = 0;
        }
        size_t pick = rng_() % alts.size();
        if (depth > 6)
            for (size_t i = 0; i < alts.size(); ++i)
                if (alts[i].second < alts[pick].second) pick = i;
        for (pos = alts[pick].first; !ends_alternative(g_.elements[pos].type);) {
            const Element &e = g_.elements[pos];
            if (e.type == ElementType::RuleRef) {
                if (!rule(e.value, depth + 1, out)) return false;
                ++pos;
                continue;
            }
            uint32_t cp;
            if (!character(pos, cp)) return false;
            append_utf8(out, cp);
            uint32_t next;
            class_matches(g_.elements, pos, cp, &next);
            pos = next;
        }
        return true;
    }

    // A code point the class at `pos` matches: from one of its ranges, or for negated classes
    // and '.', from a pool of ASCII and multi-byte characters.
    bool character(uint32_t pos, uint32_t &cp) {
        const std::vector<Element> &e = g_.elements;
        uint32_t unused;
        if (e[pos].type == ElementType::Char) {
            std::vector<std::pair<uint32_t, uint32_t>> ranges;
            uint32_t p = pos;
            do {
                uint32_t low = e[p].value, high = low;
                if (e[p + 1].type == ElementType::CharUpper) high = e[++p].value;
                ranges.emplace_back(low, high);
                ++p;
            } while (e[p].type == ElementType::CharAlt);
            for (int tries = 0; tries < 100; ++tries) {
                auto [low, high] = ranges[rng_() % ranges.size()];
                cp = low + uint32_t(rng_() % (uint64_t(high) - low + 1));
                if (cp < 0xD800 || cp > 0xDFFF) return true;
            }
            return false;
        }
        static const uint32_t kPool[] = {'a', 'Z', '0',  '7',   ' ',    '"',    '\\',   '\n',
                                         '-', '.', 0xE9, 0x416, 0x20AC, 0x3072, 0x1F600};
        for (int tries = 0; tries < 200; ++tries) {
            cp = tries < 100 ? kPool[rng_() % std::size(kPool)] : 0x20 + rng_() % 0x5F;
            if (class_matches(e, pos, cp, &unused)) return true;
        }
        return false;
    }

    static void append_utf8(std::string &out, uint32_t cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    const Grammar &g_;
    std::mt19937 rng_;
};

TEST_P(RealisticGrammar, RandomDerivationsOfTheGrammarAreAccepted) {
    auto g = compile(GetParam().grammar);
    Deriver deriver(*g, 27);
    std::string text;
    int derived = 0;
    for (int i = 0; i < 300; ++i) {
        if (!deriver.sentence(text)) continue;
        ++derived;
        EXPECT_TRUE(matches(g, text)) << text;
    }
    EXPECT_GT(derived, 100);
}

INSTANTIATE_TEST_SUITE_P(Grammars, RealisticGrammar, ::testing::ValuesIn(kGrammarCases),
                         [](const ::testing::TestParamInfo<GrammarCase> &param) {
                             return std::string(param.param.name);
                         });

TEST(GrammarState, JsonRejectsAtTheFirstImpossibleByte) {
    auto g = compile(kJson);
    GrammarState s(g);
    ASSERT_TRUE(s.accept_bytes("{\"key\": "));
    EXPECT_FALSE(s.accept_bytes("}"));
    EXPECT_FALSE(s.accept_bytes("'"));
    ASSERT_TRUE(s.accept_bytes("[tr"));
    EXPECT_FALSE(s.accept_bytes("x"));
    ASSERT_TRUE(s.accept_bytes("ue]}"));
    EXPECT_TRUE(s.is_complete());
    EXPECT_FALSE(s.must_end());  // trailing whitespace may follow
}

}  // namespace
}  // namespace vkllm::grammar
