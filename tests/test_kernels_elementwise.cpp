// Element-wise kernels and the embedding row gather against the CPU reference. Tolerance:
// 1e-5 relative + 1e-6 absolute (the GPU's exp/tanh are F32), exact for add, mul and gathers.
#include <cmath>

#include "common/half.h"
#include "gpu_fixture.h"
#include "reference/attention_ref.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;

namespace {
// Not a multiple of the 64-wide workgroup.
const uint32_t kN = 3 * 64 * 5 + 13;
}  // namespace

TEST_F(GpuTest, AddAndMulBroadcastTheSecondOperandOverRows) {
    const uint32_t nb = 71;
    std::vector<float> a = ref::random(size_t(nb) * 13, 1), b = ref::random(nb, 2);
    uint32_t n = uint32_t(a.size());
    Buffer ab = upload(a), bb = upload(b), yb = floats(n), zb = floats(n);
    run([&](Recording &r) {
        kernels().binary(r, Binary::Add, ab.range(), bb.range(), yb.range(), n, nb);
        kernels().binary(r, Binary::Mul, ab.range(), bb.range(), zb.range(), n, nb);
    });
    std::vector<float> add(n), mul(n);
    for (uint32_t i = 0; i < n; ++i)
        add[i] = a[i] + b[i % nb], mul[i] = a[i] * b[i % nb];
    expect_close(download(yb, n), add, 0, 0, "add");
    expect_close(download(zb, n), mul, 0, 0, "mul");
}

TEST_F(GpuTest, AddOfEqualLengthVectorsIsResidualAddInPlace) {
    std::vector<float> a = ref::random(kN, 3), b = ref::random(kN, 4);
    Buffer ab = upload(a), bb = upload(b);
    run([&](Recording &r) {
        kernels().binary(r, Binary::Add, ab.range(), bb.range(), ab.range(), kN, kN);
    });
    std::vector<float> want(kN);
    for (uint32_t i = 0; i < kN; ++i)
        want[i] = a[i] + b[i];
    expect_close(download(ab, kN), want, 0, 0, "residual add");
}

TEST_F(GpuTest, SiluAndGeluMatchReferenceIncludingLargeInputs) {
    std::vector<float> x = ref::random(kN, 5, -8, 8);
    x[0] = 80.0f;  // exp(-x) underflows, tanh saturates: must not give NaN
    x[1] = -80.0f;
    x[2] = 0.0f;
    Buffer xb = upload(x), sb = floats(kN), gb = floats(kN);
    run([&](Recording &r) {
        kernels().unary(r, Unary::SiLU, xb.range(), sb.range(), kN);
        kernels().unary(r, Unary::GELU, xb.range(), gb.range(), kN);
    });
    std::vector<float> silu(kN), gelu(kN);
    for (uint32_t i = 0; i < kN; ++i)
        silu[i] = float(ref::silu(x[i])), gelu[i] = float(ref::gelu_tanh(x[i]));
    expect_close(download(sb, kN), silu, 1e-5, 1e-6, "silu");
    expect_close(download(gb, kN), gelu, 1e-5, 1e-6, "gelu");
}

// Gemma 2's final-logit soft-capping: cap * tanh(x / cap), odd, within (-cap, cap), and
// saturating without NaN far past the cap.
TEST_F(GpuTest, SoftCapIsCapTimesTanhOfXOverCap) {
    std::vector<float> x = ref::random(kN, 19, -60, 60);
    x[0] = 1e30f, x[1] = -1e30f, x[2] = 0.0f;
    const float cap = 30.0f;
    Buffer xb = upload(x), yb = floats(kN);
    run([&](Recording &r) { kernels().unary(r, Unary::SoftCap, xb.range(), yb.range(), kN, cap); });
    std::vector<float> want(kN);
    for (uint32_t i = 0; i < kN; ++i)
        want[i] = float(cap * std::tanh(double(x[i]) / cap));
    expect_close(download(yb, kN), want, 1e-5, 1e-5, "softcap");
}

TEST_F(GpuTest, SwigluIsSiluOfGateTimesUp) {
    std::vector<float> g = ref::random(kN, 6, -6, 6), u = ref::random(kN, 7);
    Buffer gb = upload(g), ub = upload(u), yb = floats(kN);
    run([&](Recording &r) {
        kernels().binary(r, Binary::SwiGLU, gb.range(), ub.range(), yb.range(), kN, kN);
    });
    std::vector<float> want(kN);
    for (uint32_t i = 0; i < kN; ++i)
        want[i] = float(ref::silu(g[i]) * u[i]);
    expect_close(download(yb, kN), want, 1e-5, 1e-6, "swiglu");
}

