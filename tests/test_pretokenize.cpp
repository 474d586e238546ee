// The pre-tokenizers: the documented splits, every name, invalid bytes, long runs, and a golden
// file of splits that the Python `regex` module made from the same rule table
// (tools/gen_pretokenize_golden.py).
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "json.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/regex.h"
#include "tokenizer/unicode.h"

using namespace vkllm::tokenizer;
using Pieces = std::vector<std::string>;

static Pieces split(const char *name, std::string_view text) {
    const PreTokenizerRules *rules = find_pretokenizer(name);
    if (!rules) throw std::runtime_error(std::string("no pre-tokenizer ") + name);
    std::vector<std::string_view> views = PreTokenizer(*rules).split(text);
    return Pieces(views.begin(), views.end());
}

static const char *const kGpt2 = "gpt-2", *const kLlama3 = "llama-bpe", *const kQwen2 = "qwen2",
                         *const kO200k = "gpt-4o";

TEST(Pretokenize, LastSpaceOfARunJoinsTheNextWord) {
    for (const char *kind : {kGpt2, kLlama3, kQwen2, kO200k}) {
        EXPECT_EQ(split(kind, "   Hello"), (Pieces{"  ", " Hello"}));
        EXPECT_EQ(split(kind, "Hello world"), (Pieces{"Hello", " world"}));
        EXPECT_EQ(split(kind, "x  "), (Pieces{"x", "  "}));  // at the end the run stays whole
    }
}

TEST(Pretokenize, DigitGroupsPerModelFamily) {
    EXPECT_EQ(split(kGpt2, "1234567"), (Pieces{"1234567"}));
    EXPECT_EQ(split(kQwen2, "1234567"), (Pieces{"1", "2", "3", "4", "5", "6", "7"}));
    EXPECT_EQ(split(kLlama3, "1234567"), (Pieces{"123", "456", "7"}));
    EXPECT_EQ(split(kO200k, "1234567"), (Pieces{"123", "456", "7"}));
}

TEST(Pretokenize, ContractionsAreCaseInsensitiveExceptInGpt2) {
    EXPECT_EQ(split(kGpt2, "DON'T"), (Pieces{"DON", "'", "T"}));
    EXPECT_EQ(split(kQwen2, "DON'T"), (Pieces{"DON", "'T"}));
    EXPECT_EQ(split(kLlama3, "YOU'Ll"), (Pieces{"YOU", "'Ll"}));
    EXPECT_EQ(split(kO200k, "DON'T"), (Pieces{"DON'T"}));  // suffix of the word
    EXPECT_EQ(split(kGpt2, "don't"), (Pieces{"don", "'t"}));
    // The long s folds to 's'.
    EXPECT_EQ(split(kQwen2, "it'\xC5\xBF"), (Pieces{"it", "'\xC5\xBF"}));
}

TEST(Pretokenize, CurlyApostropheIsNotAContraction) {
    EXPECT_EQ(split(kGpt2, "don\xE2\x80\x99t"), (Pieces{"don", "\xE2\x80\x99", "t"}));
    EXPECT_EQ(split(kQwen2, "don\xE2\x80\x99t"), (Pieces{"don", "\xE2\x80\x99t"}));
    EXPECT_EQ(split(kO200k, "don\xE2\x80\x99t"), (Pieces{"don", "\xE2\x80\x99t"}));
}

TEST(Pretokenize, NewlinesEndTheirOwnPieceExceptInGpt2) {
    EXPECT_EQ(split(kGpt2, "\r\n\n  x"), (Pieces{"\r\n\n ", " x"}));
    for (const char *kind : {kLlama3, kQwen2, kO200k})
        EXPECT_EQ(split(kind, "\r\n\n  x"), (Pieces{"\r\n\n", " ", " x"}));
    EXPECT_EQ(split(kQwen2, "hi!!\n\nyo"), (Pieces{"hi", "!!\n\n", "yo"}));
    EXPECT_EQ(split(kO200k, "a/b//\n/c"), (Pieces{"a", "/b", "//\n/", "c"}));
}

