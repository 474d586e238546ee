// SentencePiece as Gemma 3 uses it: runs of spaces, tabs and newlines and HTML tags are
// user-defined pieces, a dummy prefix is not added, unknown characters become <0xXX> bytes.
// Expected ids are llama.cpp's (node-llama-cpp 3.22.1, vocabOnly) for the same strings; the
// whole corpus comparison is test_tokenizer_llamacpp. The Gemma tests need the model cache
// (scripts/fetch-models) and skip without it.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "format/gguf.h"
#include "model_cache.h"
#include "test_data.h"
#include "tokenizer/tokenizer.h"

using vkllm::tokenizer::EncodeOptions;
using vkllm::tokenizer::StreamDecoder;
using vkllm::tokenizer::Tokenizer;
using Ids = std::vector<int32_t>;

namespace {

constexpr EncodeOptions kPlain{false, false};
constexpr EncodeOptions kParseSpecial{false, true};

std::unique_ptr<Tokenizer> load(const std::string &path) {
    vkllm::format::GgufFile f(path);
    return std::make_unique<Tokenizer>(vkllm::tokenizer::load_vocab(f));
}

// One Gemma tokenizer for the whole suite: its 262,144 tokens take a moment to load.
class GemmaSpm : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        std::string path = cached_model("gemma-3-270m-q4_k_m.gguf");
        if (!path.empty()) tok_ = load(path).release();
    }
    static void TearDownTestSuite() {
        delete tok_;
        tok_ = nullptr;
    }
    void SetUp() override {
        if (!tok_)
            GTEST_SKIP() << "gemma-3-270m-q4_k_m.gguf is not in " << model_cache_dir()
                         << " (run scripts/fetch-models)";
    }
    static Tokenizer *tok_;
};
Tokenizer *GemmaSpm::tok_ = nullptr;

}  // namespace

// Gemma's "  ", "   " ... are user-defined pieces with literal spaces (SentencePiece's "▁▁"
// rewritten by the converter), so they are cut out of the text before the merges; merging
// "▁" + "▁" by score would never reach them.
TEST_F(GemmaSpm, WhitespaceRunsBecomeTheirOwnTokens) {
    EXPECT_EQ(tok_->encode("  ", kPlain), (Ids{138}));
    EXPECT_EQ(tok_->encode("    ", kPlain), (Ids{140}));
    EXPECT_EQ(tok_->encode("Hello  world\n  indented", kPlain),
              (Ids{9259, 138, 12392, 107, 138, 724, 16764}));
    EXPECT_EQ(tok_->encode("mid   three   spaces", kPlain), (Ids{6848, 139, 19891, 139, 35220}));
    // The longest run token is 31 spaces; longer runs are cut from the left.
    EXPECT_EQ(tok_->encode(std::string(40, ' '), kPlain), (Ids{167, 145}));
    EXPECT_EQ(tok_->encode(std::string(70, ' '), kPlain), (Ids{167, 167, 144}));
    EXPECT_EQ(tok_->encode("\t\t", kPlain), (Ids{255969}));
    EXPECT_EQ(tok_->encode("\t \t  \t", kPlain), (Ids{255968, 236743, 255968, 138, 255968}));
    EXPECT_EQ(tok_->encode("if (a) {\n        b();\n    }\n", kPlain),
              (Ids{584, 568, 236746, 236768, 642, 107, 144, 236763, 1086, 107, 140, 236783, 107}));
}

TEST_F(GemmaSpm, UserDefinedTokensAreMatchedWithoutSpecialParsing) {
    EXPECT_EQ(tok_->encode("x<table>y", kPlain), (Ids{236781, 168, 236762}));
    EXPECT_EQ(tok_->encode("<b>bold</b> and <i>it</i>", kPlain),
              (Ids{200, 15640, 209, 532, 236743, 201, 509, 210}));
    EXPECT_EQ(tok_->encode("<start_of_image>", kPlain), (Ids{255999}));
    EXPECT_EQ(tok_->encode("[multimodal]", kPlain), (Ids{5}));
}

TEST_F(GemmaSpm, ControlTokensAreMatchedOnlyWithSpecialParsing) {
    const char *turn = "<start_of_turn>user\nHi<end_of_turn>";
    EXPECT_EQ(tok_->encode(turn, kParseSpecial), (Ids{105, 2364, 107, 10979, 106}));
    EXPECT_EQ(tok_->encode(turn, kPlain),
              (Ids{236820, 3041, 236779, 1340, 236779, 887, 236813, 2364, 107, 10979, 236820, 643,
                   236779, 1340, 236779, 887, 236813}));
    EXPECT_EQ(tok_->encode("<bos>", kParseSpecial), (Ids{2}));
}

