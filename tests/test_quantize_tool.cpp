// `vkllm quantize` end to end on the shared tiny Qwen2 models: the type of every tensor
// (llama.cpp's rules for the mixtures, the fallback for rows that are not whole blocks), the
// metadata carried over byte for byte, and the weights within each type's error bound.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "format/quant.h"
#include "test_data.h"

using vkllm::format::GgufFile;
using vkllm::format::KeyValue;
using vkllm::format::TensorInfo;

namespace {

std::vector<float> values(const GgufFile &f, const TensorInfo &t) {
    std::vector<float> v(size_t(t.n_elements));
    vkllm::format::dequantize_row(t.type->id, f.tensor_data(t), v.data(), t.n_elements);
    return v;
}

double relative_rms_error(const std::vector<float> &want, const std::vector<float> &got) {
    double err = 0.0, ref = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
        err += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
        ref += double(want[i]) * want[i];
    }
    return std::sqrt(err / ref);
}

// The bounds of test_quant.cpp's Gaussian rows (the tiny models' weights are Gaussian).
double bound(const char *type) {
    std::string t = type;
    if (t == "Q8_0") return 0.007;
    if (t == "Q6_K") return 0.023;
    if (t == "Q5_0") return 0.055;
    if (t == "Q4_0") return 0.11;
    if (t == "Q4_K") return 0.09;
    return 0.0;
}

int run_tool(const std::string &args) {
    std::string cmd = std::string(VKLLM_CLI) + " quantize --quiet " + args + " > /dev/null";
    return std::system(cmd.c_str());
}

std::string out_path(const std::string &name) {
    return ::testing::TempDir() + "vkllm_quantize_" + name + "_" + std::to_string(::getpid()) +
           ".gguf";
}

struct Case {
    const char *model;
    const char *type;
    uint32_t ftype;
    // The expected type of a tensor of the model, by name.
    std::string (*expect)(const std::string &name, const TensorInfo &in);
};

// Readable test names in ctest (instead of the struct's bytes).
void PrintTo(const Case &c, std::ostream *os) {
    *os << c.type << " of " << c.model;
}

bool is_matrix(const TensorInfo &t) {
    return t.n_dims == 2;  // every 2-D tensor of these models is a ".weight"
}

std::string uniform_q8_0(const std::string &, const TensorInfo &t) {
    return is_matrix(t) ? "Q8_0" : "F32";
}

std::string uniform_q4_0(const std::string &, const TensorInfo &t) {
    return is_matrix(t) ? "Q4_0" : "F32";
}

// Q4_K_M on a 2-layer model: Q6_K for output.weight and, by use_more_bits (layer 1 of 2),
// blk.1's attn_v and ffn_down; ffn_down rows of 384 are not whole 256-blocks: Q6_K falls
// back to Q8_0, Q4_K to Q5_0 (as llama.cpp's do).
std::string q4_k_m(const std::string &name, const TensorInfo &t) {
    if (!is_matrix(t)) return "F32";
    if (name.find("ffn_down") != std::string::npos)
        return name.rfind("blk.1.", 0) == 0 ? "Q8_0" : "Q5_0";
    if (name == "output.weight" || name == "blk.1.attn_v.weight") return "Q6_K";
    return "Q4_K";
}

// Tied output: token_embd.weight is the output matrix and gets its Q6_K.
std::string q4_k_m_tied(const std::string &name, const TensorInfo &t) {
    if (name == "token_embd.weight") return "Q6_K";
    return q4_k_m(name, t);
}

class QuantizeTool : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(QuantizeTool, WritesTheExpectedTypesWithinTheErrorBounds) {
    const Case &c = GetParam();
    std::string dir = test_data_dir();
    std::string in_path = dir + "/models/" + c.model;
    std::string out = out_path(std::string(c.type) + "_" + c.model);
    ASSERT_EQ(run_tool(in_path + " " + out + " " + c.type), 0);
    GgufFile in(in_path), q(out);

    // Metadata: every key of the input, byte for byte, then the two the tool sets.
    for (const KeyValue &kv : in.keys()) {
        const KeyValue *got = q.find(kv.key);
        ASSERT_TRUE(got) << kv.key;
        if (kv.key == "general.file_type") continue;
        EXPECT_EQ(got->type, kv.type) << kv.key;
        EXPECT_EQ(q.value_bytes(*got), in.value_bytes(kv)) << kv.key;
    }
    EXPECT_EQ(q.get_int("general.file_type"), int64_t(c.ftype));
    EXPECT_EQ(q.get_int("general.quantization_version"), 2);

