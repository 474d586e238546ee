// vkllm_runtime_tune and the tune file through the C API: tuning a tiny MoE model (dense and
// expert shapes) keeps what it computes, writes the file beside the pipeline cache, and the next
// runtime reads it; a stale, malformed or impossible file is ignored with one WARNING.
#include <fstream>
#include <sstream>

#include "engine/tune_file.h"
#include "gpu/tuner.h"
#include "tiny_model_fixture.h"

namespace {

class TuneTest : public TinyModelTest {
  protected:
    void TearDown() override {
        for (vkllm_runtime *r : runtimes_)
            vkllm_runtime_destroy(r);
        std::remove(cache_.c_str());
        std::remove((cache_ + ".tune").c_str());
        TinyModelTest::TearDown();
    }

    // A runtime of its own with a pipeline cache file (and so a tune file), its WARNINGs kept.
    vkllm_runtime *runtime() {
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
        p.pipeline_cache_path = cache_.c_str();
        p.log_fn = &TuneTest::keep;
        p.log_user_data = &warnings_;
        vkllm_runtime *r = nullptr;
        EXPECT_EQ(vkllm_runtime_create(&p, &r), VKLLM_OK) << vkllm_last_error();
        if (r) runtimes_.push_back(r);
        return r;
    }

    static uint64_t tuned_shapes(vkllm_runtime *r) {
        vkllm_runtime_stats st;
        st.struct_size = sizeof st;
        EXPECT_EQ(vkllm_runtime_get_stats(r, &st), VKLLM_OK);
        EXPECT_EQ(st.validation_errors, 0u);
        return st.tuned_shapes;
    }

