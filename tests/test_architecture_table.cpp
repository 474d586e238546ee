// The table of architectures (models/architectures.def) itself: every row is its own, every
// architecture the test models use has one, each column reaches the configuration read_config
// builds from a file of that architecture, and a name no row has is refused by name, listing
// the rows'. What each architecture computes is checked by the model tests (test_arch_*.cpp,
// test_generation_reference.cpp) against the CPU reference and llama.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "common/error.h"
#include "format/gguf.h"
#include "gguf_builder.h"
#include "models/architecture.h"
#include "models/config.h"
#include "reference/tiny_archs.h"
#include "test_data.h"

using vkllm::models::Arch;
using vkllm::models::Architecture;
using vkllm::models::architectures;
using vkllm::models::find_architecture;
using vkllm::models::ModelConfig;

namespace {

// Reads the configuration of the file `b` writes; throws vkllm::Error as read_config does.
ModelConfig config_of(const GgufBuilder &b) {
    std::string path =
        ::testing::TempDir() + "vkllm_arch_table_" + std::to_string(::getpid()) + ".gguf";
    std::vector<uint8_t> bytes = b.finish();
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    struct Remove {
        std::string path;
        ~Remove() { std::remove(path.c_str()); }
    } remove{path};
    vkllm::format::GgufFile f(path);
    return vkllm::models::read_config(f);
}

// A file of architecture `name` with every key some row requires (its experts, a stated
// context, Granite's logit scale) and none that a row's special case refuses.
GgufBuilder minimal_file(const std::string &name, uint32_t layers = 2) {
    GgufBuilder b;
    const std::string p = name + ".";
    b.kv_string("general.architecture", name);
    b.kv_u32(p + "embedding_length", 64);
    b.kv_u32(p + "block_count", layers);
    b.kv_u32(p + "attention.head_count", 4);
    b.kv_u32(p + "feed_forward_length", 96);
    b.kv_u32(p + "context_length", 256);
    b.kv_u32(p + "expert_count", 8);
    b.kv_u32(p + "expert_used_count", 2);
    b.kv_u32(p + "expert_feed_forward_length", 32);
    b.kv_u32(p + "expert_shared_feed_forward_length", 48);
    b.kv_bool(p + "expert_weights_norm", true);
    b.kv_f32(p + "logit_scale", 4);
    b.tensor("token_embd.weight", 0, {64, 16}, std::vector<uint8_t>(64 * 16 * 4));
    return b;
}

// The error read_config gives for the file `b` writes (status OK: none).
vkllm_status refusal(const GgufBuilder &b, std::string *message) {
    try {
        config_of(b);
        return VKLLM_OK;
    } catch (const vkllm::Error &e) {
        *message = e.what();
        return e.status();
    }
}

}  // namespace

TEST(ArchitectureTable, EveryRowHasItsOwnNameAndIsFoundByIt) {
    std::set<std::string> names;
    for (size_t i = 0; i < architectures().size(); ++i) {
        const Architecture &a = architectures()[i];
        ASSERT_NE(a.name, nullptr);
        EXPECT_STRNE(a.name, "") << "row " << i;
        EXPECT_TRUE(names.insert(a.name).second) << a.name << " has two rows";
        EXPECT_EQ(int(a.arch), int(i)) << a.name << ": the Arch values follow the rows";
        EXPECT_EQ(find_architecture(a.name), &a) << a.name;
    }
    // The rows the table was made with stay (rows may be added).
    for (const char *served : {"llama", "qwen2", "qwen3", "gpt2", "qwen2moe", "gpt-oss", "gemma2",
                               "gemma3", "olmo2", "phi3", "qwen3moe", "smollm3", "granite"})
        EXPECT_EQ(names.count(served), 1u) << served;
}