TEST_F(GemmaSpm, CharactersOutsideTheVocabularyFallBackToBytes) {
    // U+10000 is not a token: its four UTF-8 bytes are <0xF0> <0x90> <0x80> <0x80>.
    EXPECT_EQ(tok_->encode("\xF0\x90\x80\x80", kPlain), (Ids{478, 382, 366, 366}));
    EXPECT_EQ(tok_->encode("\r\n", kPlain), (Ids{251, 107}));  // <0x0D>, then "\n" (user-defined)
    EXPECT_EQ(tok_->encode(std::string("a\0b", 3), kPlain), (Ids{236746, 238, 236763}));
    EXPECT_EQ(tok_->decode({478, 382, 366, 366}, false), "\xF0\x90\x80\x80");
}

TEST_F(GemmaSpm, NoDummyPrefixWhenTheFileSaysSo) {
    ASSERT_FALSE(tok_->vocab().add_space_prefix);  // tokenizer.ggml.add_space_prefix = false
    EXPECT_EQ(tok_->encode("Hello", kPlain), (Ids{9259}));
    EXPECT_EQ(tok_->encode(" Hello", kPlain), (Ids{26352}));
    // So decoding keeps a leading space: it is the text's, not a dummy prefix.
    EXPECT_EQ(tok_->decode({26352}, false), " Hello");
    StreamDecoder stream(*tok_, false);
    EXPECT_EQ(stream.push(26352), " Hello");
}

TEST_F(GemmaSpm, BosIsAddedAsTheFileSays) {
    EXPECT_TRUE(tok_->vocab().add_bos);
    EXPECT_FALSE(tok_->vocab().add_eos);
    EXPECT_EQ(tok_->encode("Hello", EncodeOptions{true, false}), (Ids{2, 9259}));
}

TEST_F(GemmaSpm, PiecesAndDecodingGiveTheTextBack) {
    EXPECT_EQ(tok_->piece(138, false), "  ");
    EXPECT_EQ(tok_->piece(107, false), "\n");
    EXPECT_EQ(tok_->piece(168, false), "<table>");
    EXPECT_EQ(tok_->piece(105, false), "");
    EXPECT_EQ(tok_->piece(105, true), "<start_of_turn>");
    for (const char *text : {"Hello  world\n  indented", "def f(x):\n\treturn x  # two\n",
                             "日本語 😀 \xF0\x90\x80\x80 <table>", "  leading and trailing  "}) {
        Ids ids = tok_->encode(text, kPlain);
        EXPECT_EQ(tok_->decode(ids, false), text);
        StreamDecoder stream(*tok_, false);
        std::string streamed;
        for (int32_t id : ids)
            streamed += stream.push(id);
        streamed += stream.flush();
        EXPECT_EQ(streamed, text);
    }
}

TEST_F(GemmaSpm, StreamDecoderHoldsByteTokensUntilTheCharacterIsComplete) {
    StreamDecoder stream(*tok_, false);
    EXPECT_EQ(stream.push(9259), "Hello");
    EXPECT_EQ(stream.push(478), "");  // <0xF0>
    EXPECT_EQ(stream.push(382), "");  // <0x90>
    EXPECT_EQ(stream.push(366), "");  // <0x80>
    EXPECT_EQ(stream.push(366), "\xF0\x90\x80\x80");
    EXPECT_EQ(stream.flush(), "");
}

// Not a benchmark: a regression to per-token quadratic work would take minutes on 262,144
// tokens; the time measured here (Release, x86-64) is well under a second.
TEST(GemmaSpmLoad, VocabularyOf262144TokensLoadsQuickly) {
    std::string path = cached_model("gemma-3-270m-q4_k_m.gguf");
    if (path.empty())
        GTEST_SKIP() << "gemma-3-270m-q4_k_m.gguf is not in " << model_cache_dir()
                     << " (run scripts/fetch-models)";
    vkllm::format::GgufFile f(path);
    auto start = std::chrono::steady_clock::now();
    Tokenizer tok(vkllm::tokenizer::load_vocab(f));
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("load_vocab + Tokenizer: %d tokens in %.1f ms\n", tok.vocab().size(), ms);
    EXPECT_EQ(tok.vocab().size(), 262144);
    EXPECT_LT(ms, 5000.0);
}

// Llama 2 adds a dummy prefix: its first word is "▁Hello", and decoding drops that space again.
TEST(LlamaSpm, DummyPrefixIsAddedAndRemovedAgain) {
    std::string dir = test_data_dir();
    auto tok = load(dir + "/tokenizer/llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
    ASSERT_TRUE(tok->vocab().add_space_prefix);
    Ids ids = tok->encode("Hello world", kPlain);
    EXPECT_EQ(ids, (Ids{15043, 3186}));
    EXPECT_EQ(tok->piece(15043, false), " Hello");
    EXPECT_EQ(tok->decode(ids, false), "Hello world");
    EXPECT_EQ(tok->encode("Hello world", EncodeOptions{true, false}), (Ids{1, 15043, 3186}));
}
