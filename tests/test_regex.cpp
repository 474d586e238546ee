// The pre-tokenizers' regex engine: the syntax the models' patterns use, the semantics of
// Python's `regex` (leftmost-first alternation, backtracking), refusal of what it does not
// support, and a step budget instead of a hang.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "tokenizer/regex.h"

using namespace vkllm::tokenizer;

// The matches of `pattern` in `text`, as strings.
static std::vector<std::string> find(const char *pattern, const std::string &text) {
    Regex re(pattern);
    CodePoints t(text);
    std::vector<Regex::Match> matches;
    re.find_all(t, 0, t.size(), matches);
    std::vector<std::string> out;
    for (const Regex::Match &m : matches)
        out.push_back(text.substr(t.offset(m.begin), t.offset(m.end) - t.offset(m.begin)));
    return out;
}

using S = std::vector<std::string>;

TEST(Regex, AlternationIsLeftmostFirstNotLongest) {
    EXPECT_EQ(find("a|ab", "ab"), (S{"a"}));
    EXPECT_EQ(find("ab|a", "ab"), (S{"ab"}));
}

TEST(Regex, QuantifiersBacktrack) {
    EXPECT_EQ(find(R"(\s+(?!\S))", "   x"), (S{"  "}));
    EXPECT_EQ(find(R"(\s*[\r\n]+)", " \n \n x"), (S{" \n \n"}));
    EXPECT_EQ(find(R"(a{2,3})", "aaaaaaa"), (S{"aaa", "aaa"}));
    EXPECT_EQ(find(R"((?:ab){2})", "abababab"), (S{"abab", "abab"}));
}

TEST(Regex, PossessiveQuantifiersNeverGiveBack) {
    EXPECT_EQ(find("a++a", "aaa"), (S{}));
    EXPECT_EQ(find("a+a", "aaa"), (S{"aaa"}));
}

TEST(Regex, PropertiesClassesAndIntersections) {
    EXPECT_EQ(find(R"(\p{L}+)", "ab1\xC3\xA9"), (S{"ab", "\xC3\xA9"}));
    EXPECT_EQ(find(R"(\p{P}+)", "a.,b!"), (S{".,", "!"}));
    EXPECT_EQ(find(R"(\p{S}+)", "1+1=\xE2\x82\xAC"), (S{"+", "=\xE2\x82\xAC"}));  // + = U+20AC
    EXPECT_EQ(find(R"([\p{L}&&[^\p{Han}]]+)", "ab\xE4\xB8\xAD"), (S{"ab"}));
    EXPECT_EQ(find(R"([^\s\p{L}]+)", "a 12!b"), (S{"12!"}));
    EXPECT_EQ(find(R"([\x{4E00}-\x{9FA5}]+)", "x\xE4\xB8\xAD\xE6\x96\x87y"),
              (S{"\xE4\xB8\xAD\xE6\x96\x87"}));
    EXPECT_EQ(find(R"([a\-z]+)", "a-zb"), (S{"a-z"}));
}

TEST(Regex, CaseInsensitiveGroupsFoldSimply) {
    EXPECT_EQ(find(R"((?i:'s|'ll))", "'S 'Ll 'x"), (S{"'S", "'Ll"}));
    EXPECT_EQ(find(R"((?i:'s))", "'\xC5\xBF"), (S{"'\xC5\xBF"}));  // the long s folds to s
}

TEST(Regex, AnchorsSeeOnlyTheMatchedRange) {
    EXPECT_EQ(find(R"(\s+$)", "a  b  "), (S{"  "}));
    EXPECT_EQ(find(R"(\d+\b)", "12 34x"), (S{"12"}));
}

TEST(Regex, EmptyMatchesAreReportedAndStepPast) {
    EXPECT_EQ(find(R"((?=(\d{3})+(?!\d)))", "1234567"), (S{"", ""}));
    EXPECT_EQ(find("x*", "axb"), (S{"", "x", "", ""}));
}

TEST(Regex, PatternsOutsideTheSubsetAreRefused) {
    for (const char *bad :
         {"(", "a)", "[a", "a**", "*", R"(\p{Greek})", R"(\q)", "a{3,2}", "a+?", "(?<n>a)", "(a)++",
          "()*", "(a|)*", R"([z-a])", R"(\x{110000})", "a{1001}"}) {
        try {
            Regex re(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const vkllm::Error &e) {
            EXPECT_EQ(e.status(), VKLLM_ERR_INTERNAL) << bad;
        }
    }
}

TEST(Regex, ExponentialBacktrackingStopsAtTheStepBudget) {
    std::string text(40, 'a');
    try {
        find("(?:a|a)*b", text);
        ADD_FAILURE() << "no error";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_UNSUPPORTED);
    }
}
