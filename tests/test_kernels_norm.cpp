// RMSNorm, LayerNorm and softmax against the CPU reference, on row lengths that are not
// multiples of the workgroup size. Tolerance: 1e-5 relative + 1e-6 absolute (F32 sums of a
// few thousand terms; the reference is double).
#include "gpu_fixture.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;

namespace {
struct Rows {
    uint32_t rows, cols;
};
const Rows kShapes[] = {{1, 1}, {3, 7}, {5, 70}, {2, 896}, {17, 4864}};
}  // namespace

TEST_F(GpuTest, RmsNormMatchesReference) {
    for (Rows s : kShapes) {
        std::vector<float> x = ref::random(size_t(s.rows) * s.cols, 1, -3, 3);
        std::vector<float> w = ref::random(s.cols, 2, 0.5f, 1.5f);
        Buffer xb = upload(x), wb = upload(w), yb = floats(x.size());
        for (Kernels *k : variants()) {
            run([&](Recording &r) {
                k->rms_norm(r, xb.range(), wb.range(), yb.range(), s.rows, s.cols, 1e-6f);
            });
            expect_close(download(yb, x.size()), ref::rms_norm(x, w, s.rows, s.cols, 1e-6), 1e-5,
                         1e-6, "rms_norm");
        }
    }
}

TEST_F(GpuTest, RmsNormInPlace) {
    std::vector<float> x = ref::random(3 * 100, 3), w = ref::random(100, 4);
    Buffer xb = upload(x), wb = upload(w);
    run([&](Recording &r) {
        kernels().rms_norm(r, xb.range(), wb.range(), xb.range(), 3, 100, 1e-5f);
    });
    expect_close(download(xb, x.size()), ref::rms_norm(x, w, 3, 100, 1e-5), 1e-5, 1e-6,
                 "rms_norm in place");
}

TEST_F(GpuTest, LayerNormMatchesReferenceWithLargeMean) {
    for (Rows s : kShapes) {
        // An offset of 100 makes a one-pass variance lose most of its digits.
        std::vector<float> x = ref::random(size_t(s.rows) * s.cols, 5, 99, 101);
        std::vector<float> w = ref::random(s.cols, 6), b = ref::random(s.cols, 7);
        Buffer xb = upload(x), wb = upload(w), bb = upload(b), yb = floats(x.size());
        for (Kernels *k : variants()) {
            run([&](Recording &r) {
                k->layer_norm(r, xb.range(), wb.range(), bb.range(), yb.range(), s.rows, s.cols,
                              1e-5f);
            });
            // The F32 mean of values near 100 is itself rounded (half an ulp: 4e-6), which
            // shifts every centred value by up to ~7e-6 after scaling: hence 1e-5 absolute.
            expect_close(download(yb, x.size()), ref::layer_norm(x, w, b, s.rows, s.cols, 1e-5),
                         1e-5, 1e-5, "layer_norm");
        }
    }
}

TEST_F(GpuTest, SoftmaxMatchesReferenceAndIsStableForLargeLogits) {
    for (Rows s : kShapes) {
        std::vector<float> x = ref::random(size_t(s.rows) * s.cols, 8, -50, 50);
        Buffer xb = upload(x), yb = floats(x.size());
        for (Kernels *k : variants()) {
            run([&](Recording &r) { k->softmax(r, xb.range(), yb.range(), s.rows, s.cols, 2.0f); });
            expect_close(download(yb, x.size()), ref::softmax(x, s.rows, s.cols, 2.0), 1e-5, 1e-7,
                         "softmax");
        }
    }
}