TEST(Pretokenize, O200kSplitsWordsAtCaseChanges) {
    EXPECT_EQ(split(kO200k, "HelloWorld"), (Pieces{"Hello", "World"}));
    EXPECT_EQ(split(kO200k, "HELLOworld"), (Pieces{"HELLOworld"}));
    EXPECT_EQ(split(kO200k, "helloWORLD"), (Pieces{"hello", "WORLD"}));
}

TEST(Pretokenize, InvalidBytesMatchAsReplacementCharAndKeepTheirBytes) {
    EXPECT_EQ(split(kGpt2, "a\xFFz"), (Pieces{"a", "\xFF", "z"}));
    EXPECT_EQ(split(kQwen2, "a\xFFz"), (Pieces{"a", "\xFFz"}));  // prefix of a word
    EXPECT_EQ(split(kO200k, " \xE2\x82!x\xC3"), (Pieces{" \xE2\x82!", "x", "\xC3"}));
}

TEST(Pretokenize, EmptyTextHasNoPieces) {
    for (const PreTokenizerRules &rules : all_pretokenizers())
        EXPECT_TRUE(PreTokenizer(rules).split("").empty()) << rules.names;
}

// Quadratic backtracking on any of these would take minutes; linear matching takes milliseconds.
// The exception: digit grouping by lookahead (tiny_aya, superbpe, afmoe) scans the rest of a
// digit run from each digit, in Python's `regex` and the Hugging Face tokenizers as here, so
// their digit runs are shorter; a run too long for the step budget is an error, never a hang.
TEST(Pretokenize, LongRunsSplitInLinearTimeByEveryRuleSet) {
    const size_t n = 1 << 16;  // quadratic work would exceed the matcher's step budget
    std::string spaces(n, ' '), upper(n, 'A'), digits(n, '7'), short_digits(2048, '7'), marks, han;
    for (size_t i = 0; i < n / 4; ++i)
        marks += i % 2 ? "\xCC\x81" : "A";  // A + U+0301 ...
    for (size_t i = 0; i < n / 8; ++i)
        han += "\xE4\xB8\xAD";  // U+4E2D
    for (const PreTokenizerRules &rules : all_pretokenizers()) {
        PreTokenizer pre(rules);
        bool groups_digits = false;  // a lookahead over a repeated group
        for (const char *re : rules.regexes)
            groups_digits = groups_digits || (re && std::strstr(re, "(?=("));
        const std::string *runs[] = {&spaces, &upper, groups_digits ? &short_digits : &digits,
                                     &marks, &han};
        for (const std::string *text : runs) {
            // Spaces before a character no early regex takes is \s+$'s worst case.
            for (const char *tail : {"x", "\xE4\xB8\xAD", "\n"}) {
                std::vector<std::string_view> pieces = pre.split(*text + tail);
                size_t bytes = 0;
                for (std::string_view p : pieces)
                    bytes += p.size();
                EXPECT_EQ(bytes, text->size() + std::strlen(tail)) << rules.names;
            }
        }
    }
}

TEST(Pretokenize, ADigitRunTooLongForLookaheadGroupingIsAnErrorNotAHang) {
    PreTokenizer pre(*find_pretokenizer("superbpe"));
    try {
        pre.split(std::string(1 << 16, '7'));
        ADD_FAILURE() << "no error";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_UNSUPPORTED);
    }
}

TEST(Pretokenize, EveryNameOfEveryRuleSetIsFound) {
    size_t names = 0;
    for (const PreTokenizerRules &rules : all_pretokenizers()) {
        std::istringstream in(rules.names);
        for (std::string name; in >> name; ++names)
            EXPECT_EQ(find_pretokenizer(name), &rules) << name;
    }
    EXPECT_GE(names, 65u);  // llama.cpp's loader took at least 65 names when this was written
    EXPECT_EQ(find_pretokenizer(""), find_pretokenizer("default"));
    EXPECT_EQ(find_pretokenizer("no-such-tokenizer"), nullptr);
    EXPECT_EQ(find_pretokenizer("gpt"), nullptr);  // whole names only
    EXPECT_NE(pretokenizer_names().find("smollm"), std::string::npos);
}

