// The QKV projection that stores its own K and V (LinearKernels::linear_qkv_store) against the
// two dispatches it replaces: linear_qkv, then kv_store rotating K on the way and Q in place.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "attention_fixture.h"
#include "gpu/tuner.h"
#include "random_blocks.h"

using namespace vkllm::gpu;
using vkllm::gpu::test_blocks::random_blocks;

namespace {

class QkvStoreTest : public AttentionFixture {
  protected:
    // 4 query heads and 2 KV heads of 64: 512 stacked rows whose blocks start on 256 bytes.
    static constexpr uint32_t kQHeads = 4, kKvHeads = 2, kDim = 64, kCap = 16, kPos = 48;
    static constexpr uint32_t kQRows = kQHeads * kDim, kKvRows = kKvHeads * kDim;
    static constexpr uint32_t kRows = kQRows + 2 * kKvRows;

    struct Case {
        Kernels *k;
        const Matrix &w;
        uint32_t n;
        KvType kv;
        RopeLayout layout;
        uint32_t rot;  // 0: no RoPE
        std::string what;
    };

    // Runs both paths on the same input and compares the caches, Q, K and V; the counts of
    // arrivals must be back to zero.
    void check(const Case &c) {
        std::vector<float> x = ref::random(size_t(c.n) * c.w.cols, 21 + c.n, -2.0f, 2.0f);
        std::vector<float> bias = ref::random(kRows, 22);
        // Tokens of two sequences at positions past the ring's end; the third token's sequence
        // is outside the cache (skipped by both), the fourth's position is negative.
        Step st;
        for (uint32_t t = 0; t < c.n; ++t) {
            st.pos.push_back(t == 3 ? -1 : int32_t((t * 13 + 5) % kPos));
            st.seq.push_back(t == 2 ? 7 : int32_t(t % 2));
            st.begin.push_back(0);
        }
        Uploaded sb = upload_step(st);
        Buffer table = upload(ref::random(size_t(kPos) * std::max(c.rot, 2u), 23));
        AttentionShape sh{c.n, kQHeads, kKvHeads, kDim, kCap, 2, c.kv, 0.125f};
        uint64_t bytes = uint64_t(2) * kCap * kKvHeads * kv_row_bytes(c.kv, kDim);
        Buffer xb = upload(x), bb = upload(bias);
        Buffer q_fused = floats(size_t(c.n) * kQRows), q_plain = floats(size_t(c.n) * kQRows);
        Buffer k_fused = floats(size_t(c.n) * kKvRows), k_plain = floats(size_t(c.n) * kKvRows);
        Buffer v_fused = floats(size_t(c.n) * kKvRows), v_plain = floats(size_t(c.n) * kKvRows);
        Buffer kc_fused = floats(bytes / 4), vc_fused = floats(bytes / 4);
        Buffer kc_plain = floats(bytes / 4), vc_plain = floats(bytes / 4);
        Buffer arrivals = floats(LinearKernels::qkv_arrivals_bytes(kQHeads, kKvHeads) / 4);
        KvRope rope{c.layout,      c.rot ? table.range() : BufferRange{},
                    c.rot,         c.rot ? kPos : 0u,
                    BufferRange{}, 0};
        ASSERT_TRUE(c.k->qkv_store_fusable(c.w, xb.range(), c.n, sh)) << c.what;
        run([&](Recording &r) {
            for (Buffer *b : {&kc_fused, &vc_fused, &kc_plain, &vc_plain, &arrivals})
                r.fill(b->range(), 0);
            KvStoreTarget t{kc_fused.range(), vc_fused.range(), sb.view(), sh, rope,
                            arrivals.range()};
            c.k->linear_qkv_store(r, c.w, xb.range(), q_fused.range(), k_fused.range(),
                                  v_fused.range(), c.n, bb.range(), {}, t);
            c.k->linear_qkv(r, c.w, xb.range(), q_plain.range(), k_plain.range(), v_plain.range(),
                            kKvRows, c.n, bb.range());
            KvRope plain_rope = rope;
            if (c.rot) plain_rope.q = q_plain.range(), plain_rope.q_heads = kQHeads;
            c.k->kv_store(r, k_plain.range(), v_plain.range(), kc_plain.range(), vc_plain.range(),
                          sb.view(), sh, plain_rope);
        });
        // The same arithmetic in both, up to a fused multiply-add's rounding, which F16 and Q8_0
        // may carry to the neighbouring value (an F16 ulp; a Q8_0 step).
        double tol = c.kv == KvType::F32 ? 1e-6 : c.kv == KvType::F16 ? 2e-3 : 3e-2;
        expect_close(values(download(kc_fused, bytes / 4), c.kv, kDim),
                     values(download(kc_plain, bytes / 4), c.kv, kDim), 0, tol,
                     (c.what + " k cache").c_str());
        expect_close(values(download(vc_fused, bytes / 4), c.kv, kDim),
                     values(download(vc_plain, bytes / 4), c.kv, kDim), 0, tol,
                     (c.what + " v cache").c_str());
        expect_close(download(q_fused, size_t(c.n) * kQRows),
                     download(q_plain, size_t(c.n) * kQRows), 0, 1e-6, (c.what + " q").c_str());
        EXPECT_EQ(download(k_fused, size_t(c.n) * kKvRows),
                  download(k_plain, size_t(c.n) * kKvRows))
            << c.what;
        EXPECT_EQ(download(v_fused, size_t(c.n) * kKvRows),
                  download(v_plain, size_t(c.n) * kKvRows))
            << c.what;
        std::vector<float> counts = download(arrivals, arrivals.size() / 4);
        EXPECT_EQ(counts, std::vector<float>(counts.size(), 0.0f)) << c.what << ": counts left";
        // Something was stored: the caches are not all zero.
        std::vector<float> kc = download(kc_fused, bytes / 4);
        EXPECT_NE(kc, std::vector<float>(kc.size(), 0.0f)) << c.what;
    }
};

TEST_F(QkvStoreTest, StoresWhatTheProjectionThenKvStoreWouldForEachCacheTypeAndRope) {
    auto [data, w] = random_blocks(WeightType::Q8_0_G8, uint64_t(kRows) * 896, 31);
    Buffer wb = upload(data);
    Matrix m{wb.range(), WeightType::Q8_0_G8, kRows, 896};
    // Each cache type and RoPE layout, one vector (decode) and a full dispatch of 8 (lavapipe's
    // prefill groups, a batch of sequences); a batch of 3 ends a workgroup's vectors early.
    // Every new combination is a pipeline for lavapipe to compile: these few cover each
    // branch.
    struct Kind {
        uint32_t n;
        KvType kv;
        RopeLayout layout;
        uint32_t rot;
    };
    const Kind kinds[] = {{1, KvType::F32, RopeLayout::Interleaved, 0},
                          {1, KvType::F16, RopeLayout::Interleaved, 64},
                          {1, KvType::Q8_0, RopeLayout::Neox, 32},
                          {3, KvType::F16, RopeLayout::Neox, 32},
                          {8, KvType::F32, RopeLayout::Neox, 64},
                          {8, KvType::Q8_0, RopeLayout::Interleaved, 64}};
    for (Kernels *k : variants()) {
        if (!k->texel_matvec(m, wb.range())) continue;  // the storage-buffer-only kernels
        for (const Kind &c : kinds) {
            std::string what = std::string(k->cpu_shapes() ? "lavapipe" : "GPU") + " shapes n " +
                               std::to_string(c.n) + " kv " + std::to_string(uint32_t(c.kv)) +
                               " rot " + std::to_string(c.rot) +
                               (c.layout == RopeLayout::Neox ? " neox" : " pairs");
            check({k, m, c.n, c.kv, c.layout, c.rot, what});
        }
    }
}

// Every variant tuning may pick for a decode step: workgroups of 1 to 32 rows, whose rows
// split a head between many workgroups or span two heads, and lavapipe's row walk.
TEST_F(QkvStoreTest, EveryTunableVariantStoresAlike) {
    auto [data, w] = random_blocks(WeightType::Q4_K, uint64_t(kRows) * 768, 32);
    Buffer wb = upload(data);
    Matrix m{wb.range(), WeightType::Q4_K, kRows, 768};
    MatvecKey key{MatvecFamily::Dense, m.type, m.rows, m.cols};
    for (Kernels *k : variants()) {
        if (!k->texel_matvec(m, wb.range())) continue;
        MatvecTuning saved = k->env().tuning();
        // One candidate of each row count (the lanes' count and the sum do not change how
        // rows meet heads; the variant tests check those).
        std::vector<uint32_t> seen;
        for (const MatvecVariant &v : matvec_candidates(k->env(), key, true)) {
            if (std::find(seen.begin(), seen.end(), v.rows) != seen.end()) continue;
            seen.push_back(v.rows);
            k->env().set_tuning({{key, v}});
            std::string what = std::string(k->cpu_shapes() ? "lavapipe" : "GPU") + " variant " +
                               std::to_string(v.wg) + " lanes x " + std::to_string(v.rows) +
                               " rows" + (v.subgroup ? " subgroup" : " shared");
            check({k, m, 1, KvType::Q8_0, RopeLayout::Neox, 64, what});
        }
        k->env().set_tuning(saved);
    }
}

// Where the kernels cannot store in the projection's dispatch, the plan keeps kv_store.
TEST_F(QkvStoreTest, RefusesWhatOneDispatchCannotStore) {
    auto [data, w] = random_blocks(WeightType::Q8_0_G8, uint64_t(kRows) * 896, 33);
    Buffer wb = upload(data), xb = floats(size_t(9) * 896);
    Matrix m{wb.range(), WeightType::Q8_0_G8, kRows, 896};
    AttentionShape sh{1, kQHeads, kKvHeads, kDim, kCap, 0, KvType::F16, 0.125f};
    Kernels &k = kernels();
    EXPECT_TRUE(k.qkv_store_fusable(m, xb.range(), 1, sh));
    sh.n_tokens = 9;
    EXPECT_FALSE(k.qkv_store_fusable(m, xb.range(), 9, sh)) << "more rows than one dispatch";
    sh.n_tokens = 1;
    AttentionShape other = sh;
    other.n_heads = kQHeads + 1;
    EXPECT_FALSE(k.qkv_store_fusable(m, xb.range(), 1, other)) << "heads that do not stack";
    other = sh;
    other.head_dim = 36, other.n_heads = 512 / 36;
    EXPECT_FALSE(k.qkv_store_fusable(m, xb.range(), 1, other)) << "heads not of whole units";
}

}  // namespace
