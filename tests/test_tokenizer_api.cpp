// The tokenizer through the C ABI: buffer sizing, flags, pieces, streaming that never splits
// a UTF-8 character, end-of-generation tokens, bad ids.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "gguf_builder.h"
#include "test_data.h"
#include "vkllm.h"

namespace {

class TokenizerApiTest : public ::testing::Test {
  protected:
    void open(const std::string &relative) {
        std::string dir = test_data_dir();
        vkllm_gguf *g = nullptr;
        ASSERT_EQ(vkllm_gguf_open((dir + "/" + relative).c_str(), &g), VKLLM_OK)
            << vkllm_last_error();
        ASSERT_EQ(vkllm_tokenizer_create(g, &tok_), VKLLM_OK) << vkllm_last_error();
        vkllm_gguf_destroy(g);  // the tokenizer keeps what it needs
    }
    void TearDown() override { vkllm_tokenizer_destroy(tok_); }

    std::vector<int32_t> tokenize(const std::string &text, uint32_t flags) {
        size_t n = 0;
        EXPECT_EQ(vkllm_tokenizer_encode(tok_, text.data(), text.size(), flags, nullptr, 0, &n),
                  text.empty() && !(flags & VKLLM_TOKENIZE_ADD_SPECIAL)
                      ? VKLLM_OK
                      : VKLLM_ERR_BUFFER_TOO_SMALL);
        std::vector<int32_t> ids(n);
        EXPECT_EQ(vkllm_tokenizer_encode(tok_, text.data(), text.size(), flags, ids.data(),
                                         ids.size(), &n),
                  VKLLM_OK);
        return ids;
    }

    vkllm_tokenizer *tok_ = nullptr;
};

}  // namespace

TEST_F(TokenizerApiTest, QwenChatMarkupIsSpecialOnlyWhenAsked) {
    open("tokenizer/generated-vocab/ggml-vocab-qwen2.5.gguf");
    std::string text = "<|im_start|>user\nHello<|im_end|>";
    std::vector<int32_t> parsed = tokenize(text, VKLLM_TOKENIZE_PARSE_SPECIAL);
    ASSERT_GE(parsed.size(), 3u);
    EXPECT_EQ(parsed.front(), 151644);
    EXPECT_EQ(parsed.back(), 151645);
    std::vector<int32_t> plain = tokenize(text, 0);
    EXPECT_GT(plain.size(), parsed.size());
    EXPECT_NE(plain.front(), 151644);
    // Qwen2.5 adds no BOS even when special tokens are requested.
    EXPECT_EQ(tokenize("Hello", VKLLM_TOKENIZE_ADD_SPECIAL), tokenize("Hello", 0));
    int32_t eog = 0;
    ASSERT_EQ(vkllm_tokenizer_is_end_of_generation(tok_, 151645, &eog), VKLLM_OK);
    EXPECT_EQ(eog, 1) << "<|im_end|> ends a chat turn";
    ASSERT_EQ(vkllm_tokenizer_is_end_of_generation(tok_, parsed[1], &eog), VKLLM_OK);
    EXPECT_EQ(eog, 0);
}

TEST_F(TokenizerApiTest, LlamaAddsBosAndDetokenizeRemovesTheDummySpace) {
    open("tokenizer/llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
    std::vector<int32_t> ids = tokenize("Hello world", VKLLM_TOKENIZE_ADD_SPECIAL);
    ASSERT_EQ(ids, (std::vector<int32_t>{1, 15043, 3186}));
    char buf[64];
    size_t len = 0;
    ASSERT_EQ(vkllm_tokenizer_decode(tok_, ids.data(), ids.size(), 0, buf, sizeof buf, &len),
              VKLLM_OK);
    EXPECT_STREQ(buf, "Hello world");
    ASSERT_EQ(vkllm_tokenizer_decode(tok_, ids.data(), ids.size(), VKLLM_DETOKENIZE_SPECIAL, buf,
                                     sizeof buf, &len),
              VKLLM_OK);
    EXPECT_STREQ(buf, "<s> Hello world") << "BOS rendered on request";
    ASSERT_EQ(vkllm_tokenizer_get_piece(tok_, 15043, 0, buf, sizeof buf, &len), VKLLM_OK);
    EXPECT_STREQ(buf, " Hello");
    vkllm_tokenizer_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_tokenizer_get_info(tok_, &info), VKLLM_OK);
    EXPECT_EQ(info.n_vocab, 32000u);
    EXPECT_EQ(info.bos, 1);
    EXPECT_EQ(info.eos, 2);
    EXPECT_EQ(info.add_bos, 1);
    EXPECT_STREQ(info.model, "llama");
}