    vkllm_model *model_on(vkllm_runtime *r) {
        std::string path = temp_path("tune_model");
        TinyModelSpec spec;
        spec.arch = "qwen3moe";
        spec.n_embd = 64, spec.n_head = 4, spec.n_head_kv = 2, spec.head_dim = 32;
        spec.n_ff = 96, spec.n_expert = 6, spec.n_expert_used = 2, spec.n_ff_exp = 32;
        spec.weight_type = 8;  // Q8_0: the texel kernels' grouped layout
        write_tiny_model(path, spec);
        vkllm_model *m = nullptr;
        EXPECT_EQ(vkllm_model_load(r, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
        if (m) models_.push_back(m);
        return m;
    }

    std::vector<std::vector<float>> logits(vkllm_model *m) {
        return decode_each(session(m, 64), some_tokens(12, vocab(m), 5), vocab(m));
    }

    void write_tune_file(const std::string &text) {
        std::ofstream(cache_ + ".tune", std::ios::binary) << text;
    }

    std::string cache_ = ::testing::TempDir() + "vkllm_tune_" + std::to_string(::getpid());
    std::vector<vkllm_runtime *> runtimes_;
    std::vector<std::string> warnings_;

  private:
    static void keep(void *user, vkllm_log_level level, const char *msg) {
        if (level >= VKLLM_LOG_WARNING)
            static_cast<std::vector<std::string> *>(user)->push_back(msg);
    }
};

TEST_F(TuneTest, TuningKeepsTheLogitsWritesTheFileAndTheNextRuntimeReadsIt) {
    vkllm_runtime *r = runtime();
    vkllm_model *m = model_on(r);
    ASSERT_TRUE(m);
    EXPECT_EQ(tuned_shapes(r), 0u);
    std::vector<std::vector<float>> before = logits(m);

    vkllm_tune_result result;
    result.struct_size = sizeof result;
    ASSERT_EQ(vkllm_runtime_tune(r, m, &result), VKLLM_OK) << vkllm_last_error();
    // Q/K/V stacked, the output projection, the router, the output head, and the experts'
    // gate/up (one shape) and down.
    EXPECT_GE(result.shapes, 5u);
    EXPECT_GT(result.candidates_timed, result.shapes);
    EXPECT_EQ(result.candidates_rejected, 0u);
    EXPECT_LE(result.shapes_changed, result.shapes);
    EXPECT_GT(result.default_us, 0.0);
    EXPECT_GT(result.tuned_us, 0.0);
    EXPECT_LE(result.tuned_us, result.default_us);
    EXPECT_EQ(result.file_written, 1u);
    EXPECT_EQ(tuned_shapes(r), result.shapes);

    // A session made afterwards runs the winners: the same logits but for float rounding.
    std::vector<std::vector<float>> after = logits(m);
    ASSERT_EQ(after.size(), before.size());
    for (size_t t = 0; t < after.size(); ++t)
        for (size_t i = 0; i < after[t].size(); ++i)
            ASSERT_NEAR(after[t][i], before[t][i], 1e-4 * (1 + std::fabs(before[t][i])))
                << "token " << t << " logit " << i;

    vkllm_runtime *next = runtime();
    EXPECT_EQ(tuned_shapes(next), result.shapes);
    EXPECT_TRUE(warnings_.empty()) << warnings_[0];
}

TEST_F(TuneTest, AStaleMalformedOrTruncatedTuneFileIsIgnoredWithOneWarning) {
    vkllm_runtime *r = runtime();
    vkllm::gpu::Context &ctx = *r->context;
    vkllm::engine::TuneIdentity id = vkllm::engine::tune_identity(ctx.device());
    vkllm::gpu::MatvecKey key{vkllm::gpu::MatvecFamily::Dense, vkllm::gpu::WeightType::Q8_0_G8, 64,
                              64};
    vkllm::gpu::MatvecTuning one{{key, ctx.kernels().env().default_matvec_variant(key, true)}};
    std::string good = vkllm::engine::format_tune_file(id, one);
    vkllm::engine::TuneIdentity other = id;
    other.driver += " (another build)";
    std::vector<std::string> bad = {vkllm::engine::format_tune_file(other, one),
                                    good.substr(0, good.size() / 2), "vkllm-tune 999\n",
                                    std::string("\x00\xff garbage", 10)};
    for (const std::string &text : bad) {
        write_tune_file(text);
        warnings_.clear();
        vkllm_runtime *next = runtime();
        ASSERT_TRUE(next);
        EXPECT_EQ(tuned_shapes(next), 0u);
        EXPECT_EQ(warnings_.size(), 1u);
    }
    write_tune_file(good);
    warnings_.clear();
    EXPECT_EQ(tuned_shapes(runtime()), 1u);
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(TuneTest, AVariantTheDeviceCannotRunIsIgnoredWithAWarning) {
    vkllm_runtime *r = runtime();
    vkllm::gpu::Context &ctx = *r->context;
    // 1024 lanes of 64 rows: a reduction of 128 floats per lane, 512 KiB of shared memory.
    vkllm::gpu::MatvecVariant huge{1024, 64, false};
    ASSERT_FALSE(ctx.kernels().env().supports(huge));
    vkllm::gpu::MatvecKey key{vkllm::gpu::MatvecFamily::Moe, vkllm::gpu::WeightType::F16, 32, 64};
    write_tune_file(
        vkllm::engine::format_tune_file(vkllm::engine::tune_identity(ctx.device()), {{key, huge}}));
    warnings_.clear();
    EXPECT_EQ(tuned_shapes(runtime()), 0u);
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("cannot run"), std::string::npos) << warnings_[0];
}

TEST_F(TuneTest, NullArgumentsAndAModelOfAnotherRuntimeAreRefused) {
    vkllm_runtime *r = runtime();
    vkllm_model *m = model_on(rt_);  // the fixture's runtime
    ASSERT_TRUE(m);
    EXPECT_EQ(vkllm_runtime_tune(nullptr, m, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_runtime_tune(r, nullptr, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_runtime_tune(r, m, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("another runtime"), std::string::npos);
    EXPECT_EQ(tuned_shapes(r), 0u);
    // Tuning without a pipeline cache: the winners are used, no file is written.
    vkllm_tune_result result;
    result.struct_size = sizeof result;
    ASSERT_EQ(vkllm_runtime_tune(rt_, m, &result), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(result.file_written, 0u);
    EXPECT_EQ(tuned_shapes(rt_), result.shapes);
}

}  // namespace
