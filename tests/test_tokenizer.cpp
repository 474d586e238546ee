// Tokenizers against real vocabularies and independent reference encodings: llama.cpp's
// vocab test vectors and the Hugging Face encodings of tests/data/tokenizer. Every case
// must match exactly; each test reports how many it checked.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "format/gguf.h"
#include "json.h"
#include "test_data.h"
#include "tokenizer/tokenizer.h"

using vkllm::tokenizer::EncodeOptions;
using vkllm::tokenizer::Tokenizer;

namespace {

std::unique_ptr<Tokenizer> load(const std::string &path) {
    vkllm::format::GgufFile f(path);
    return std::make_unique<Tokenizer>(vkllm::tokenizer::load_vocab(f));
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string ids_text(const std::vector<int32_t> &ids) {
    std::string s;
    for (int32_t id : ids)
        s += " " + std::to_string(id);
    return s;
}

// llama.cpp's test-tokenizer-0 format: strings separated by "\n__ggml_vocab_test__\n", one line
// of expected ids per string; no BOS, special-token parsing off.
void check_llama_cpp_vectors(const std::string &vocab, const std::string &vectors) {
    std::string dir = test_data_dir();
    auto tok = load(dir + "/tokenizer/" + vocab);
    std::string inp = read_file(dir + "/tokenizer/llama.cpp-vocab/" + vectors + ".inp");
    std::string out = read_file(dir + "/tokenizer/llama.cpp-vocab/" + vectors + ".out");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    for (size_t pos = 0, next; (next = inp.find(sep, pos)) != std::string::npos;
         pos = next + sep.size())
        texts.push_back(inp.substr(pos, next - pos));
    std::vector<std::string> lines;
    std::stringstream ls(out);
    for (std::string line; std::getline(ls, line);)
        lines.push_back(line);
    ASSERT_EQ(texts.size(), lines.size());
    ASSERT_EQ(texts.size(), 46u);
    size_t matched = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
        std::vector<int32_t> got = tok->encode(texts[i], EncodeOptions{});
        if (ids_text(got) == lines[i])
            ++matched;
        else
            ADD_FAILURE() << vectors << " case " << i << " \"" << texts[i] << "\"\n  want"
                          << lines[i] << "\n  got " << ids_text(got);
    }
    std::printf("%s: %zu/%zu llama.cpp vectors match\n", vectors.c_str(), matched, texts.size());
    ::testing::Test::RecordProperty("matched", int(matched));
}

// The Hugging Face encodings of the 107-string corpus: `ids` with added tokens recognised,
// `ids_no_special` without; decoding round-trips where the reference says it does.
void check_reference_json(const std::string &vocab, const std::string &reference) {
    std::string dir = test_data_dir();
    auto tok = load(dir + "/tokenizer/" + vocab);
    Json ref = Json::load(dir + "/tokenizer/" + reference);
    size_t matched = 0, checked = 0, roundtrips = 0;
    for (const Json &c : ref["cases"].arr) {
        const std::string &text = c["text"].str;
        // Our Qwen vocabulary is Qwen2.5's: where Qwen3 added tokens, its ids are the truth.
        const Json &want_ids = c.has("ids_qwen25") ? c["ids_qwen25"] : c["ids"];
        std::vector<int32_t> with = tok->encode(text, EncodeOptions{false, true});
        std::vector<int32_t> plain = tok->encode(text, EncodeOptions{false, false});
        checked += 2;
        if (with == want_ids.ints())
            ++matched;
        else
            ADD_FAILURE() << reference << " \"" << text << "\" (special)\n  want"
                          << ids_text(want_ids.ints()) << "\n  got " << ids_text(with);
        if (plain == c["ids_no_special"].ints())
            ++matched;
        else
            ADD_FAILURE() << reference << " \"" << text << "\" (no special)\n  want"
                          << ids_text(c["ids_no_special"].ints()) << "\n  got " << ids_text(plain);
        if (c["decode_roundtrip_ok"].b) {
            EXPECT_EQ(tok->decode(plain, true), text) << reference << " round trip";
            ++roundtrips;
        }
    }
    std::printf("%s: %zu/%zu encodings match, %zu round trips\n", reference.c_str(), matched,
                checked, roundtrips);
    ::testing::Test::RecordProperty("matched", int(matched));
    EXPECT_GE(checked, 200u);
}

}  // namespace

TEST(TokenizerVectors, Gpt2MatchesLlamaCppVectors) {
    check_llama_cpp_vectors("llama.cpp-vocab/ggml-vocab-gpt-2.gguf", "ggml-vocab-gpt-2.gguf");
}
TEST(TokenizerVectors, LlamaSpmMatchesLlamaCppVectors) {
    check_llama_cpp_vectors("llama.cpp-vocab/ggml-vocab-llama-spm.gguf",
                            "ggml-vocab-llama-spm.gguf");
}
TEST(TokenizerVectors, Qwen2MatchesLlamaCppVectors) {
    check_llama_cpp_vectors("generated-vocab/ggml-vocab-qwen2.5.gguf", "ggml-vocab-qwen2.gguf");
}
TEST(TokenizerVectors, Llama3MatchesLlamaCppVectors) {
    check_llama_cpp_vectors("generated-vocab/ggml-vocab-llama3.gguf", "ggml-vocab-llama-bpe.gguf");
}

TEST(TokenizerReference, Gpt2MatchesHuggingFace) {
    check_reference_json("llama.cpp-vocab/ggml-vocab-gpt-2.gguf", "reference-gpt2.json");
}
TEST(TokenizerReference, Qwen2MatchesHuggingFaceIncludingNfc) {
    check_reference_json("generated-vocab/ggml-vocab-qwen2.5.gguf", "reference-qwen2.json");
}
TEST(TokenizerReference, Llama3MatchesHuggingFace) {
    check_reference_json("generated-vocab/ggml-vocab-llama3.gguf", "reference-llama3.json");
}
TEST(TokenizerReference, GptOssMatchesHuggingFace) {
    check_reference_json("generated-vocab/ggml-vocab-gpt-oss.gguf", "reference-gpt-oss.json");
}

// llama-tokenize's own output for the tiny test models (BOS where the vocab asks, special
// tokens parsed); these vocabularies are small, so most text falls back to bytes.
TEST(TokenizerReference, TinyModelsMatchLlamaTokenize) {
    std::string dir = test_data_dir();
    Json ref = Json::load(dir + "/reference/tokenize-tiny.json");
    size_t checked = 0;
    for (const auto &model : ref["models"].obj) {
        auto tok = load(dir + "/" + model.first);
        for (const Json &c : model.second.arr) {
            EXPECT_EQ(ids_text(tok->encode(c["text"].str, EncodeOptions{true, true})),
                      ids_text(c["default"].ints()))
                << model.first << " \"" << c["text"].str << "\"";
            EXPECT_EQ(ids_text(tok->encode(c["text"].str, EncodeOptions{true, false})),
                      ids_text(c["no_parse_special"].ints()))
                << model.first << " \"" << c["text"].str << "\" (no special)";
            checked += 2;
        }
    }
    EXPECT_GE(checked, 36u);
}