// Gemma's gated unit, gelu_tanh(gate) * up, and the embedding gather's scale (sqrt(n_embd)).
TEST_F(GpuTest, GegluIsGeluOfGateTimesUpAndGetRowsScales) {
    std::vector<float> g = ref::random(kN, 16, -6, 6), u = ref::random(kN, 17);
    Buffer gb = upload(g), ub = upload(u), yb = floats(kN);
    const uint32_t rows = 40, cols = 24;
    std::vector<float> t = ref::random(size_t(rows) * cols, 18);
    std::vector<int32_t> ids = {3, 39, 0, 3};
    Buffer tb = upload(t), ib = upload(ids), ob = floats(ids.size() * cols);
    run([&](Recording &r) {
        kernels().binary(r, Binary::GeGLU, gb.range(), ub.range(), yb.range(), kN, kN);
        kernels().get_rows(r, Matrix{tb.range(), WeightType::F32, rows, cols}, ib.range(),
                           ob.range(), uint32_t(ids.size()), 25.25f);
    });
    std::vector<float> want(kN);
    for (uint32_t i = 0; i < kN; ++i)
        want[i] = float(ref::gelu_tanh(g[i]) * u[i]);
    expect_close(download(yb, kN), want, 1e-5, 1e-6, "geglu");
    std::vector<float> rows_want = ref::get_rows(t, rows, cols, ids);
    for (float &v : rows_want)
        v *= 25.25f;
    expect_close(download(ob, ids.size() * cols), rows_want, 1e-6, 0, "scaled get_rows");
}

TEST_F(GpuTest, GetRowsGathersF32AndF16RowsAndZeroesInvalidIds) {
    const uint32_t rows = 300, cols = 75;  // odd: F16 rows start mid-word
    std::vector<float> t = ref::random(size_t(rows) * cols, 8), t16;
    std::vector<uint16_t> h = ref::to_f16(t, &t16);
    h.resize((h.size() + 1) / 2 * 2);  // F16 data is bound in whole 32-bit words
    std::vector<int32_t> ids = {0, 299, 17, 17, -1, 300, 150};
    Buffer tb = upload(t), hb = upload(h), ib = upload(ids);
    Buffer o32 = floats(ids.size() * cols), o16 = floats(ids.size() * cols);
    run([&](Recording &r) {
        kernels().get_rows(r, Matrix{tb.range(), WeightType::F32, rows, cols}, ib.range(),
                           o32.range(), uint32_t(ids.size()));
        kernels().get_rows(r, Matrix{hb.range(), WeightType::F16, rows, cols}, ib.range(),
                           o16.range(), uint32_t(ids.size()));
    });
    expect_close(download(o32, ids.size() * cols), ref::get_rows(t, rows, cols, ids), 0, 0,
                 "f32 rows");
    expect_close(download(o16, ids.size() * cols), ref::get_rows(t16, rows, cols, ids), 0, 0,
                 "f16 rows");
}

TEST_F(GpuTest, GetRowsGathersBF16Rows) {
    const uint32_t rows = 300, cols = 75;  // odd: rows start mid-word
    std::vector<float> t = ref::random(size_t(rows) * cols, 9, -100, 100), seen;
    std::vector<uint16_t> h = ref::to_bf16(t, &seen);
    h.resize((h.size() + 1) / 2 * 2);
    std::vector<int32_t> ids = {0, 299, 17, 17, -1, 300, 150, 1};
    Buffer hb = upload(h), ib = upload(ids), ob = floats(ids.size() * cols);
    run([&](Recording &r) {
        kernels().get_rows(r, Matrix{hb.range(), WeightType::BF16, rows, cols}, ib.range(),
                           ob.range(), uint32_t(ids.size()));
    });
    expect_close(download(ob, ids.size() * cols), ref::get_rows(seen, rows, cols, ids), 0, 0,
                 "bf16 rows");
}

TEST_F(GpuTest, GetRowsGathersQ8_0Rows) {
    const uint32_t rows = 50, cols = 96;
    std::vector<float> t = ref::random(size_t(rows) * cols, 9), deq;
    std::vector<uint8_t> q = ref::to_q8_0(t, &deq);
    q.resize((q.size() + 3) / 4 * 4);
    std::vector<int32_t> ids = {0, 49, 7, 7, 50};
    Buffer qb = upload(q), ib = upload(ids), ob = floats(ids.size() * cols);
    run([&](Recording &r) {
        kernels().get_rows(r, Matrix{qb.range(), WeightType::Q8_0, rows, cols}, ib.range(),
                           ob.range(), uint32_t(ids.size()));
    });
    expect_close(download(ob, ids.size() * cols), ref::get_rows(deq, rows, cols, ids), 1e-6, 0,
                 "q8_0 rows");
}

TEST_F(GpuTest, GetRowsFromATableLargerThanStorageBufferRange) {
    uint64_t limit = ctx_->device().info().max_storage_buffer_range;
    const uint32_t cols = 896;  // Qwen2.5-0.5B's embedding width, F16 as in its GGUF
    uint32_t rows = uint32_t(limit / (cols * 2)) + 1000;
    if (uint64_t(rows) * cols * 2 > (uint64_t(1) << 31)) GTEST_SKIP() << "binding limit too large";
    std::vector<uint16_t> h(size_t(rows) * cols);
    for (size_t i = 0; i < h.size(); ++i)
        h[i] = uint16_t(i % 30011);  // finite F16 values
    std::vector<float> t(h.size());
    for (size_t i = 0; i < h.size(); ++i)
        t[i] = vkllm::half_to_float(h[i]);
    std::vector<int32_t> ids = {0, int32_t(rows - 1), int32_t(rows / 2), int32_t(rows - 1000)};
    Buffer hb = upload(h), ib = upload(ids), ob = floats(ids.size() * cols);
    run([&](Recording &r) {
        kernels().get_rows(r, Matrix{hb.range(), WeightType::F16, rows, cols}, ib.range(),
                           ob.range(), uint32_t(ids.size()));
    });
    expect_close(download(ob, ids.size() * cols), ref::get_rows(t, rows, cols, ids), 0, 0, "rows");
}
