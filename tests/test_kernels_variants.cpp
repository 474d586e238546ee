// The matrix-vector variants tuning chooses among (gpu/kernels/variants.h, gpu/tuner.h): every
// candidate of both device classes (on lavapipe the GPU list runs workgroups of 4 to 32
// subgroups of 8, so the sums across subgroups are checked too), on the texel and the
// storage-buffer kernels, against the double-precision product of the CPU dequantization with
// test_kernels_quant.cpp's F32 bound (1e-5 * sum_k |w_k x_k| + 1e-6 per output); the MoE
// kernels' candidates against their storage-buffer reference kernel; and the tuner's choice.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "gpu/tuner.h"
#include "gpu_fixture.h"
#include "random_blocks.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;
using namespace vkllm::gpu::test_blocks;

namespace {

class VariantTest : public GpuTest {
  protected:
    // Matrix data of `t` (random blocks; F32 and F16 random values) and its values.
    std::pair<std::vector<uint8_t>, std::vector<float>> weights(WeightType t, uint32_t rows,
                                                                uint32_t cols) {
        uint64_t count = uint64_t(rows) * cols;
        if (t == WeightType::F32 || t == WeightType::F16) {
            std::vector<float> w = ref::random(count, rows + cols);
            std::vector<uint8_t> data;
            if (t == WeightType::F32) {
                data.resize(count * 4);
                std::memcpy(data.data(), w.data(), data.size());
            } else {
                data.resize((count * 2 + 3) / 4 * 4);
                for (uint64_t i = 0; i < count; ++i) {
                    uint16_t h = vkllm::float_to_half(w[i]);
                    w[i] = vkllm::half_to_float(h);
                    std::memcpy(data.data() + 2 * i, &h, 2);
                }
            }
            return {data, w};
        }
        auto blocks = random_blocks(t, count, rows * 31 + cols);
        blocks.first.resize((blocks.first.size() + 3) / 4 * 4);
        return blocks;
    }

