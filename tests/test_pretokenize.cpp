// The regex pre-tokenizers: the documented splits, invalid bytes, long runs, and a golden file of
// splits that the Python `regex` module made from the patterns (tools/gen_pretokenize_golden.py).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "json.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/unicode.h"

using namespace vkllm::tokenizer;
using Pieces = std::vector<std::string>;

static Pieces split(PreTokenizer kind, std::string_view text) {
    std::vector<std::string_view> views = pretokenize(kind, text);
    return Pieces(views.begin(), views.end());
}

TEST(Pretokenize, LastSpaceOfARunJoinsTheNextWord) {
    for (PreTokenizer kind :
         {PreTokenizer::Gpt2, PreTokenizer::Llama3, PreTokenizer::Qwen2, PreTokenizer::O200k}) {
        EXPECT_EQ(split(kind, "   Hello"), (Pieces{"  ", " Hello"}));
        EXPECT_EQ(split(kind, "Hello world"), (Pieces{"Hello", " world"}));
        EXPECT_EQ(split(kind, "x  "), (Pieces{"x", "  "}));  // at the end the run stays whole
    }
}

TEST(Pretokenize, DigitGroupsPerModelFamily) {
    EXPECT_EQ(split(PreTokenizer::Gpt2, "1234567"), (Pieces{"1234567"}));
    EXPECT_EQ(split(PreTokenizer::Qwen2, "1234567"), (Pieces{"1", "2", "3", "4", "5", "6", "7"}));
    EXPECT_EQ(split(PreTokenizer::Llama3, "1234567"), (Pieces{"123", "456", "7"}));
    EXPECT_EQ(split(PreTokenizer::O200k, "1234567"), (Pieces{"123", "456", "7"}));
}

TEST(Pretokenize, ContractionsAreCaseInsensitiveExceptInGpt2) {
    EXPECT_EQ(split(PreTokenizer::Gpt2, "DON'T"), (Pieces{"DON", "'", "T"}));
    EXPECT_EQ(split(PreTokenizer::Qwen2, "DON'T"), (Pieces{"DON", "'T"}));
    EXPECT_EQ(split(PreTokenizer::Llama3, "YOU'Ll"), (Pieces{"YOU", "'Ll"}));
    EXPECT_EQ(split(PreTokenizer::O200k, "DON'T"), (Pieces{"DON'T"}));  // suffix of the word
    EXPECT_EQ(split(PreTokenizer::Gpt2, "don't"), (Pieces{"don", "'t"}));
    // The long s folds to 's'.
    EXPECT_EQ(split(PreTokenizer::Qwen2, "it'\xC5\xBF"), (Pieces{"it", "'\xC5\xBF"}));
}

TEST(Pretokenize, CurlyApostropheIsNotAContraction) {
    EXPECT_EQ(split(PreTokenizer::Gpt2, "don\xE2\x80\x99t"), (Pieces{"don", "\xE2\x80\x99", "t"}));
    EXPECT_EQ(split(PreTokenizer::Qwen2, "don\xE2\x80\x99t"), (Pieces{"don", "\xE2\x80\x99t"}));
    EXPECT_EQ(split(PreTokenizer::O200k, "don\xE2\x80\x99t"), (Pieces{"don", "\xE2\x80\x99t"}));
}

TEST(Pretokenize, NewlinesEndTheirOwnPieceExceptInGpt2) {
    EXPECT_EQ(split(PreTokenizer::Gpt2, "\r\n\n  x"), (Pieces{"\r\n\n ", " x"}));
    for (PreTokenizer kind : {PreTokenizer::Llama3, PreTokenizer::Qwen2, PreTokenizer::O200k})
        EXPECT_EQ(split(kind, "\r\n\n  x"), (Pieces{"\r\n\n", " ", " x"}));
    EXPECT_EQ(split(PreTokenizer::Qwen2, "hi!!\n\nyo"), (Pieces{"hi", "!!\n\n", "yo"}));
    EXPECT_EQ(split(PreTokenizer::O200k, "a/b//\n/c"), (Pieces{"a", "/b", "//\n/", "c"}));
}

TEST(Pretokenize, O200kSplitsWordsAtCaseChanges) {
    EXPECT_EQ(split(PreTokenizer::O200k, "HelloWorld"), (Pieces{"Hello", "World"}));
    EXPECT_EQ(split(PreTokenizer::O200k, "HELLOworld"), (Pieces{"HELLOworld"}));
    EXPECT_EQ(split(PreTokenizer::O200k, "helloWORLD"), (Pieces{"hello", "WORLD"}));
}

TEST(Pretokenize, InvalidBytesMatchAsReplacementCharAndKeepTheirBytes) {
    EXPECT_EQ(split(PreTokenizer::Gpt2, "a\xFFz"), (Pieces{"a", "\xFF", "z"}));
    EXPECT_EQ(split(PreTokenizer::Qwen2, "a\xFFz"), (Pieces{"a", "\xFFz"}));  // prefix of a word
    EXPECT_EQ(split(PreTokenizer::O200k, " \xE2\x82!x\xC3"), (Pieces{" \xE2\x82!", "x", "\xC3"}));
}

TEST(Pretokenize, EmptyTextHasNoPieces) {
    EXPECT_TRUE(pretokenize(PreTokenizer::Gpt2, "").empty());
    EXPECT_TRUE(pretokenize(PreTokenizer::O200k, "").empty());
}

// Quadratic backtracking on any of these would take minutes; linear matching takes milliseconds.
TEST(Pretokenize, LongRunsSplitInLinearTime) {
    const size_t n = 1 << 20;
    std::string spaces(n, ' '), upper(n, 'A'), digits(n, '7'), marks;
    for (size_t i = 0; i < n / 4; ++i)
        marks += i % 2 ? "\xCC\x81" : "A";  // A + U+0301 ...
    for (PreTokenizer kind :
         {PreTokenizer::Gpt2, PreTokenizer::Llama3, PreTokenizer::Qwen2, PreTokenizer::O200k}) {
        for (const std::string *text : {&spaces, &upper, &digits, &marks}) {
            std::vector<std::string_view> pieces = pretokenize(kind, *text + "x");
            size_t bytes = 0;
            for (std::string_view p : pieces)
                bytes += p.size();
            EXPECT_EQ(bytes, text->size() + 1);
        }
    }
}

TEST(Pretokenize, MatchesPythonRegexOnGoldenFile) {
    Json cases = Json::load(VKLLM_TEST_DATA_DIR "/pretokenize_golden.json");
    ASSERT_GE(cases.arr.size(), 300u);

    const std::pair<const char *, PreTokenizer> kinds[] = {{"Gpt2", PreTokenizer::Gpt2},
                                                           {"Llama3", PreTokenizer::Llama3},
                                                           {"Qwen2", PreTokenizer::Qwen2},
                                                           {"O200k", PreTokenizer::O200k}};
    size_t checked = 0, mismatched = 0;
    for (const Json &c : cases.arr) {
        const std::string &text = c["text"].str;
        for (const auto &[name, kind] : kinds) {
            Pieces want;
            for (const Json &p : c[name].arr)
                want.push_back(p.str);
            ++checked;
            if (split(kind, text) == want) continue;
            if (++mismatched <= 10)
                ADD_FAILURE() << name << " on " << testing::PrintToString(text) << ": got "
                              << testing::PrintToString(split(kind, text)) << ", want "
                              << testing::PrintToString(want);
        }
    }
    EXPECT_EQ(mismatched, 0u);
    std::cout << "golden: " << checked - mismatched << " of " << checked
              << " splits (cases x kinds) match\n";
}