TEST_F(TokenizerApiTest, StreamingNeverSplitsAUtf8Character) {
    // Llama 2 spells rare characters as <0xXX> byte tokens: 🦙 is four tokens.
    open("tokenizer/llama.cpp-vocab/ggml-vocab-llama-spm.gguf");
    std::string text = "llama \xF0\x9F\xA6\x99 and \xE4\xBD\xA0\xE5\xA5\xBD!";
    std::vector<int32_t> ids = tokenize(text, 0);
    vkllm_detokenizer *d = nullptr;
    ASSERT_EQ(vkllm_detokenizer_create(tok_, 0, &d), VKLLM_OK);
    std::string all;
    for (int32_t id : ids) {
        char buf[32];
        size_t len = 0;
        ASSERT_EQ(vkllm_detokenizer_push(d, id, buf, sizeof buf, &len), VKLLM_OK);
        std::string part(buf, len);
        // Every chunk on its own is whole UTF-8: no lead byte without its continuation.
        for (size_t i = 0; i < part.size();) {
            unsigned char c = static_cast<unsigned char>(part[i]);
            size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
            ASSERT_LE(i + n, part.size()) << "chunk ends inside a character after token " << id;
            i += n;
        }
        all += part;
    }
    char buf[8];
    size_t len = 0;
    ASSERT_EQ(vkllm_detokenizer_flush(d, buf, sizeof buf, &len), VKLLM_OK);
    EXPECT_EQ(len, 0u);
    EXPECT_EQ(all, text);

    // A buffer that is too small keeps the token: the retry gets its text.
    std::vector<int32_t> hello = tokenize("Hello", 0);
    ASSERT_EQ(vkllm_detokenizer_push(d, hello[0], buf, 2, &len), VKLLM_ERR_BUFFER_TOO_SMALL);
    EXPECT_EQ(len, 5u);
    ASSERT_EQ(vkllm_detokenizer_push(d, hello[0], buf, sizeof buf, &len), VKLLM_OK);
    EXPECT_STREQ(buf, "Hello");
    vkllm_detokenizer_destroy(d);
}

TEST_F(TokenizerApiTest, InvalidInputIsHandledNotRejected) {
    open("tokenizer/generated-vocab/ggml-vocab-qwen2.5.gguf");
    std::string bad = "ok \xFF\xFE broken \xE4\xBD and \xC0\xAF overlong";
    std::vector<int32_t> ids = tokenize(bad, 0);
    ASSERT_FALSE(ids.empty());
    std::vector<char> out(bad.size() + 1);
    size_t len = 0;
    ASSERT_EQ(vkllm_tokenizer_decode(tok_, ids.data(), ids.size(), 0, out.data(), out.size(), &len),
              VKLLM_OK);
    EXPECT_EQ(std::string(out.data(), len), bad) << "byte-level BPE keeps every byte";
    std::string with_nul("a\0b", 3);
    EXPECT_EQ(tokenize(with_nul, 0).size(), 3u) << "the length, not a NUL, ends the text";
    size_t n = 0;
    EXPECT_EQ(vkllm_tokenizer_encode(tok_, nullptr, 0, 0, nullptr, 0, &n), VKLLM_OK);
    EXPECT_EQ(n, 0u);
}

