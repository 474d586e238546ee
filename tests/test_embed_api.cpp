// vkllm_session_embed and vkllm_session_embed_tokens as an application calls them: every
// argument check refuses before anything runs and writes nothing, and the vectors on the tiny
// bert encoder (tests/data/models/tiny-bert-mean-f32.gguf) agree with the float64 reference
// (reference/bert_forward.h) for every pooling type, batched and one at a time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "reference/bert_forward.h"
#include "reference/tiny_archs.h"
#include "validation.h"
#include "vkllm.h"

namespace {

constexpr double kMinCosine = 0.99999;
constexpr float kSentinel = -12345.0f;
const std::string kBert = std::string(VKLLM_TEST_DATA_DIR) + "/models/tiny-bert-mean-f32.gguf";

struct Log {
    std::vector<std::string> errors;
    static void fn(void *user, vkllm_log_level level, const char *msg) {
        if (level == VKLLM_LOG_ERROR) static_cast<Log *>(user)->errors.push_back(msg);
    }
};

class EmbedApi : public ::testing::Test {
  protected:
    void SetUp() override {
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
        p.log_fn = &Log::fn;
        p.log_user_data = &log_;
        ASSERT_EQ(vkllm_runtime_create(&p, &rt_), VKLLM_OK) << vkllm_last_error();
        model_ = load(kBert);
        vkllm_session_params sp;
        vkllm_session_params_init(&sp);
        sp.n_seq = 4;
        ASSERT_EQ(vkllm_session_create(model_, &sp, &session_), VKLLM_OK) << vkllm_last_error();
        vkllm_model_info info;
        info.struct_size = sizeof info;
        ASSERT_EQ(vkllm_model_get_info(model_, &info), VKLLM_OK);
        n_embd_ = info.n_embd;
        ref_ = ref::load_model_ref(kBert);
    }
    void TearDown() override {
        vkllm_session_destroy(session_);
        vkllm_model_destroy(model_);
        vkllm_runtime_stats s;
        s.struct_size = sizeof s;
        ASSERT_EQ(vkllm_runtime_get_stats(rt_, &s), VKLLM_OK);
        EXPECT_EQ(s.validation_errors, 0u) << (log_.errors.empty() ? "" : log_.errors[0]);
        vkllm_runtime_destroy(rt_);
    }

