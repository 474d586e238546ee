// The GGUF writer, read back through the strict reader: every metadata type, arrays and
// strings, copied keys, tensor data and its alignment, and failures that leave no file.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "format/gguf.h"
#include "format/gguf_writer.h"

using vkllm::format::GgufFile;
using vkllm::format::GgufWriter;
using vkllm::format::KeyValue;
using vkllm::format::ValueType;

namespace {

std::string temp_path(const std::string &name) {
    return ::testing::TempDir() + "vkllm_writer_" + name + "_" + std::to_string(::getpid()) +
           ".gguf";
}

bool exists(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

template <typename T>
T scalar(const GgufFile &f, const std::string &key, ValueType type) {
    const KeyValue *kv = f.find(key);
    EXPECT_TRUE(kv) << key;
    if (!kv) return T();
    EXPECT_EQ(kv->type, type) << key;
    std::string_view b = f.value_bytes(*kv);
    EXPECT_EQ(b.size(), sizeof(T)) << key;
    T v{};
    std::memcpy(&v, b.data(), std::min(b.size(), sizeof v));
    return v;
}

vkllm_status status_of(const std::function<void()> &f) {
    try {
        f();
    } catch (const vkllm::Error &e) {
        return e.status();
    }
    return VKLLM_OK;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = uint8_t(i * 131 + seed);
    return v;
}

}  // namespace

TEST(GgufWriter, EveryValueTypeAndTensorReadsBack) {
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_u8("t.u8", 200);
    w.set_i8("t.i8", -100);
    w.set_u16("t.u16", 60000);
    w.set_i16("t.i16", -30000);
    w.set_u32("t.u32", 4000000000u);
    w.set_i32("t.i32", -2000000000);
    w.set_u64("t.u64", 0xfedcba9876543210ull);
    w.set_i64("t.i64", INT64_MIN + 1);
    w.set_f32("t.f32", 0.1f);
    w.set_f64("t.f64", -1e300);
    w.set_bool("t.bool", true);
    w.set_bool("t.false", false);
    w.set_string("t.empty", "");
    w.set_string("t.utf8", std::string("h\xc3\xa9llo \xe4\xb8\x96\0x", 13));
    w.set_string_array("t.strings", {"a", "", "long string with spaces", "\xf0\x9f\x98\x80"});
    w.set_string_array("t.no_strings", {});
    const int16_t i16s[3] = {-1, 2, -32768};
    const float f32s[4] = {1.5f, -0.0f, 1e-40f, 3e38f};
    const uint64_t u64s[2] = {1, UINT64_MAX};
    const double f64s[2] = {0.25, -2.5};
    const uint8_t bools[3] = {1, 0, 1};
    const int32_t i32s[2] = {-5, 7};
    w.set_array("t.i16s", ValueType::I16, i16s, 3);
    w.set_array("t.f32s", ValueType::F32, f32s, 4);
    w.set_array("t.u64s", ValueType::U64, u64s, 2);
    w.set_array("t.f64s", ValueType::F64, f64s, 2);
    w.set_array("t.bools", ValueType::Bool, bools, 3);
    w.set_array("t.i32s", ValueType::I32, i32s, 2);
    w.set_array("t.empty_u8s", ValueType::U8, nullptr, 0);
    w.set_u32("t.replaced", 1);
    w.set_string("t.replaced", "now a string");  // keeps its place, changes type
    w.set_u32("t.removed", 3);
    EXPECT_TRUE(w.remove("t.removed"));
    EXPECT_FALSE(w.remove("t.removed"));
    w.set_alignment(64);
    EXPECT_EQ(w.alignment(), 64u);

    // Sizes that are not multiples of the alignment, so padding is exercised.
    std::vector<uint8_t> a = pattern(3 * 4, 1), b = pattern(2 * 34 * 3, 2),
                         c = pattern(5 * 2 * 3 * 2, 3);
    w.add_tensor("a", 0, {3}, a.data());
    w.add_tensor("b.weight", 8, {64, 3}, b.data());
    w.add_tensor("c", 1, {5, 2, 3}, c.data());
    std::vector<uint8_t> d = pattern(4 * 4, 4);
    w.add_tensor("d.provided", 0, {2, 2, 1, 1});  // data from the provider
    EXPECT_EQ(w.tensor_count(), 4u);
    EXPECT_EQ(w.tensor_bytes(1), 2u * 34 * 3);

    std::string path = temp_path("all");
    std::vector<size_t> asked;
    w.write(path, [&](size_t i) {
        asked.push_back(i);
        return static_cast<const void *>(d.data());
    });
    EXPECT_EQ(asked, std::vector<size_t>{3});
    EXPECT_FALSE(exists(path + ".tmp"));

    GgufFile f(path);
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), 64u);
    std::vector<std::string> keys;
    for (const KeyValue &kv : f.keys())
        keys.push_back(kv.key);
    EXPECT_EQ(keys, (std::vector<std::string>{"general.architecture",
                                              "t.u8",
                                              "t.i8",
                                              "t.u16",
                                              "t.i16",
                                              "t.u32",
                                              "t.i32",
                                              "t.u64",
                                              "t.i64",
                                              "t.f32",
                                              "t.f64",
                                              "t.bool",
                                              "t.false",
                                              "t.empty",
                                              "t.utf8",
                                              "t.strings",
                                              "t.no_strings",
                                              "t.i16s",
                                              "t.f32s",
                                              "t.u64s",
                                              "t.f64s",
                                              "t.bools",
                                              "t.i32s",
                                              "t.empty_u8s",
                                              "t.replaced",
                                              "general.alignment"}));
    EXPECT_EQ(f.get_string("general.architecture"), "llama");
    EXPECT_EQ(scalar<uint8_t>(f, "t.u8", ValueType::U8), 200);
    EXPECT_EQ(scalar<int8_t>(f, "t.i8", ValueType::I8), -100);
    EXPECT_EQ(scalar<uint16_t>(f, "t.u16", ValueType::U16), 60000);
    EXPECT_EQ(scalar<int16_t>(f, "t.i16", ValueType::I16), -30000);
    EXPECT_EQ(scalar<uint32_t>(f, "t.u32", ValueType::U32), 4000000000u);
    EXPECT_EQ(scalar<int32_t>(f, "t.i32", ValueType::I32), -2000000000);
    EXPECT_EQ(scalar<uint64_t>(f, "t.u64", ValueType::U64), 0xfedcba9876543210ull);
    EXPECT_EQ(scalar<int64_t>(f, "t.i64", ValueType::I64), INT64_MIN + 1);
    EXPECT_EQ(scalar<float>(f, "t.f32", ValueType::F32), 0.1f);
    EXPECT_EQ(scalar<double>(f, "t.f64", ValueType::F64), -1e300);
    EXPECT_EQ(f.get_bool("t.bool"), true);
    EXPECT_EQ(f.get_bool("t.false"), false);
    EXPECT_EQ(f.get_string("t.empty"), "");
    EXPECT_EQ(f.get_string("t.utf8"), std::string_view("h\xc3\xa9llo \xe4\xb8\x96\0x", 13));
    std::vector<std::string_view> strings = f.get_string_array("t.strings");
    EXPECT_EQ(strings, (std::vector<std::string_view>{"a", "", "long string with spaces",
                                                      "\xf0\x9f\x98\x80"}));
    EXPECT_TRUE(f.get_string_array("t.no_strings").empty());
    EXPECT_EQ(f.find("t.no_strings")->element_type, ValueType::String);
    auto array = [&](const char *key, ValueType et, const void *want, size_t count, size_t size) {
        const KeyValue *kv = f.find(key);
        ASSERT_TRUE(kv) << key;
        EXPECT_EQ(kv->type, ValueType::Array) << key;
        EXPECT_EQ(kv->element_type, et) << key;
        EXPECT_EQ(kv->count, count) << key;
        std::string_view bytes = f.value_bytes(*kv);
        ASSERT_EQ(bytes.size(), count * size) << key;
        if (count) {
            EXPECT_EQ(0, std::memcmp(bytes.data(), want, bytes.size())) << key;
        }
    };
    array("t.i16s", ValueType::I16, i16s, 3, 2);
    array("t.f32s", ValueType::F32, f32s, 4, 4);
    array("t.u64s", ValueType::U64, u64s, 2, 8);
    array("t.f64s", ValueType::F64, f64s, 2, 8);
    array("t.bools", ValueType::Bool, bools, 3, 1);
    array("t.i32s", ValueType::I32, i32s, 2, 4);
    array("t.empty_u8s", ValueType::U8, nullptr, 0, 1);
    EXPECT_EQ(f.get_f32_array("t.f32s"), std::vector<float>(f32s, f32s + 4));
    EXPECT_EQ(f.get_i32_array("t.i32s"), std::vector<int32_t>(i32s, i32s + 2));
    EXPECT_EQ(f.get_string("t.replaced"), "now a string");
    EXPECT_FALSE(f.find("t.removed"));

    ASSERT_EQ(f.tensors().size(), 4u);
    EXPECT_EQ(f.data_offset() % 64, 0u);
    struct Want {
        const char *name;
        uint32_t type;
        std::vector<uint64_t> dims;
        const std::vector<uint8_t> *bytes;
    };
    const Want want[] = {{"a", 0, {3}, &a},
                         {"b.weight", 8, {64, 3}, &b},
                         {"c", 1, {5, 2, 3}, &c},
                         {"d.provided", 0, {2, 2, 1, 1}, &d}};
    for (size_t i = 0; i < 4; ++i) {
        const auto &t = f.tensors()[i];
        EXPECT_EQ(t.name, want[i].name);
        EXPECT_EQ(t.type->id, want[i].type);
        ASSERT_EQ(t.n_dims, want[i].dims.size());
        for (uint32_t k = 0; k < t.n_dims; ++k)
            EXPECT_EQ(t.dims[k], want[i].dims[k]) << t.name;
        EXPECT_EQ(t.offset % 64, 0u) << t.name;  // absolute: the data section is aligned too
        ASSERT_EQ(t.n_bytes, want[i].bytes->size()) << t.name;
        EXPECT_EQ(0, std::memcmp(f.tensor_data(t), want[i].bytes->data(), t.n_bytes)) << t.name;
    }
    // The file ends with the last tensor's padding, as ggml writes it.
    EXPECT_EQ(f.file_size() % 64, 0u);
    std::remove(path.c_str());
}

