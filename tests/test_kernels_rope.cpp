// RoPE in both pair layouts, reading a cos/sin table computed once and positions from a
// device buffer. Tolerance: 1e-5 absolute on values in [-1, 1] (the table is rounded to F32).
#include <cmath>

#include "gpu_fixture.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;

class RopeTest : public GpuTest {
  protected:
    void check(RopeLayout layout, uint32_t heads, uint32_t head_dim, uint32_t rot_dim,
               const std::vector<int32_t> &positions, double base) {
        uint32_t n_pos = 4096;
        uint32_t n = uint32_t(positions.size());
        std::vector<float> x = ref::random(size_t(n) * heads * head_dim, 21 + head_dim);
        std::vector<float> table = rope_table(n_pos, rot_dim, base);
        Buffer xb = upload(x), tb = upload(table), pb = upload(positions);
        run([&](Recording &r) {
            kernels().rope(r, layout, xb.range(), tb.range(), pb.range(), n, heads, head_dim,
                           rot_dim, n_pos);
        });
        std::vector<float> want =
            ref::rope(x, positions, heads, head_dim, rot_dim, base, layout == RopeLayout::Neox);
        expect_close(download(xb, x.size()), want, 0, 1e-5, "rope");
    }
};

TEST_F(RopeTest, InterleavedPairsMatchReference) {
    check(RopeLayout::Interleaved, 8, 8, 8, {0, 1, 2, 3, 511}, 10000.0);  // stories260K shape
    check(RopeLayout::Interleaved, 3, 64, 64, {7, 100, 4095}, 500000.0);
}

TEST_F(RopeTest, NeoxPairsMatchReference) {
    check(RopeLayout::Neox, 14, 64, 64, {0, 5, 1000, 4000}, 1000000.0);  // Qwen2.5-0.5B shape
    check(RopeLayout::Neox, 2, 64, 64, {3}, 150000.0);
}

TEST_F(RopeTest, PartialRotationLeavesTrailingDimensionsUnchanged) {
    check(RopeLayout::Neox, 4, 80, 32, {0, 9, 77}, 10000.0);
    check(RopeLayout::Interleaved, 2, 10, 6, {1, 2}, 10000.0);
}

TEST(RopeTable, HoldsCosSinOfPositionTimesFrequency) {
    std::vector<float> t = rope_table(100, 16, 10000.0);
    ASSERT_EQ(t.size(), 100u * 8 * 2);
    for (uint32_t p : {0u, 1u, 57u, 99u}) {
        for (uint32_t i = 0; i < 8; ++i) {
            double a = p * std::pow(10000.0, -2.0 * i / 16);
            EXPECT_NEAR(t[(p * 8 + i) * 2], std::cos(a), 1e-7);
            EXPECT_NEAR(t[(p * 8 + i) * 2 + 1], std::sin(a), 1e-7);
        }
    }
}