    vkllm_model *load(const std::string &path) {
        vkllm_model *m = nullptr;
        EXPECT_EQ(vkllm_model_load(rt_, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
        return m;
    }

    std::vector<int32_t> tokenize(const char *text) {
        const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(model_);
        std::vector<int32_t> ids(256);
        size_t n = 0;
        EXPECT_EQ(vkllm_tokenizer_encode(tok, text, std::strlen(text), VKLLM_TOKENIZE_ADD_SPECIAL,
                                         ids.data(), ids.size(), &n),
                  VKLLM_OK);
        ids.resize(n);
        return ids;
    }

    // Runs embed_tokens on `inputs`; out_len floats, sentinel-filled.
    vkllm_status embed_tokens(const std::vector<std::vector<int32_t>> &inputs,
                              const vkllm_embed_params *p, std::vector<float> &out) {
        std::vector<const int32_t *> ptrs;
        std::vector<size_t> lens;
        for (const auto &in : inputs)
            ptrs.push_back(in.data()), lens.push_back(in.size());
        return vkllm_session_embed_tokens(session_, ptrs.data(), lens.data(), inputs.size(), p,
                                          out.data(), out.size());
    }

    static vkllm_embed_params params(vkllm_pooling pooling, uint32_t flags = 0) {
        vkllm_embed_params p;
        vkllm_embed_params_init(&p);
        p.pooling = pooling;
        p.flags = flags;
        return p;
    }

    static bool untouched(const std::vector<float> &out) {
        for (float v : out)
            if (v != kSentinel) return false;
        return true;
    }

    static double cosine(const float *a, const std::vector<double> &b) {
        return ref::cosine(std::vector<double>(a, a + b.size()), b);
    }

    Log log_;
    vkllm_runtime *rt_ = nullptr;
    vkllm_model *model_ = nullptr;
    vkllm_session *session_ = nullptr;
    uint32_t n_embd_ = 0;
    std::unique_ptr<ref::ModelRef> ref_;
};

const char *const kTexts[] = {"hello world", "a b c d e f g h i j k l m n o p", "",
                              "the quick brown fox jumps"};
constexpr size_t kN = sizeof kTexts / sizeof kTexts[0];

TEST_F(EmbedApi, ModelInfoReportsTheFilesPoolingType) {
    vkllm_model_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_model_get_info(model_, &info), VKLLM_OK);
    EXPECT_EQ(info.pooling, VKLLM_POOLING_MEAN);
    const std::string dir = ::testing::TempDir() + "vkllm_embed_" + std::to_string(::getpid());
    for (const TinyArch &t : tiny_embed_archs()) {
        const std::string path = dir + "_" + t.name + ".gguf";
        write_tiny_model(path, t.spec);
        vkllm_model *m = load(path);
        ASSERT_EQ(vkllm_model_get_info(m, &info), VKLLM_OK);
        EXPECT_EQ(uint32_t(info.pooling), t.spec.pooling_type) << t.name;
        vkllm_model_destroy(m);
        std::remove(path.c_str());
    }
}

TEST_F(EmbedApi, EveryBadArgumentIsRefusedBeforeAnythingRunsAndWritesNothing) {
    std::vector<float> out(kN * n_embd_, kSentinel);
    const size_t len = out.size();
    vkllm_embed_params p = params(VKLLM_POOLING_MODEL);
    EXPECT_EQ(vkllm_session_embed(nullptr, kTexts, kN, &p, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_embed(session_, nullptr, kN, &p, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_embed(session_, kTexts, kN, &p, nullptr, len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_embed(session_, kTexts, 0, &p, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("n is 0"), std::string::npos);
    const char *with_null[] = {"hello", nullptr};
    EXPECT_EQ(vkllm_session_embed(session_, with_null, 2, &p, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("texts[1]"), std::string::npos);
    EXPECT_EQ(vkllm_session_embed(session_, kTexts, kN, &p, out.data(), len - 1),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("out_len"), std::string::npos);
    vkllm_embed_params bad = params(vkllm_pooling(7));
    EXPECT_EQ(vkllm_session_embed(session_, kTexts, kN, &bad, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("unknown pooling 7"), std::string::npos);
    bad = params(VKLLM_POOLING_MEAN, 1u << 5);
    EXPECT_EQ(vkllm_session_embed(session_, kTexts, kN, &bad, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("unknown flags"), std::string::npos);
    bad = params(VKLLM_POOLING_NONE);
    EXPECT_EQ(vkllm_session_embed(session_, kTexts, kN, &bad, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("vkllm_session_embed_tokens"),
              std::string::npos);
    bad = params(VKLLM_POOLING_MEAN);
    bad.struct_size = sizeof bad + 8;
    EXPECT_EQ(vkllm_session_embed(session_, kTexts, kN, &bad, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);

    const std::vector<int32_t> ok = tokenize("hello");
    EXPECT_EQ(embed_tokens({ok, {}}, &p, out), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("input 1 has no tokens"), std::string::npos);
    EXPECT_EQ(embed_tokens({ok, {2, 96, 3}}, &p, out), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("outside the embedding"), std::string::npos);
    EXPECT_EQ(embed_tokens({{2, -1, 3}}, &p, out), VKLLM_ERR_INVALID_ARGUMENT);
    const int32_t *null_input[] = {ok.data(), nullptr};
    const size_t lens[] = {ok.size(), 3};
    EXPECT_EQ(vkllm_session_embed_tokens(session_, null_input, lens, 2, &p, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_embed_tokens(session_, nullptr, lens, 2, &p, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_embed_tokens(session_, null_input, nullptr, 2, &p, out.data(), len),
              VKLLM_ERR_INVALID_ARGUMENT);
    // Per token, the floats needed are sum(n_tokens) x n_embd.
    bad = params(VKLLM_POOLING_NONE);
    std::vector<float> small((ok.size() * 2 - 1) * n_embd_, kSentinel);
    EXPECT_EQ(embed_tokens({ok, ok}, &bad, small), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_TRUE(untouched(small));
    EXPECT_TRUE(untouched(out));
}

TEST_F(EmbedApi, AnInputOverTheLimitIsRefusedUnlessTruncatedKeepingItsSep) {
    std::vector<float> out(n_embd_, kSentinel);
    const char *text[] = {"a b c d e f g h i j k l m n o p"};
    const std::vector<int32_t> ids = tokenize(text[0]);
    ASSERT_GT(ids.size(), 8u);
    vkllm_embed_params p = params(VKLLM_POOLING_MEAN);
    p.max_tokens = 8;
    EXPECT_EQ(vkllm_session_embed(session_, text, 1, &p, out.data(), out.size()),
              VKLLM_ERR_CONTEXT_FULL);
    EXPECT_NE(std::string(vkllm_last_error()).find("VKLLM_EMBED_TRUNCATE"), std::string::npos);
    EXPECT_TRUE(untouched(out));
    // Longer than the model's 64 positions, with no max_tokens.
    std::string long_text;
    for (int i = 0; i < 70; ++i)
        long_text += "a ";
    const char *long_one[] = {long_text.c_str()};
    vkllm_embed_params unlimited = params(VKLLM_POOLING_MEAN);
    EXPECT_EQ(vkllm_session_embed(session_, long_one, 1, &unlimited, out.data(), out.size()),
              VKLLM_ERR_CONTEXT_FULL);
    EXPECT_TRUE(untouched(out));

    p.flags = VKLLM_EMBED_TRUNCATE;
    ASSERT_EQ(vkllm_session_embed(session_, text, 1, &p, out.data(), out.size()), VKLLM_OK)
        << vkllm_last_error();
    std::vector<int32_t> kept(ids.begin(), ids.begin() + 7);
    kept.push_back(ids.back());
    const auto want = ref::bert_embed(*ref_, {kept}, ref::Pooling::mean, false);
    EXPECT_GE(cosine(out.data(), want[0][0]), kMinCosine);
}

TEST_F(EmbedApi, EveryPoolingAgreesWithTheFloat64ReferenceBatchedAndOneAtATime) {
    std::vector<std::vector<int32_t>> inputs;
    size_t total = 0;
    for (const char *t : kTexts)
        inputs.push_back(tokenize(t)), total += inputs.back().size();
    ASSERT_EQ(inputs[2].size(), 2u) << "an empty text is [CLS][SEP]";
    const struct {
        vkllm_pooling api;
        ref::Pooling ref;
    } kinds[] = {{VKLLM_POOLING_NONE, ref::Pooling::none},
                 {VKLLM_POOLING_MEAN, ref::Pooling::mean},
                 {VKLLM_POOLING_CLS, ref::Pooling::cls},
                 {VKLLM_POOLING_LAST, ref::Pooling::last}};
    for (const auto &kind : kinds) {
        for (bool normalize : {false, true}) {
            SCOPED_TRACE(testing::Message()
                         << "pooling " << kind.api << " normalize " << normalize);
            const auto want = ref::bert_embed(*ref_, inputs, kind.ref, normalize);
            const vkllm_embed_params p = params(kind.api, normalize ? VKLLM_EMBED_NORMALIZE : 0u);
            const size_t rows = kind.api == VKLLM_POOLING_NONE ? total : kN;
            std::vector<float> out(rows * n_embd_, kSentinel);
            ASSERT_EQ(embed_tokens(inputs, &p, out), VKLLM_OK) << vkllm_last_error();
            size_t row = 0;
            for (size_t i = 0; i < kN; ++i) {
                for (const auto &w : want[i]) {
                    const float *got = out.data() + row * n_embd_;
                    EXPECT_GE(cosine(got, w), kMinCosine) << "input " << i << " row " << row;
                    if (normalize) {
                        double sq = 0;
                        for (uint32_t d = 0; d < n_embd_; ++d)
                            sq += double(got[d]) * got[d];
                        EXPECT_NEAR(std::sqrt(sq), 1.0, 1e-5);
                    }
                    // One input alone gives the rows it gave in the batch.
                    ++row;
                }
                const size_t own = want[i].size();
                std::vector<float> alone(own * n_embd_, kSentinel);
                ASSERT_EQ(embed_tokens({inputs[i]}, &p, alone), VKLLM_OK) << vkllm_last_error();
                for (size_t k = 0; k < alone.size(); ++k)
                    EXPECT_NEAR(alone[k], out[(row - own) * n_embd_ + k], 1e-4);
            }
            if (kind.api == VKLLM_POOLING_NONE) continue;
            // The texts themselves, tokenized by the call.
            std::vector<float> from_text(kN * n_embd_, kSentinel);
            ASSERT_EQ(
                vkllm_session_embed(session_, kTexts, kN, &p, from_text.data(), from_text.size()),
                VKLLM_OK)
                << vkllm_last_error();
            for (size_t k = 0; k < from_text.size(); ++k)
                EXPECT_NEAR(from_text[k], out[k], 1e-4);
        }
    }
}

TEST_F(EmbedApi, NullParamsMeanTheModelsPoolingAndAModelWithoutPoolingRefusesTexts) {
    std::vector<float> with_null(kN * n_embd_, kSentinel), mean(kN * n_embd_, kSentinel);
    ASSERT_EQ(
        vkllm_session_embed(session_, kTexts, kN, nullptr, with_null.data(), with_null.size()),
        VKLLM_OK)
        << vkllm_last_error();
    const vkllm_embed_params p = params(VKLLM_POOLING_MEAN);
    ASSERT_EQ(vkllm_session_embed(session_, kTexts, kN, &p, mean.data(), mean.size()), VKLLM_OK);
    EXPECT_EQ(with_null, mean);

    const std::string path =
        ::testing::TempDir() + "vkllm_embed_none_" + std::to_string(::getpid()) + ".gguf";
    write_tiny_model(path, tiny_embed_archs()[0].spec);  // bert-none
    vkllm_model *none = load(path);
    vkllm_session *s = nullptr;
    ASSERT_EQ(vkllm_session_create(none, nullptr, &s), VKLLM_OK) << vkllm_last_error();
    std::vector<float> out(n_embd_, kSentinel);
    EXPECT_EQ(vkllm_session_embed(s, kTexts, 1, nullptr, out.data(), out.size()),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("states no pooling"), std::string::npos);
    EXPECT_TRUE(untouched(out));
    vkllm_session_destroy(s);
    vkllm_model_destroy(none);
    std::remove(path.c_str());
}

}  // namespace
