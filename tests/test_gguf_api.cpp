// GGUF metadata through the C ABI, on the real model files of tests/data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_data.h"
#include "vkllm.h"

namespace {

class GgufApiTest : public ::testing::Test {
  protected:
    void SetUp() override {
        std::string dir = test_data_dir();
        path_ = dir + "/models/tiny-qwen2-f16.gguf";
        ASSERT_EQ(vkllm_gguf_open(path_.c_str(), &g_), VKLLM_OK) << vkllm_last_error();
    }
    void TearDown() override { vkllm_gguf_destroy(g_); }
    std::string path_;
    vkllm_gguf *g_ = nullptr;
};

}  // namespace

TEST_F(GgufApiTest, SummaryDescribesTheModel) {
    vkllm_model_summary s;
    s.struct_size = sizeof s;
    ASSERT_EQ(vkllm_gguf_get_summary(g_, &s), VKLLM_OK);
    EXPECT_STREQ(s.architecture, "qwen2");
    EXPECT_EQ(s.n_layers, 2u);
    EXPECT_EQ(s.n_heads, 4u);
    EXPECT_EQ(s.n_kv_heads, 2u);
    EXPECT_EQ(s.n_vocab, 320u);
    EXPECT_EQ(s.context_length, 256u);
    EXPECT_EQ(s.tensors_of_type[0] + s.tensors_of_type[1], s.n_tensors);
    EXPECT_STREQ(s.tokenizer_pre, "qwen2");
}

TEST_F(GgufApiTest, KeysReadByTypeAndAsText) {
    int64_t n = 0;
    ASSERT_EQ(vkllm_gguf_get_int(g_, "qwen2.block_count", &n), VKLLM_OK);
    EXPECT_EQ(n, 2);
    double theta = 0;
    ASSERT_EQ(vkllm_gguf_get_float(g_, "qwen2.rope.freq_base", &theta), VKLLM_OK);
    EXPECT_EQ(theta, 1e6);
    EXPECT_EQ(vkllm_gguf_get_int(g_, "no.such.key", &n), VKLLM_ERR_NOT_FOUND);
    EXPECT_NE(std::string(vkllm_last_error()).find("no.such.key"), std::string::npos);
    EXPECT_EQ(vkllm_gguf_get_int(g_, "general.architecture", &n), VKLLM_ERR_FORMAT);

    size_t len = 0;
    EXPECT_EQ(vkllm_gguf_get_string(g_, "general.architecture", nullptr, 0, &len),
              VKLLM_ERR_BUFFER_TOO_SMALL);
    EXPECT_EQ(len, 5u);
    char small[5];
    EXPECT_EQ(vkllm_gguf_get_string(g_, "general.architecture", small, sizeof small, &len),
              VKLLM_ERR_BUFFER_TOO_SMALL)
        << "no room for the NUL";
    char buf[6];
    ASSERT_EQ(vkllm_gguf_get_string(g_, "general.architecture", buf, sizeof buf, &len), VKLLM_OK);
    EXPECT_STREQ(buf, "qwen2");
    std::vector<char> text(256);
    ASSERT_EQ(vkllm_gguf_get_text(g_, "tokenizer.ggml.merges", text.data(), text.size(), &len),
              VKLLM_OK);
    EXPECT_EQ(std::string(text.data()).rfind("[\"Ġ t\", \"h e\"", 0), 0u) << text.data();

    vkllm_gguf_key k;
    k.struct_size = sizeof k;
    ASSERT_EQ(vkllm_gguf_get_key(g_, 0, &k), VKLLM_OK);
    EXPECT_STREQ(k.name, "general.architecture");
    EXPECT_EQ(k.type, VKLLM_GGUF_STRING);
    EXPECT_EQ(vkllm_gguf_get_key(g_, 1000, &k), VKLLM_ERR_NOT_FOUND);
}

TEST_F(GgufApiTest, TensorsListTheirShapeTypeAndPlace) {
    vkllm_tensor_info t;
    t.struct_size = sizeof t;
    ASSERT_EQ(vkllm_gguf_get_tensor(g_, 0, &t), VKLLM_OK);
    EXPECT_STREQ(t.name, "token_embd.weight");
    EXPECT_STREQ(t.type_name, "F16");
    EXPECT_EQ(t.dims[0], 256u);
    EXPECT_EQ(t.dims[1], 320u);
    EXPECT_EQ(t.n_bytes, 256u * 320u * 2u);
    EXPECT_EQ(t.file_offset % 32, 0u);
    EXPECT_EQ(vkllm_gguf_get_tensor(g_, 27, &t), VKLLM_ERR_NOT_FOUND);
    EXPECT_STREQ(vkllm_ggml_type_name(12), "Q4_K");
    EXPECT_EQ(vkllm_ggml_type_name(4), nullptr);
}

TEST(GgufApi, BadArgumentsAndFilesFailCleanly) {
    vkllm_gguf *g = reinterpret_cast<vkllm_gguf *>(0x1);
    EXPECT_EQ(vkllm_gguf_open(nullptr, &g), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_gguf_open("/nonexistent.gguf", &g), VKLLM_ERR_IO);
    EXPECT_EQ(g, reinterpret_cast<vkllm_gguf *>(0x1)) << "out untouched on failure";
    EXPECT_EQ(vkllm_gguf_open("/", &g), VKLLM_ERR_IO) << "a directory";
    vkllm_gguf_destroy(nullptr);
    int64_t v;
    EXPECT_EQ(vkllm_gguf_get_int(nullptr, "k", &v), VKLLM_ERR_INVALID_ARGUMENT);
}
