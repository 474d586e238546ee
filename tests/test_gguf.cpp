// The GGUF reader: real files, every metadata type, and malformed or hostile files, each of
// which must give VKLLM_ERR_FORMAT (or UNSUPPORTED for valid-but-unhandled) and never crash.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "common/error.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"
#include "format/summary.h"
#include "gguf_builder.h"
#include "test_data.h"

using vkllm::format::GgufFile;
using vkllm::format::ValueType;

namespace {

// Unique per process: ctest runs tests in parallel, and rewriting a file another process has
// mapped would pull the pages from under it.
std::string write_temp(const std::vector<uint8_t> &bytes, const std::string &name) {
    std::string path =
        ::testing::TempDir() + "vkllm_gguf_" + name + "_" + std::to_string(::getpid()) + ".gguf";
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    return path;
}

// Opens `bytes` as a GGUF file; returns the status and, through `message`, the error text.
vkllm_status open_status(const std::vector<uint8_t> &bytes, std::string *message = nullptr,
                         const std::string &name = "case") {
    std::string path = write_temp(bytes, name);
    try {
        GgufFile f(path);
        std::remove(path.c_str());
        return VKLLM_OK;
    } catch (const vkllm::Error &e) {
        if (message) *message = e.what();
        std::remove(path.c_str());
        return e.status();
    }
}

std::vector<uint8_t> f32_bytes(size_t n) {
    std::vector<uint8_t> b(n * 4);
    for (size_t i = 0; i < n; ++i) {
        float v = float(i) * 0.5f;
        std::memcpy(&b[i * 4], &v, 4);
    }
    return b;
}

// A small valid file using every metadata type and two tensors.
GgufBuilder valid_builder() {
    GgufBuilder b;
    b.kv_string("general.architecture", "llama");
    b.kv_string("general.name", "tiny \"test\"");
    b.kv_u32("general.alignment", 32);
    b.kv_u32("llama.context_length", 128);
    b.kv_u32("llama.block_count", 1);
    b.kv_i32("some.i32", -7);
    b.kv_f32("llama.rope.freq_base", 10000.0f);
    b.kv_bool("tokenizer.ggml.add_bos_token", true);
    b.kv_u64("some.u64", 1ull << 40);
    b.kv_f64("some.f64", 0.25);
    b.kv_strings("tokenizer.ggml.tokens", {"<s>", "a", "b", "ab"});
    b.kv_f32s("tokenizer.ggml.scores", {0.f, -1.f, -2.f, -3.f});
    b.kv_i32s("tokenizer.ggml.token_type", {3, 1, 1, 1});
    b.tensor("token_embd.weight", 0, {8, 4}, f32_bytes(32));
    b.tensor("output_norm.weight", 0, {8}, f32_bytes(8));
    return b;
}

}  // namespace

TEST(Gguf, ReadsEveryMetadataTypeAndTensorInfo) {
    std::string path = write_temp(valid_builder().finish(), "valid");
    GgufFile f(path);
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.keys().size(), 13u);
    EXPECT_EQ(f.get_string("general.architecture").value(), "llama");
    EXPECT_EQ(f.get_int("llama.context_length").value(), 128);
    EXPECT_EQ(f.get_int("some.i32").value(), -7);
    EXPECT_EQ(f.get_int("some.u64").value(), int64_t(1) << 40);
    EXPECT_EQ(f.get_float("llama.rope.freq_base").value(), 10000.0);
    EXPECT_EQ(f.get_float("some.f64").value(), 0.25);
    EXPECT_TRUE(f.get_bool("tokenizer.ggml.add_bos_token").value());
    EXPECT_FALSE(f.get_int("no.such.key").has_value());
    auto tokens = f.get_string_array("tokenizer.ggml.tokens");
    ASSERT_EQ(tokens.size(), 4u);
    EXPECT_EQ(tokens[3], "ab");
    EXPECT_EQ(f.get_f32_array("tokenizer.ggml.scores")[2], -2.f);
    EXPECT_EQ(f.get_i32_array("tokenizer.ggml.token_type")[0], 3);
    try {
        f.get_string("llama.context_length");
        FAIL() << "a u32 read as a string";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_FORMAT);
        EXPECT_NE(std::string(e.what()).find("llama.context_length"), std::string::npos);
    }
    ASSERT_EQ(f.tensors().size(), 2u);
    const auto *t = f.find_tensor("token_embd.weight");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->n_dims, 2u);
    EXPECT_EQ(t->dims[0], 8u);
    EXPECT_EQ(t->dims[1], 4u);
    EXPECT_EQ(t->n_bytes, 128u);
    EXPECT_EQ(t->offset % 32, 0u);
    float v;
    std::memcpy(&v, f.tensor_data(*t) + 4 * 5, 4);
    EXPECT_EQ(v, 2.5f);
    EXPECT_EQ(f.value_text(*f.find("general.name")), "\"tiny \\\"test\\\"\"");
    EXPECT_EQ(f.value_text(*f.find("tokenizer.ggml.tokens"), 2), "[\"<s>\", \"a\", ... 4 in all]");
    std::remove(path.c_str());
}