TEST(GgufWriter, CopiedKeysAreByteIdentical) {
    GgufWriter w;
    w.set_string("general.architecture", "qwen2");
    w.set_u32("general.file_type", 0);
    w.set_string_array("tokenizer.ggml.tokens", {"x", "y", "zz"});
    const float scores[3] = {0.0f, -1.0f, -2.5f};
    w.set_array("tokenizer.ggml.scores", ValueType::F32, scores, 3);
    w.set_f64("t.f64", 2.0);
    std::vector<uint8_t> data = pattern(4 * 8, 9);
    w.add_tensor("x", 0, {8}, data.data());
    std::string first = temp_path("copy_src"), second = temp_path("copy_dst");
    w.write(first);

    GgufFile src(first);
    GgufWriter copy;
    copy.copy_keys(src);
    copy.set_u32("general.file_type", 15);
    copy.set_u32("general.quantization_version", 2);
    copy.add_tensor("x", 0, {8}, src.tensor_data(src.tensors()[0]));
    copy.write(second);

    GgufFile dst(second);
    ASSERT_EQ(dst.keys().size(), src.keys().size() + 1);
    for (size_t i = 0; i < src.keys().size(); ++i) {
        const KeyValue &a = src.keys()[i], &b = dst.keys()[i];
        EXPECT_EQ(a.key, b.key);
        EXPECT_EQ(a.type, b.type) << a.key;
        EXPECT_EQ(a.element_type, b.element_type) << a.key;
        EXPECT_EQ(a.count, b.count) << a.key;
        if (a.key != "general.file_type") {
            EXPECT_EQ(src.value_bytes(a), dst.value_bytes(b)) << a.key;
        }
    }
    EXPECT_EQ(dst.get_int("general.file_type"), 15);
    EXPECT_EQ(dst.get_int("general.quantization_version"), 2);
    EXPECT_EQ(dst.alignment(), 32u);
    EXPECT_EQ(0, std::memcmp(dst.tensor_data(dst.tensors()[0]), data.data(), data.size()));
    std::remove(first.c_str());
    std::remove(second.c_str());
}