    ASSERT_EQ(q.tensors().size(), in.tensors().size());
    for (size_t i = 0; i < in.tensors().size(); ++i) {
        const TensorInfo &a = in.tensors()[i], &b = q.tensors()[i];
        ASSERT_EQ(a.name, b.name);
        EXPECT_EQ(a.n_dims, b.n_dims) << a.name;
        for (int d = 0; d < 4; ++d)
            EXPECT_EQ(a.dims[d], b.dims[d]) << a.name;
        EXPECT_EQ(b.type->name, c.expect(a.name, a)) << a.name;
        EXPECT_EQ(b.offset % q.alignment(), 0u) << a.name;
        std::vector<float> want = values(in, a), got = values(q, b);
        if (b.type->id == a.type->id) {
            EXPECT_EQ(want, got) << a.name << " was copied";
        } else {
            double e = relative_rms_error(want, got);
            EXPECT_LT(e, bound(b.type->name)) << a.name << " as " << b.type->name;
        }
    }
    std::remove(out.c_str());
}

INSTANTIATE_TEST_SUITE_P(
    TinyQwen2, QuantizeTool,
    ::testing::Values(Case{"tiny-qwen2-f32.gguf", "Q8_0", 7, uniform_q8_0},
                      Case{"tiny-qwen2-f32.gguf", "Q4_0", 2, uniform_q4_0},
                      Case{"tiny-qwen2-f32.gguf", "Q4_K_M", 15, q4_k_m},
                      Case{"tiny-qwen2-tied-f32.gguf", "Q4_K_M", 15, q4_k_m_tied}),
    [](const ::testing::TestParamInfo<Case> &info) {
        std::string name =
            std::string(info.param.type) +
            (std::string(info.param.model).find("tied") != std::string::npos ? "_tied" : "");
        return name;
    });

TEST(QuantizeToolErrors, BadArgumentsAndFilesFailWithoutOutput) {
    std::string out = out_path("bad");
    EXPECT_NE(run_tool("/nonexistent.gguf " + out + " Q4_0 2> /dev/null"), 0);
    struct stat st;
    EXPECT_NE(::stat(out.c_str(), &st), 0);
    EXPECT_NE(run_tool("a b NOT_A_TYPE 2> /dev/null"), 0);
    EXPECT_NE(run_tool("a b 2> /dev/null"), 0);
    // Not a directory: the temporary file cannot be created.
    std::string bad = "/nonexistent_dir/out.gguf";
    EXPECT_NE(
        run_tool(test_data_dir() + "/models/tiny-qwen2-f32.gguf " + bad + " Q8_0 2> /dev/null"), 0);
}

// Matrices already quantized are converted again only when asked (--allow-requantize, as
// llama-quantize): without it the tool names the flag, the tensor and its type, exits with 1
// and writes nothing.
TEST(QuantizeToolErrors, RequantizingAQuantizedFileNeedsAllowRequantize) {
    std::string dir = test_data_dir();
    std::string q8 = out_path("requant_from_q8_0"), out = out_path("requant_to_q4_0");
    std::string err = out_path("requant_stderr") + ".txt";
    ASSERT_EQ(run_tool(dir + "/models/tiny-qwen2-f32.gguf " + q8 + " Q8_0"), 0);

    int status = run_tool(q8 + " " + out + " Q4_0 2> " + err);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    struct stat st;
    EXPECT_NE(::stat(out.c_str(), &st), 0) << "an output file was written";
    std::stringstream message;
    message << std::ifstream(err).rdbuf();
    EXPECT_NE(message.str().find("--allow-requantize"), std::string::npos) << message.str();
    EXPECT_NE(message.str().find(".weight is already quantized (Q8_0)"), std::string::npos)
        << message.str();

    ASSERT_EQ(run_tool("--allow-requantize " + q8 + " " + out + " Q4_0"), 0);
    GgufFile q(out);
    for (const TensorInfo &t : q.tensors())
        EXPECT_STREQ(t.type->name, is_matrix(t) ? "Q4_0" : "F32") << t.name;
    std::remove(q8.c_str());
    std::remove(out.c_str());
    std::remove(err.c_str());
}
