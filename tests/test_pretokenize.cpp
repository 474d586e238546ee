// The regex pre-tokenizers: the documented splits, invalid bytes, long runs, and a golden file of
// splits that the Python `regex` module made from the patterns (tools/gen_pretokenize_golden.py).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

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

// Just enough JSON for the golden file: arrays, objects and strings (written by Python's json
// with ensure_ascii=False, so \u escapes are only of control characters).
class JsonReader {
  public:
    struct Value {
        std::string str;
        std::vector<Value> items;
        std::vector<std::pair<std::string, Value>> fields;
        const Value &at(const std::string &key) const {
            for (const auto &[k, v] : fields)
                if (k == key) return v;
            throw std::runtime_error("no key " + key);
        }
    };

    explicit JsonReader(std::string text) : s_(std::move(text)) {}

    Value parse() {
        Value v = value();
        skip_space();
        if (pos_ != s_.size()) error("trailing characters");
        return v;
    }

  private:
    Value value() {
        skip_space();
        Value v;
        if (peek() == '"') {
            v.str = string();
        } else if (peek() == '[') {
            list(']', [&] { v.items.push_back(value()); });
        } else if (peek() == '{') {
            list('}', [&] {
                skip_space();
                std::string key = string();
                skip_space();
                expect(':');
                v.fields.emplace_back(key, value());
            });
        } else {
            error("unexpected character");
        }
        return v;
    }

    template <typename Item>
    void list(char close, Item item) {
        ++pos_;
        skip_space();
        if (peek() == close) {
            ++pos_;
            return;
        }
        for (;;) {
            item();
            skip_space();
            if (peek() == close) break;
            expect(',');
        }
        ++pos_;
    }

    std::string string() {
        expect('"');
        std::string out;
        while (peek() != '"') {
            char c = s_[pos_++];
            if (c != '\\') {
                out += c;
                continue;
            }
            char e = peek();
            ++pos_;
            switch (e) {
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'u':
                    utf8_append(out, uint32_t(std::stoul(s_.substr(pos_, 4), nullptr, 16)));
                    pos_ += 4;
                    break;
                default:
                    out += e;  // \" \\ \/
            }
        }
        ++pos_;
        return out;
    }

    char peek() const {
        if (pos_ >= s_.size()) error("unexpected end");
        return s_[pos_];
    }
    void expect(char c) {
        if (peek() != c) error(std::string("expected ") + c);
        ++pos_;
    }
    void skip_space() {
        while (pos_ < s_.size() && std::isspace(uint8_t(s_[pos_])))
            ++pos_;
    }
    [[noreturn]] void error(const std::string &what) const {
        throw std::runtime_error("golden JSON at byte " + std::to_string(pos_) + ": " + what);
    }

    std::string s_;
    size_t pos_ = 0;
};

TEST(Pretokenize, MatchesPythonRegexOnGoldenFile) {
    std::ifstream f(VKLLM_TEST_DATA_DIR "/pretokenize_golden.json", std::ios::binary);
    ASSERT_TRUE(f) << "cannot open " VKLLM_TEST_DATA_DIR "/pretokenize_golden.json";
    std::stringstream buf;
    buf << f.rdbuf();
    JsonReader::Value cases = JsonReader(buf.str()).parse();
    ASSERT_GE(cases.items.size(), 300u);

    const std::pair<const char *, PreTokenizer> kinds[] = {{"Gpt2", PreTokenizer::Gpt2},
                                                           {"Llama3", PreTokenizer::Llama3},
                                                           {"Qwen2", PreTokenizer::Qwen2},
                                                           {"O200k", PreTokenizer::O200k}};
    size_t checked = 0, mismatched = 0;
    for (const JsonReader::Value &c : cases.items) {
        const std::string &text = c.at("text").str;
        for (const auto &[name, kind] : kinds) {
            Pieces want;
            for (const JsonReader::Value &p : c.at(name).items)
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