TEST(ArchitectureTable, EveryArchitectureOfTheTestModelsHasARow) {
    std::set<std::string> covered;
    const std::string dir = (std::filesystem::temp_directory_path() / "vkllm_arch_table").string();
    std::filesystem::create_directories(dir);
    std::vector<TinyArch> tiny = tiny_archs();
    tiny.insert(tiny.end(), tiny_embed_archs().begin(), tiny_embed_archs().end());
    for (const TinyArch &t : tiny) {
        const std::string path = dir + "/" + t.name + "_" + std::to_string(::getpid()) + ".gguf";
        write_tiny_model(path, t.spec);
        ModelConfig c;
        EXPECT_NO_THROW(c = vkllm::models::read_config(vkllm::format::GgufFile(path))) << t.name;
        std::remove(path.c_str());
        ASSERT_NE(find_architecture(t.spec.arch), nullptr) << t.name;
        EXPECT_EQ(c.arch, find_architecture(t.spec.arch)->arch) << t.name;
        EXPECT_EQ(c.arch_name, t.spec.arch) << t.name;
        covered.insert(t.spec.arch);
    }
    for (const auto &e : std::filesystem::directory_iterator(test_data_dir() + "/models")) {
        if (e.path().extension() != ".gguf") continue;
        vkllm::format::GgufFile f(e.path().string());
        std::string name(f.get_string("general.architecture").value_or(""));
        EXPECT_NE(find_architecture(name), nullptr) << e.path() << " is of " << name;
        EXPECT_NO_THROW(vkllm::models::read_config(f)) << e.path();
        covered.insert(name);
    }
    // The other way round: no row is without a test model.
    for (const Architecture &a : architectures())
        EXPECT_EQ(covered.count(a.name), 1u) << a.name << " has no test model";
}

TEST(ArchitectureTable, EachColumnReachesTheConfiguration) {
    using namespace vkllm::models;
    for (const Architecture &a : architectures()) {
        SCOPED_TRACE(a.name);
        ModelConfig c;
        ASSERT_NO_THROW(c = config_of(minimal_file(a.name)));
        EXPECT_EQ(c.arch, a.arch);
        EXPECT_EQ(c.learned_positions, a.positions == Positions::Learned);
        EXPECT_EQ(c.rot_dim, a.positions == Positions::Learned ? 0u : c.head_dim);
        EXPECT_EQ(c.neox, a.positions == Positions::RopeNeox);
        EXPECT_EQ(c.norm, a.norm);
        EXPECT_EQ(c.pre_norms, a.place == NormPlace::Pre || a.place == NormPlace::PrePost);
        EXPECT_EQ(c.post_norms, a.place == NormPlace::PrePost || a.place == NormPlace::Post);
        EXPECT_EQ(c.encoder, a.place == NormPlace::Encoder);
        EXPECT_EQ(c.qk_norm, a.qk_norm != QkNorm::NoQk);
        EXPECT_EQ(c.qk_norm_whole, a.qk_norm == QkNorm::WholeRow);
        EXPECT_EQ(c.ffn, a.ffn);
        EXPECT_EQ(c.moe(), a.experts());
        EXPECT_EQ(c.n_ff_shexp, a.ffn == Ffn::SharedExperts ? 48u : 0u);
        EXPECT_EQ(c.norm_topk, a.experts() && a.topk != TopK::AsRouted);
        EXPECT_EQ(c.attn_sinks, a.sinks);
        EXPECT_EQ(c.swa_pattern, a.swa_pattern);
        EXPECT_EQ(c.sliding_window, a.default_window);
        EXPECT_EQ(c.rope_base_swa, a.rope_base_swa);
        EXPECT_EQ(c.attn_softcap, a.attn_cap > 0 ? a.attn_cap : 0.0f);
        EXPECT_EQ(c.final_softcap, a.final_cap > 0 ? a.final_cap : 0.0f);
        EXPECT_EQ(c.embd_scale, a.embd_scale == EmbdScale::SqrtEmbd ? 8.0f : 1.0f);
        EXPECT_EQ(c.no_rope_step, a.no_rope_step);
        EXPECT_EQ(c.fused_projections, a.fused_projections);
        EXPECT_EQ(c.attn_scale, 1.0f / std::sqrt(16.0f));
    }
}

TEST(ArchitectureTable, AScalingARowDoesNotTakeIsRefusedNamingTheArchitecture) {
    using namespace vkllm::models;
    for (const Architecture &a : architectures()) {
        if (a.scaling == RopeScalingKey::Unread) continue;
        SCOPED_TRACE(a.name);
        GgufBuilder b = minimal_file(a.name);
        b.kv_string(std::string(a.name) + ".rope.scaling.type", "longrope-ish");
        std::string msg;
        EXPECT_EQ(refusal(b, &msg), VKLLM_ERR_UNSUPPORTED);
        EXPECT_NE(msg.find("\"longrope-ish\""), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::string("for ") + a.name), std::string::npos) << msg;
    }
}

