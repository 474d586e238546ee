// Runtime with validation on, models and sessions through the C API, for engine tests. Any
// validation error fails the test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "api/runtime.h"
#include "test_data.h"
#include "validation.h"
#include "vkllm.h"

class EngineTest : public ::testing::Test {
  public:
    void SetUp() override {
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
        p.log_fn = &EngineTest::log;
        p.log_user_data = &errors_;
        ASSERT_EQ(vkllm_runtime_create(&p, &rt_), VKLLM_OK) << vkllm_last_error();
    }

    void TearDown() override {
        for (const std::string &path : temp_files_)
            std::remove(path.c_str());  // whatever the test left, however it ended
        for (vkllm_session *s : sessions_)
            vkllm_session_destroy(s);
        for (vkllm_model *m : models_)
            vkllm_model_destroy(m);
        if (!rt_) return;  // skipped before SetUp made it
        vkllm_runtime_stats st;
        st.struct_size = sizeof st;
        ASSERT_EQ(vkllm_runtime_get_stats(rt_, &st), VKLLM_OK);
        EXPECT_EQ(st.validation_errors, 0u) << (errors_.empty() ? "" : errors_[0]);
        vkllm_runtime_destroy(rt_);
    }

    vkllm_model *load(const std::string &path) {
        vkllm_model *m = nullptr;
        EXPECT_EQ(vkllm_model_load(rt_, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
        if (m) models_.push_back(m);
        return m;
    }

    vkllm_session *session(vkllm_model *m, uint32_t n_ctx = 0, vkllm_kv_type kv = VKLLM_KV_F16,
                           uint32_t flags = 0, uint32_t n_seq = 1, uint32_t n_batch = 0,
                           uint32_t n_sink = 4) {
        vkllm_session_params p;
        vkllm_session_params_init(&p);
        p.n_ctx = n_ctx;
        p.kv_type = kv;
        p.flags = flags;
        p.n_seq = n_seq;
        if (n_batch) p.n_batch = n_batch;
        p.n_sink = n_sink;
        vkllm_session *s = nullptr;
        EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_OK) << vkllm_last_error();
        if (s) sessions_.push_back(s);
        return s;
    }

    static uint32_t vocab(vkllm_model *m) {
        vkllm_model_info info;
        info.struct_size = sizeof info;
        vkllm_model_get_info(m, &info);
        return info.n_vocab;
    }

    // Logits after each token, fed one at a time through the decode step (the KV cache path).
    std::vector<std::vector<float>> decode_each(vkllm_session *s, const std::vector<int32_t> &ids,
                                                uint32_t n_vocab, uint32_t seq = 0) {
        std::vector<std::vector<float>> out;
        for (int32_t id : ids) {
            std::vector<float> l(n_vocab);
            EXPECT_EQ(vkllm_session_decode(s, &seq, &id, 1, l.data()), VKLLM_OK)
                << vkllm_last_error();
            out.push_back(l);
        }
        return out;
    }

    // A file name for the test's scratch model, removed at TearDown.
    std::string temp_path(const std::string &name) {
        temp_files_.push_back(::testing::TempDir() + "vkllm_" + name + "_" +
                              std::to_string(::getpid()) + ".gguf");
        return temp_files_.back();
    }

    // The bound on a prefill's logit error, for a test whose bound for F32 arithmetic is `f32`
    // and whose logits reach `largest` in magnitude. Where prefill runs the cooperative-matrix
    // matmul (VKLLM_COOPMAT=on on lavapipe 26, GPUs) each product a logit goes through rounds
    // both operands to F16 (2^-10 each, rounding toward zero allowed) before the F32 sums; a
    // tiny model's logits pass through about 4 such products (a layer's two, twice, and the
    // head): 2^-8 of max(1, largest) in all (observed: at most 1.2e-3 on lavapipe 26). An
    // F16-rounded operand also turns a difference elsewhere (another attention kernel) from
    // F32 rounding into up to an F16 step, so comparisons of two coopmat prefills take it too.
    double prefill_bound(double f32, double largest) const {
        if (!coopmat_prefill()) return f32;
        return std::max(f32, std::max(1.0, largest) / 256);
    }
    // Whether prefill runs the cooperative-matrix matmul (F16 operands).
    bool coopmat_prefill() const { return rt_->context->kernels().coopmat(); }

    vkllm_runtime *rt_ = nullptr;
    std::vector<vkllm_model *> models_;
    std::vector<vkllm_session *> sessions_;
    std::vector<std::string> errors_;
    std::vector<std::string> temp_files_;

  private:
    static void log(void *user, vkllm_log_level level, const char *msg) {
        if (level == VKLLM_LOG_ERROR) static_cast<std::vector<std::string> *>(user)->push_back(msg);
    }
};

inline double max_abs_diff(const std::vector<float> &a, const std::vector<float> &b) {
    double m = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        m = std::max(m, std::fabs(double(a[i]) - double(b[i])));
    return a.size() == b.size() ? m : INFINITY;
}

inline double max_abs(const std::vector<float> &a) {
    double m = 0;
    for (float v : a)
        m = std::max(m, std::fabs(double(v)));
    return m;
}

inline int32_t argmax_of(const std::vector<float> &v) {
    return int32_t(std::max_element(v.begin(), v.end()) - v.begin());
}

// Difference between the best and the second best logit.
inline double top1_margin(const std::vector<float> &v) {
    std::vector<float> s = v;
    std::partial_sort(s.begin(), s.begin() + 2, s.end(), std::greater<float>());
    return double(s[0]) - double(s[1]);
}

// An engine test on the tiny models of tests/data (tests/data/README.md: who made them, and the
// float64 references made with them).
class SharedModelTest : public EngineTest {
  protected:
    void SetUp() override {
        dir_ = test_data_dir();
        EngineTest::SetUp();
    }
    std::string model_path(const char *name) const { return dir_ + "/models/" + name + ".gguf"; }
    std::string dir_;
};

// n deterministic token ids below `vocab` (a linear congruential sequence).
inline std::vector<int32_t> token_ids(size_t n, uint32_t vocab, uint32_t seed) {
    std::vector<int32_t> t;
    uint32_t s = seed;
    for (size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        t.push_back(int32_t((s >> 8) % vocab));
    }
    return t;
}