TEST(Gguf, Version2FilesAreRead) {
    GgufBuilder b(2);
    b.kv_string("general.architecture", "gpt2");
    b.tensor("w", 1, {6}, std::vector<uint8_t>(12));
    EXPECT_EQ(open_status(b.finish()), VKLLM_OK);
}

TEST(Gguf, EveryTruncationIsAFormatError) {
    std::vector<uint8_t> good = valid_builder().finish();
    ASSERT_EQ(open_status(good), VKLLM_OK);
    size_t checked = 0;
    for (size_t n = 0; n < good.size(); ++n) {
        std::vector<uint8_t> cut(good.begin(), good.begin() + long(n));
        std::string msg;
        ASSERT_EQ(open_status(cut, &msg), VKLLM_ERR_FORMAT) << "truncated to " << n << " bytes";
        ++checked;
    }
    EXPECT_EQ(checked, good.size());
}

TEST(Gguf, AbsurdCountsAreRejectedBeforeAnyAllocation) {
    for (uint64_t count : {uint64_t(1) << 40, uint64_t(INT64_MAX), UINT64_MAX - 1}) {
        GgufBuilder kv = valid_builder();
        kv.n_kv_override = count;
        std::string msg;
        EXPECT_EQ(open_status(kv.finish(), &msg), VKLLM_ERR_FORMAT);
        EXPECT_NE(msg.find("metadata count"), std::string::npos) << msg;
        GgufBuilder t = valid_builder();
        t.n_tensors_override = count;
        EXPECT_EQ(open_status(t.finish(), &msg), VKLLM_ERR_FORMAT);
        EXPECT_NE(msg.find("tensor count"), std::string::npos) << msg;
    }
    GgufBuilder arr;
    arr.key("huge.array", 9), arr.u32(6), arr.u64(uint64_t(1) << 61);
    std::string msg;
    EXPECT_EQ(open_status(arr.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("huge.array"), std::string::npos) << msg;
    GgufBuilder str;
    str.key("huge.string", 8), str.u64(UINT64_MAX);
    EXPECT_EQ(open_status(str.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("at byte 47"), std::string::npos) << "names the offset: " << msg;
}

TEST(Gguf, TensorOffsetsPastTheEndAreRejected) {
    GgufBuilder b;
    b.tensor_at("w", 0, {4}, {}, 1 << 20);  // claims 16 bytes a MiB into a tiny file
    std::string msg;
    EXPECT_EQ(open_status(b.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("past the end"), std::string::npos) << msg;
    GgufBuilder wrap;
    wrap.tensor_at("w", 0, {4}, {}, UINT64_MAX - 31);  // offset + size wraps around
    EXPECT_EQ(open_status(wrap.finish(), &msg), VKLLM_ERR_FORMAT);
}

TEST(Gguf, OverflowingOrInvalidShapesAreRejected) {
    std::string msg;
    GgufBuilder big;
    big.tensor("w", 0, {uint64_t(1) << 32, uint64_t(1) << 32}, f32_bytes(1));
    EXPECT_EQ(open_status(big.finish(), &msg), VKLLM_ERR_FORMAT) << msg;
    GgufBuilder zero;
    zero.tensor("w", 0, {4, 0}, f32_bytes(4));
    EXPECT_EQ(open_status(zero.finish(), &msg), VKLLM_ERR_FORMAT) << msg;
    GgufBuilder dims;
    dims.tensor("w", 0, {1, 1, 1, 1, 1}, f32_bytes(1));
    EXPECT_EQ(open_status(dims.finish(), &msg), VKLLM_ERR_FORMAT) << msg;
    GgufBuilder blocks;  // Q8_0 rows must hold whole 32-element blocks
    blocks.tensor("w", 8, {48, 2}, std::vector<uint8_t>(102));
    EXPECT_EQ(open_status(blocks.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("Q8_0"), std::string::npos) << msg;
}

TEST(Gguf, WrongAlignmentIsRejected) {
    std::string msg;
    GgufBuilder odd;
    odd.kv_u32("general.alignment", 24);
    EXPECT_EQ(open_status(odd.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("power of two"), std::string::npos) << msg;
    GgufBuilder type;
    type.kv_u64("general.alignment", 32);
    EXPECT_EQ(open_status(type.finish(), &msg), VKLLM_ERR_FORMAT);
    GgufBuilder misaligned;
    misaligned.tensor_at("w", 0, {4}, f32_bytes(4), 8);
    EXPECT_EQ(open_status(misaligned.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("alignment"), std::string::npos) << msg;
    GgufBuilder custom;  // a valid non-default alignment is honoured
    custom.kv_u32("general.alignment", 64);
    custom.tensor("a", 0, {3}, f32_bytes(3));
    custom.tensor("b", 0, {3}, f32_bytes(3));
    std::string path = write_temp(custom.finish(64), "align64");
    GgufFile f(path);
    EXPECT_EQ(f.alignment(), 64u);
    EXPECT_EQ(f.data_offset() % 64, 0u);
    EXPECT_EQ(f.find_tensor("b")->offset - f.find_tensor("a")->offset, 64u);
    std::remove(path.c_str());
}

TEST(Gguf, DuplicateKeysAndTensorNamesAreRejected) {
    std::string msg;
    GgufBuilder keys;
    keys.kv_u32("a.b", 1);
    keys.kv_u32("a.b", 2);
    EXPECT_EQ(open_status(keys.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("duplicate metadata key a.b"), std::string::npos) << msg;
    GgufBuilder tensors;
    tensors.tensor("w", 0, {2}, f32_bytes(2));
    tensors.tensor("w", 0, {2}, f32_bytes(2));
    EXPECT_EQ(open_status(tensors.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("duplicate tensor name w"), std::string::npos) << msg;
    GgufBuilder overlap;
    overlap.tensor_at("a", 0, {16}, f32_bytes(16), 0);
    overlap.tensor_at("b", 0, {16}, f32_bytes(16), 32);
    EXPECT_EQ(open_status(overlap.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("overlap"), std::string::npos) << msg;
}

TEST(Gguf, InvalidTypesAndUnsupportedFilesAreNamed) {
    std::string msg;
    GgufBuilder vtype;
    vtype.key("k", 13), vtype.u32(0);
    EXPECT_EQ(open_status(vtype.finish(), &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("invalid value type 13"), std::string::npos) << msg;
    GgufBuilder ttype;
    ttype.tensor("w", 200, {4}, f32_bytes(4));
    EXPECT_EQ(open_status(ttype.finish(), &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("w has unknown ggml type 200"), std::string::npos) << msg;
    EXPECT_EQ(open_status(GgufBuilder(1).finish(), &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_EQ(open_status(GgufBuilder(4).finish(), &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_EQ(open_status(GgufBuilder(0x03000000).finish(), &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("big-endian"), std::string::npos) << msg;
    EXPECT_EQ(open_status({'G', 'G', 'M', 'L', 3, 0, 0, 0}, &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("not a GGUF file"), std::string::npos) << msg;
    GgufBuilder nested;
    nested.key("k", 9), nested.u32(9), nested.u64(0);
    EXPECT_EQ(open_status(nested.finish(), &msg), VKLLM_ERR_UNSUPPORTED);
    try {
        GgufFile f("/nonexistent/model.gguf");
        FAIL();
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_IO);
        EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos);
    }
}

TEST(Gguf, RandomCorruptionNeverCrashes) {
    // Flips bytes of a valid file: any outcome but a crash is fine, and an error is one of
    // the documented statuses.
    std::vector<uint8_t> good = valid_builder().finish();
    std::mt19937 rng(1234);
    int ok = 0, format = 0, unsupported = 0;
    for (int i = 0; i < 1500; ++i) {
        std::vector<uint8_t> bad = good;
        int flips = 1 + int(rng() % 4);
        for (int j = 0; j < flips; ++j)
            bad[rng() % bad.size()] = uint8_t(rng());
        vkllm_status s = open_status(bad);
        ASSERT_TRUE(s == VKLLM_OK || s == VKLLM_ERR_FORMAT || s == VKLLM_ERR_UNSUPPORTED) << s;
        (s == VKLLM_OK ? ok : s == VKLLM_ERR_FORMAT ? format : unsupported)++;
    }
    EXPECT_GT(format, 0);
}

TEST(Gguf, RealModelFilesAreSummarised) {
    std::string dir = test_data_dir();
    GgufFile stories(dir + "/models/stories260K-plctlab.gguf");
    vkllm_model_summary s = vkllm::format::summarize(stories);
    EXPECT_STREQ(s.architecture, "llama");
    EXPECT_EQ(s.n_layers, 5u);
    EXPECT_EQ(s.n_embd, 64u);
    EXPECT_EQ(s.n_heads, 8u);
    EXPECT_EQ(s.n_kv_heads, 4u);
    EXPECT_EQ(s.context_length, 512u);
    EXPECT_EQ(s.n_vocab, 512u);
    EXPECT_EQ(s.n_tensors, 47u);
    // llama2.c's file holds 264,128 floats, 4,096 of which are its legacy RoPE tables.
    EXPECT_EQ(s.n_params, 264128u - 4096u);
    EXPECT_EQ(s.tensors_of_type[0], 47u);
    EXPECT_STREQ(s.tokenizer_model, "llama");

    GgufFile moe(dir + "/models/tiny-gptoss-mxfp4.gguf");
    vkllm_model_summary m = vkllm::format::summarize(moe);
    EXPECT_STREQ(m.architecture, "gpt-oss");
    EXPECT_EQ(m.n_experts, 4u);
    EXPECT_EQ(m.n_experts_used, 2u);
    EXPECT_GT(m.tensors_of_type[39], 0u) << "MXFP4 experts";
    EXPECT_STREQ(m.tokenizer_pre, "gpt-4o");

    for (const char *name : {"tiny-llama-f16.gguf", "tiny-qwen2-f32.gguf", "tiny-gpt2-f16.gguf",
                             "tiny-qwen2moe-f16.gguf", "llama-2-tiny-random.gguf"}) {
        GgufFile f(dir + "/models/" + name);
        uint64_t bytes = 0;
        for (const auto &t : f.tensors())
            bytes += t.n_bytes;
        EXPECT_LE(f.data_offset() + bytes, f.file_size()) << name;
        EXPECT_GT(f.tensors().size(), 0u) << name;
    }
    GgufFile vocab(dir + "/tokenizer/generated-vocab/ggml-vocab-qwen2.5.gguf");
    EXPECT_EQ(vocab.tensors().size(), 0u);
    EXPECT_EQ(vocab.get_string_array("tokenizer.ggml.tokens").size(), 151936u);
}

// A file under a directory whose name is not ASCII ("Zoë", in UTF-8 as every path the library
// takes) is written there, rewritten (the writer's rename replaces the first file) and mapped:
// on Windows the library must use the wide-character calls, where the ANSI ones would look for
// another name.
TEST(Gguf, AFileUnderANonAsciiDirectoryIsWrittenReplacedAndMapped) {
    namespace fs = std::filesystem;
    std::string dir = ::testing::TempDir() + "vkllm_Zo\xc3\xab_" + std::to_string(::getpid());
    fs::create_directories(fs::u8path(dir));
    std::string path = dir + "/model.gguf";
    vkllm::format::GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_string("general.name", "first");
    w.write(path);
    w.set_string("general.name", "Zo\xc3\xab");
    w.write(path);
    EXPECT_TRUE(fs::is_regular_file(fs::u8path(path)));
    {
        GgufFile f(path);
        EXPECT_EQ(f.get_string("general.name").value_or(""), "Zo\xc3\xab");
    }
    std::error_code ec;
    EXPECT_EQ(fs::remove_all(fs::u8path(dir), ec), 2u) << ec.message();
}