// llama.cpp reads rope.scaling.type for these architectures: a file extended by YaRN (Qwen2.5's
// long-context configurations) or linear interpolation is served scaled, never silently as if
// it were not.
TEST(ArchitectureTable, TheScalingAFileStatesReachesTheConfigurationWhereTheRowTakesIt) {
    using namespace vkllm::models;
    int rows = 0;
    for (const Architecture &a : architectures()) {
        if (a.scaling != RopeScalingKey::LinearOrYarn) continue;
        SCOPED_TRACE(a.name);
        ++rows;
        const std::string p = std::string(a.name) + ".rope.scaling.";
        GgufBuilder yarn = minimal_file(a.name);
        yarn.kv_string(p + "type", "yarn");
        yarn.kv_f32(p + "factor", 4);
        yarn.kv_u32(p + "original_context_length", 64);
        ModelConfig c = config_of(yarn);
        EXPECT_EQ(c.yarn_factor, 4.0f);
        EXPECT_EQ(c.yarn_orig_ctx, 64u);
        EXPECT_EQ(c.rope_linear_factor, 0.0f);
        GgufBuilder linear = minimal_file(a.name);
        linear.kv_string(p + "type", "linear");
        linear.kv_f32(p + "factor", 2);
        c = config_of(linear);
        EXPECT_EQ(c.rope_linear_factor, 2.0f);
        EXPECT_EQ(c.yarn_factor, 0.0f);
        GgufBuilder none = minimal_file(a.name);
        none.kv_string(p + "type", "none");
        c = config_of(none);
        EXPECT_EQ(c.rope_linear_factor, 0.0f);
        EXPECT_EQ(c.yarn_factor, 0.0f);
    }
    EXPECT_GE(rows, 7) << "llama, qwen2, qwen3, qwen2moe, qwen3moe, smollm3 and granite";
}

TEST(ArchitectureTable, UnknownNamesAreRefusedNamingTheArchitectureAndEveryRow) {
    for (const char *unknown : {"mamba", "Llama", "llama ", "qwen", ""}) {
        SCOPED_TRACE(unknown);
        GgufBuilder b = minimal_file(unknown);
        std::string msg;
        EXPECT_EQ(refusal(b, &msg), VKLLM_ERR_UNSUPPORTED);
        EXPECT_NE(msg.find("architecture \"" + std::string(unknown) + "\" is not supported"),
                  std::string::npos)
            << msg;
        for (const Architecture &a : architectures())
            EXPECT_NE(msg.find(a.name), std::string::npos) << "the refusal names " << a.name;
    }
    GgufBuilder none;
    none.kv_u32("llama.block_count", 2);
    std::string msg;
    EXPECT_EQ(refusal(none, &msg), VKLLM_ERR_FORMAT);
    EXPECT_NE(msg.find("general.architecture is missing"), std::string::npos) << msg;
    EXPECT_EQ(find_architecture("mamba"), nullptr);
}

// The special cases told apart by layer count (llama.cpp's f_attention_scale): Gemma 2 27B
// (46 layers) scales queries by n_embd / n_head = 16 here, not by head_dim = 32; Gemma 3 27B
// (62 layers), whose scalar is that too, is refused by name.
TEST(ArchitectureTable, Gemma27BQueryScalesAreTheirSpecialCases) {
    auto gemma = [](const std::string &name, uint32_t layers) {
        GgufBuilder b = minimal_file(name, layers);
        b.kv_u32(name + ".attention.key_length", 32);
        return b;
    };
    EXPECT_FLOAT_EQ(config_of(gemma("gemma2", 46)).attn_scale, 0.25f);
    EXPECT_FLOAT_EQ(config_of(gemma("gemma2", 42)).attn_scale, 1 / std::sqrt(32.0f));
    EXPECT_FLOAT_EQ(config_of(gemma("gemma3", 46)).attn_scale, 1 / std::sqrt(32.0f));
    std::string msg;
    EXPECT_EQ(refusal(gemma("gemma3", 62), &msg), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(msg.find("Gemma 3 27B"), std::string::npos) << msg;
    EXPECT_EQ(refusal(gemma("gemma2", 62), &msg), VKLLM_OK) << msg;
}