    // The candidates of `kernels`' list for this shape (`extremes`: only the first, the widest
    // and the narrowest), on the kernel `texel` picks.
    void check_candidates(Kernels &k, WeightType t, uint32_t rows, uint32_t cols, bool texel,
                          bool extremes = false) {
        auto [data, w] = weights(t, rows, cols);
        Buffer wb = upload(data);
        Matrix m{wb.range(), t, rows, cols};
        std::vector<float> x = ref::random(cols, 7);
        std::vector<double> scale;
        std::vector<float> want = ref::matmul(w, x, rows, cols, 1, &scale);
        Buffer xb = upload(x), yb = floats(rows);
        MatvecKey key{MatvecFamily::Dense, t, rows, cols};
        std::vector<MatvecVariant> candidates = matvec_candidates(k.env(), key, texel);
        ASSERT_GT(candidates.size(), 1u);
        if (extremes) {
            // The widest summed by subgroups, the narrowest through shared memory.
            auto lanes = [](const MatvecVariant &a, const MatvecVariant &b) {
                return std::make_pair(a.wg * a.rows, a.subgroup) <
                       std::make_pair(b.wg * b.rows, b.subgroup);
            };
            candidates = {candidates.front(),
                          *std::max_element(candidates.begin(), candidates.end(), lanes),
                          *std::min_element(candidates.begin(), candidates.end(), lanes)};
        }
        for (const MatvecVariant &v : candidates) {
            run([&](Recording &rec) {
                k.matvec_variant(rec, m, xb.range(), yb.range(), v, texel);
            });
            std::vector<float> got = download(yb, rows);
            for (size_t i = 0; i < got.size(); ++i)
                ASSERT_LE(std::fabs(double(got[i]) - want[i]), 1e-5 * scale[i] + 1e-6)
                    << name(t) << " " << rows << "x" << cols << " output " << i << ", wg " << v.wg
                    << " rows " << v.rows << (v.subgroup ? " subgroup" : " shared")
                    << (texel ? " texel" : " storage") << (k.cpu_shapes() ? " cpu" : " gpu");
        }
    }
};

const WeightType kTypes[] = {WeightType::F32,     WeightType::F16,     WeightType::Q8_0_G8,
                             WeightType::Q4_K,    WeightType::Q6_K_G8, WeightType::MXFP4_G16,
                             WeightType::Q4_0_G8, WeightType::Q5_K};

// The variants differ in how lanes and rows share the work, not in how weights decode: every
// candidate on one texel type, the storage-buffer kernel and every type on the extremes (each
// candidate is a pipeline to compile: about a second on lavapipe).
// 37 rows: no candidate's rows per workgroup divides them.
TEST_F(VariantTest, EveryDenseCandidateOfBothDeviceClassesMatchesTheReference) {
    for (Kernels *k : {variants()[0], variants()[1]}) {
        check_candidates(*k, WeightType::Q8_0_G8, 37, 896, true);
        check_candidates(*k, WeightType::F32, 37, 896, false, true);
    }
}

TEST_F(VariantTest, EveryWeightTypeDecodesInTheWidestAndNarrowestVariants) {
    for (Kernels *k : {variants()[0], variants()[1]})
        for (WeightType t : kTypes)
            check_candidates(*k, t, 37, block_weights(t) == 256 ? 768 : 896, true, true);
}

TEST_F(VariantTest, LongRowsTakeTheVariantsToo) {
    // 4864 columns: past lavapipe's row walk (kWalkUnits), as Qwen2.5-0.5B's down projection.
    for (Kernels *k : {variants()[0], variants()[1]})
        check_candidates(*k, WeightType::Q6_K_G8, 21, 4864, true, true);
}

TEST_F(VariantTest, TheTunedVariantIsTheOneATensorsShapeRuns) {
    Kernels &k = kernels();
    const uint32_t rows = 37, cols = 896;
    auto [data, w] = weights(WeightType::Q8_0_G8, rows, cols);
    Buffer wb = upload(data);
    Matrix m{wb.range(), WeightType::Q8_0_G8, rows, cols};
    std::vector<float> x = ref::random(cols, 3);
    std::vector<double> scale;
    std::vector<float> want = ref::matmul(w, x, rows, cols, 1, &scale);
    Buffer xb = upload(x), yb = floats(rows);
    MatvecKey key{MatvecFamily::Dense, m.type, rows, cols};
    auto pipelines_after = [&] {
        run([&](Recording &rec) { k.matvec(rec, m, xb.range(), yb.range()); });
        std::vector<float> got = download(yb, rows);
        for (size_t i = 0; i < got.size(); ++i)
            EXPECT_LE(std::fabs(double(got[i]) - want[i]), 1e-5 * scale[i] + 1e-6) << i;
        return ctx_->pipelines().created();
    };
    uint64_t before = pipelines_after();
    EXPECT_EQ(pipelines_after(), before);  // the same variant: no new pipeline
    // A candidate that is not the default: its pipeline is new, its output the same.
    std::vector<MatvecVariant> candidates = matvec_candidates(k.env(), key, true);
    ASSERT_GT(candidates.size(), 1u);
    k.env().set_tuning({{key, candidates.back()}});
    EXPECT_EQ(k.env().matvec_variant(key, true), candidates.back());
    EXPECT_EQ(pipelines_after(), before + 1);
    // Another shape keeps its default.
    MatvecKey other{MatvecFamily::Dense, m.type, rows + 1, cols};
    EXPECT_EQ(k.env().matvec_variant(other, true), k.env().default_matvec_variant(other, true));
    k.env().set_tuning({});
}

TEST_F(VariantTest, TheTunerTimesEveryCandidateAndPicksOneThatAgrees) {
    for (WeightType t : {WeightType::Q8_0_G8, WeightType::F16}) {
        const uint32_t rows = 300, cols = 896;
        auto [data, w] = weights(t, rows, cols);
        Buffer wb = upload(data);
        TunedShape s = tune_matvec(*ctx_, kernels(), {Matrix{wb.range(), t, rows, cols}});
        EXPECT_EQ(s.default_variant, kernels().env().default_matvec_variant(s.key, true));
        ASSERT_FALSE(s.candidates.empty());
        EXPECT_EQ(s.candidates.front().variant, s.default_variant);
        bool winner_listed = false;
        for (const TunedCandidate &c : s.candidates) {
            EXPECT_FALSE(c.rejected) << name(t) << " wg " << c.variant.wg << " rows "
                                     << c.variant.rows << ": error " << c.error;
            EXPECT_GT(c.us, 0.0);
            winner_listed |= c.variant == s.winner && c.us == s.winner_us;
        }
        EXPECT_TRUE(winner_listed);
        EXPECT_LE(s.winner_us, s.default_us);
    }
}

TEST_F(VariantTest, EveryMoeCandidateAgreesWithTheStorageBufferKernel) {
    // 16 experts of 40 x 896, 4 chosen: the tuner's check of each
    // candidate against the storage-buffer kernel, which test_kernels_moe.cpp checks against
    // the CPU.
    for (Kernels *k : {variants()[0], variants()[1]})
        for (WeightType t : {WeightType::Q8_0_G8}) {
            const uint32_t rows = 40, cols = block_weights(t) == 256 ? 768 : 896, n_expert = 16;
            auto [data, w] = weights(t, rows * n_expert, cols);
            Buffer wb = upload(data);
            ExpertMatrix e{wb.range(), t, rows, cols, n_expert};
            TunedShape s = tune_moe_matvec(*ctx_, *k, {e}, 4);
            EXPECT_GT(s.candidates.size(), 1u);
            for (const TunedCandidate &c : s.candidates)
                EXPECT_FALSE(c.rejected)
                    << name(t) << (k->cpu_shapes() ? " cpu" : " gpu") << " wg " << c.variant.wg
                    << " rows " << c.variant.rows << ": error " << c.error;
        }
}

}  // namespace