TEST(Pretokenize, TheReadmeListsEveryName) {
    std::ifstream in(VKLLM_TEST_DATA_DIR "/../../README.md");
    std::stringstream readme;
    readme << in.rdbuf();
    std::string text = readme.str();
    size_t section = text.find("## Tokenizers");
    ASSERT_NE(section, std::string::npos);
    std::string list = text.substr(section, text.find("\n## ", section + 1) - section);
    for (const PreTokenizerRules &rules : all_pretokenizers()) {
        std::istringstream names(rules.names);
        for (std::string name; names >> name;)
            EXPECT_NE(list.find("`" + name + "`"), std::string::npos) << name;
    }
}

TEST(Pretokenize, DigitsGroupFromTheRightWhereEmptyMatchesSplit) {
    EXPECT_EQ(split("superbpe", "1234567"), (Pieces{"1", "234", "567"}));
    EXPECT_EQ(split("superbpe", "123456 x"), (Pieces{"123", "456", " x"}));
    EXPECT_EQ(split("afmoe", "1234567"), (Pieces{"1", "234", "567"}));
    EXPECT_EQ(split("tiny_aya", "12345 67"), (Pieces{"12", "345", " ", "67"}));
}

TEST(Pretokenize, SmolLMSplitsEveryDigit) {
    EXPECT_EQ(split("smollm", "in 2024!"), (Pieces{"in", " ", "2", "0", "2", "4", "!"}));
}

TEST(Pretokenize, SentencePieceStyleBpeSplitsOnlyLines) {
    EXPECT_EQ(split("gemma4", "a b\n\nc"), (Pieces{"a b", "\n\n", "c"}));
}

TEST(Pretokenize, KimiKeepsHanRunsApartFromOtherLetters) {
    EXPECT_EQ(split("kimi-k2",
                    "abc\xE4\xB8\xAD\xE6\x96\x87"
                    "def"),
              (Pieces{"abc", "\xE4\xB8\xAD\xE6\x96\x87", "def"}));
}

// The golden file names each rule set's regexes as the Python generator read them from
// pretokenize_rules.cpp; a table changed since it was made must be regenerated.
TEST(Pretokenize, MatchesPythonRegexOnGoldenFile) {
    Json golden = Json::load(VKLLM_TEST_DATA_DIR "/pretokenize_golden.json");
    const std::vector<Json> &inputs = golden["inputs"].arr;
    const std::vector<Json> &rules = golden["rules"].arr;
    ASSERT_GE(inputs.size(), 300u);
    ASSERT_EQ(rules.size(), all_pretokenizers().size())
        << "regenerate with python3 tools/gen_pretokenize_golden.py";
    size_t checked = 0, mismatched = 0;
    for (size_t r = 0; r < rules.size(); ++r) {
        const PreTokenizerRules &mine = all_pretokenizers()[r];
        const Json &theirs = rules[r];
        std::string names;
        for (const Json &n : theirs["names"].arr)
            names += (names.empty() ? "" : " ") + n.str;
        ASSERT_EQ(names, mine.names) << "regenerate with python3 tools/gen_pretokenize_golden.py";
        size_t n_regexes = 0;
        for (const char *re : mine.regexes) {
            if (!re) continue;
            ASSERT_EQ(theirs["regexes"].arr.at(n_regexes++).str, re) << names;
        }
        ASSERT_EQ(n_regexes, theirs["regexes"].arr.size()) << names;
        PreTokenizer pre(mine);
        for (size_t i = 0; i < inputs.size(); ++i) {
            const std::string &text = inputs[i].str;
            std::vector<size_t> want, got;
            for (const Json &len : theirs["splits"].arr.at(i).arr)
                want.push_back(size_t(len.num));
            for (std::string_view piece : pre.split(text))
                got.push_back(CodePoints(piece).size());
            ++checked;
            if (got == want) continue;
            if (++mismatched <= 10)
                ADD_FAILURE() << names << " on " << testing::PrintToString(text) << ": got lengths "
                              << testing::PrintToString(got) << ", want "
                              << testing::PrintToString(want);
        }
    }
    EXPECT_EQ(mismatched, 0u);
    std::cout << "golden: " << checked - mismatched << " of " << checked
              << " splits (inputs x rule sets) match Python's regex\n";
}