TEST(GgufWriter, FileWithoutTensors) {
    GgufWriter w;
    w.set_string("general.name", "empty");
    std::string path = temp_path("no_tensors");
    w.write(path);
    GgufFile f(path);
    EXPECT_TRUE(f.tensors().empty());
    EXPECT_EQ(f.get_string("general.name"), "empty");
    std::remove(path.c_str());
}

TEST(GgufWriter, FailedWritesLeaveNothingBehind) {
    std::vector<uint8_t> data = pattern(64, 1);
    GgufWriter w;
    w.set_string("general.name", "x");
    w.add_tensor("t", 0, {16}, data.data());
    w.add_tensor("u", 0, {16});

    // An existing file stays as it was when the new one cannot be completed.
    std::string path = temp_path("fail");
    {
        FILE *f = std::fopen(path.c_str(), "wb");
        ASSERT_TRUE(f);
        std::fputs("old", f);
        std::fclose(f);
    }
    auto throwing = [](size_t) -> const void * { throw vkllm::Error(VKLLM_ERR_CANCELLED, "stop"); };
    EXPECT_EQ(status_of([&] { w.write(path, throwing); }), VKLLM_ERR_CANCELLED);
    EXPECT_FALSE(exists(path + ".tmp"));
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 3);

    // No provider for a tensor without data.
    EXPECT_EQ(status_of([&] { w.write(path); }), VKLLM_ERR_INVALID_ARGUMENT);
    std::remove(path.c_str());

    // Nowhere to write.
    std::string bad = ::testing::TempDir() + "vkllm_no_such_dir/x.gguf";
    EXPECT_EQ(status_of([&] { w.write(bad, [&](size_t) { return data.data(); }); }), VKLLM_ERR_IO);
    EXPECT_FALSE(exists(bad + ".tmp"));

    // /dev/full accepts the open and fails the writes.
    if (exists("/dev/full")) {
        GgufWriter full;
        std::vector<uint8_t> big(4 << 20);
        full.add_tensor("big", 0, {big.size() / 4}, big.data());
        std::string dir = ::testing::TempDir() + "vkllm_full_" + std::to_string(::getpid());
        ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
        std::string target = dir + "/out.gguf";
        ASSERT_EQ(::symlink("/dev/full", (target + ".tmp").c_str()), 0);
        EXPECT_EQ(status_of([&] { full.write(target); }), VKLLM_ERR_IO);
        EXPECT_FALSE(exists(target));
        ::unlink((target + ".tmp").c_str());
        ::rmdir(dir.c_str());
    }
}

TEST(GgufWriter, RejectsBadTensorsAndAlignment) {
    GgufWriter w;
    w.add_tensor("a", 0, {4});
    EXPECT_EQ(status_of([&] { w.add_tensor("a", 0, {4}); }), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { w.add_tensor("", 0, {4}); }), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { w.add_tensor("b", 0, {}); }), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] {
                  w.add_tensor("b", 0, {1, 1, 1, 1, 1});
              }),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { w.add_tensor("b", 0, {0}); }), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { w.add_tensor("b", 8, {48}); }), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { w.add_tensor("b", 4, {32}); }), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] {
                  w.add_tensor("b", 0, {1ull << 40, 1ull << 40});
              }),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { w.set_alignment(24); }), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of([&] { w.set_array("k", ValueType::String, nullptr, 0); }),
              VKLLM_ERR_INVALID_ARGUMENT);
    w.set_u32("general.alignment", 48);
    EXPECT_EQ(status_of([&] { w.alignment(); }), VKLLM_ERR_INVALID_ARGUMENT);
    w.set_u64("general.alignment", 64);  // the reader insists on u32
    EXPECT_EQ(status_of([&] { w.alignment(); }), VKLLM_ERR_INVALID_ARGUMENT);
}
