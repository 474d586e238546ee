// A GPU test runs on a Context with the validation layer on; any validation error fails it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "validation.h"

class GpuTest : public ::testing::Test {
  protected:
    void SetUp() override {
        vkllm::gpu::ContextParams p;
        p.validation = vkllm_test_validation_in_process();
        p.log = vkllm::Logger{&GpuTest::collect, &messages_};
        ctx_ = std::make_unique<vkllm::gpu::Context>(p);
        // Each suite checks the kernels it names against F32 bounds, whatever VKLLM_COOPMAT
        // says: the cooperative-matrix matmul has its own suite and bound
        // (test_kernels_matmul_coopmat.cpp), which turns it on.
        ctx_->kernels().set_coopmat(false);
        rec_ = std::make_unique<vkllm::gpu::Recording>(ctx_->device());
    }

    void TearDown() override {
        rec_.reset();
        other_.reset();
        if (!ctx_) return;  // SetUp threw (no device, no validation layer): gtest reports it
        uint64_t errors = ctx_->instance().validation_errors();
        ctx_.reset();
        std::string all;
        for (const auto &m : messages_)
            all += m + "\n";
        EXPECT_EQ(errors, 0u) << "validation errors:\n" << all;
    }

    template <typename T>
    vkllm::gpu::Buffer upload(const std::vector<T> &data) {
        vkllm::gpu::Buffer b =
            ctx_->allocator().allocate(data.size() * sizeof(T), vkllm::gpu::MemoryKind::Device);
        ctx_->transfer().upload(b, data.data(), data.size() * sizeof(T));
        return b;
    }

    vkllm::gpu::Buffer floats(size_t n) {
        return ctx_->allocator().allocate(n * sizeof(float), vkllm::gpu::MemoryKind::Device);
    }

    std::vector<float> download(const vkllm::gpu::Buffer &b, size_t n) {
        std::vector<float> v(n);
        ctx_->transfer().download(b, v.data(), n * sizeof(float));
        return v;
    }

    // Records `body` into one command buffer, submits it and waits.
    void run(const std::function<void(vkllm::gpu::Recording &)> &body) {
        rec_->begin();
        body(*rec_);
        rec_->end();
        rec_->submit();
    }

    vkllm::gpu::Kernels &kernels() { return ctx_->kernels(); }

    // The device's own kernel shapes plus those of the other device class, so that both the
    // lavapipe and the GPU variants are checked on whatever device runs the tests, and the
    // own shapes again without texel loads (the storage-buffer kernels).
    std::vector<vkllm::gpu::Kernels *> variants() {
        using vkllm::gpu::DeviceClass;
        if (!other_) {
            DeviceClass own = vkllm::gpu::device_class(ctx_->device());
            other_ = std::make_unique<vkllm::gpu::Kernels>(
                ctx_->device(), ctx_->pipelines(),
                own == DeviceClass::Cpu ? DeviceClass::Gpu : DeviceClass::Cpu);
            no_texel_ =
                std::make_unique<vkllm::gpu::Kernels>(ctx_->device(), ctx_->pipelines(), own);
            no_texel_->set_texel_loads(false);
            other_->set_coopmat(false);
            no_texel_->set_coopmat(false);
        }
        return {&ctx_->kernels(), other_.get(), no_texel_.get()};
    }

    std::unique_ptr<vkllm::gpu::Context> ctx_;
    std::unique_ptr<vkllm::gpu::Recording> rec_;
    std::unique_ptr<vkllm::gpu::Kernels> other_, no_texel_;
    std::vector<std::string> messages_;

  private:
    static void collect(void *user, vkllm_log_level level, const char *msg) {
        if (level >= VKLLM_LOG_WARNING)
            static_cast<std::vector<std::string> *>(user)->push_back(msg);
    }
};

// |got - want| <= abs_tol + rel_tol * |want| for every element, reporting the worst one.
inline void expect_close(const std::vector<float> &got, const std::vector<float> &want,
                         double rel_tol, double abs_tol, const char *what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    size_t worst = 0;
    double worst_excess = -1;
    for (size_t i = 0; i < got.size(); ++i) {
        double err = std::abs(double(got[i]) - want[i]);
        double bound = abs_tol + rel_tol * std::abs(double(want[i]));
        double excess = err == 0 ? 0 : err / bound;  // NaN in got stays NaN and fails
        if (!(excess <= worst_excess)) worst_excess = excess, worst = i;
    }
    EXPECT_LE(worst_excess, 1.0) << what << ": element " << worst << " is " << got[worst]
                                 << ", want " << want[worst];
}