TEST_F(TokenizerApiTest, BadIdsAndArgumentsAreErrors) {
    open("tokenizer/llama.cpp-vocab/ggml-vocab-gpt-2.gguf");
    char buf[16];
    size_t len = 0;
    EXPECT_EQ(vkllm_tokenizer_get_piece(tok_, 50257, 0, buf, sizeof buf, &len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_tokenizer_get_piece(tok_, -1, 0, buf, sizeof buf, &len),
              VKLLM_ERR_INVALID_ARGUMENT);
    int32_t ids[] = {100, 99999999};
    EXPECT_EQ(vkllm_tokenizer_decode(tok_, ids, 2, 0, buf, sizeof buf, &len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("99999999"), std::string::npos);
    size_t n;
    EXPECT_EQ(vkllm_tokenizer_encode(nullptr, "x", 1, 0, nullptr, 0, &n),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_tokenizer_encode(tok_, nullptr, 5, 0, nullptr, 0, &n),
              VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_tokenizer *t = nullptr;
    EXPECT_EQ(vkllm_tokenizer_create(nullptr, &t), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_tokenizer_destroy(nullptr);
    vkllm_detokenizer_destroy(nullptr);
}

namespace {
vkllm_status create_from(const GgufBuilder &b, std::string *message) {
    std::string path =
        ::testing::TempDir() + "vkllm_tokenizer_case_" + std::to_string(::getpid()) + ".gguf";
    std::vector<uint8_t> bytes = b.finish();
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    vkllm_gguf *g = nullptr;
    vkllm_status s = vkllm_gguf_open(path.c_str(), &g);
    vkllm_tokenizer *t = nullptr;
    if (s == VKLLM_OK) s = vkllm_tokenizer_create(g, &t);
    *message = vkllm_last_error();
    vkllm_tokenizer_destroy(t);
    vkllm_gguf_destroy(g);
    std::remove(path.c_str());
    return s;
}
}  // namespace

TEST(TokenizerApi, MissingOrUnknownTokenizersAreRefusedByName) {
    std::string msg;
    GgufBuilder none;
    none.kv_string("general.architecture", "llama");
    EXPECT_EQ(create_from(none, &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("tokenizer.ggml.model"), std::string::npos) << msg;

    GgufBuilder t5;
    t5.kv_string("tokenizer.ggml.model", "t5");
    t5.kv_strings("tokenizer.ggml.tokens", {"a"});
    EXPECT_EQ(create_from(t5, &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("\"t5\""), std::string::npos) << msg;

    // WordPiece turns what it cannot cover into [UNK]: a vocabulary without one is refused.
    GgufBuilder bert;
    bert.kv_string("tokenizer.ggml.model", "bert");
    bert.kv_strings("tokenizer.ggml.tokens", {"a"});
    EXPECT_EQ(create_from(bert, &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("unknown token"), std::string::npos) << msg;

    GgufBuilder pre;
    pre.kv_string("tokenizer.ggml.model", "gpt2");
    pre.kv_string("tokenizer.ggml.pre", "mystery-bpe");
    pre.kv_strings("tokenizer.ggml.tokens", {"a"});
    EXPECT_EQ(create_from(pre, &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("mystery-bpe"), std::string::npos) << msg;
    // The message lists the names vkllm knows and says where the README keeps them.
    EXPECT_NE(msg.find("smollm"), std::string::npos) << msg;
    EXPECT_NE(msg.find("README"), std::string::npos) << msg;

    // Without tokenizer.ggml.pre a BPE vocabulary gets llama.cpp's default rules, and a warning.
    GgufBuilder no_pre;
    no_pre.kv_string("tokenizer.ggml.model", "gpt2");
    no_pre.kv_strings("tokenizer.ggml.tokens", {"a"});
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(create_from(no_pre, &msg), VKLLM_OK) << msg;
    std::string warned = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(warned.find("no tokenizer.ggml.pre"), std::string::npos) << warned;

    GgufBuilder bos;
    bos.kv_string("tokenizer.ggml.model", "gpt2");
    bos.kv_strings("tokenizer.ggml.tokens", {"a", "b"});
    bos.kv_u32("tokenizer.ggml.bos_token_id", 7);
    EXPECT_EQ(create_from(bos, &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("bos_token_id"), std::string::npos) << msg;

    GgufBuilder scores;
    scores.kv_string("tokenizer.ggml.model", "llama");
    scores.kv_strings("tokenizer.ggml.tokens", {"a", "b"});
    scores.kv_f32s("tokenizer.ggml.scores", {0.f});
    EXPECT_EQ(create_from(scores, &msg), VKLLM_ERR_FORMAT);
}
