// KV cache store and attention against the CPU reference (reference/attention_ref.h).
// Tolerance for attention: 1e-5 absolute on outputs that are convex combinations of V values in
// [-1, 1]. The GPU computes scores, exponentials and the weighted sums in F32 (each lane sums
// at most capacity / workgroup keys, then the lanes are combined), the reference in double;
// scores reach ~16, so exp() carries ~1e-6 relative error (lavapipe measured: 1.2e-7 at worst).
// F16 caches are compared with a reference that reads the same F16-rounded K/V values, so the
// tolerance is the same. Only kv_store's own F32 -> F16 conversion may round differently from
// nearest-even on some device (within 1 ulp), so the stored values are checked to 1 ulp and the
// attention after kv_store to 1e-3 with an F16 cache (lavapipe rounds to nearest even: exact).
// Q8_0 caches likewise: attention reads the dequantized values the reference reads; what
// kv_store quantizes is checked against the quantization error bound of each block.
// The cooperative-matrix kernel, whose f16 operands need a tolerance of their own, is kept out
// of these (set_attention_coopmat(false)) and checked by test_kernels_attention_coopmat.cpp.
#include <cmath>
#include <cstring>
#include <limits>

#include "attention_fixture.h"
#include "common/half.h"
#include "reference/attention_ref.h"
#include "reference/cpu_ops.h"

using namespace vkllm::gpu;

namespace {

const double kTol = 1e-5;

// What the CPU reference does not model, applied around it: a sliding window (the kernel's push
// constant, which the reference sees as a later kv_begin) and GPT-OSS's sink logits. And which
// of the GPU shapes' kernels run besides split-K: the one-pass kernel and the tiled one (each
// new specialization costs lavapipe seconds of compilation, the tiled kernel the most).
struct Extras {
    uint32_t window = 0;
    bool sinks = false;
    bool one_pass = true, tiled = true;
};

class AttentionTest : public AttentionFixture {
  protected:
    // The head sizes attention.comp and attention_tiled.comp take, multiples of 8 up to 256
    // (others go to attention_small_head.comp).
    static bool tiled_head(uint32_t d) { return d % 8 == 0 && d <= 256; }

    // Random q and caches (changed by `edit` when given), attention by every kernel variant vs
    // the reference. Returns the largest error seen.
    double check(ref::AttnShape s, uint32_t n_seq, const Step &st, KvType kv, const char *what,
                 const std::function<void(std::vector<float> &, std::vector<float> &,
                                          std::vector<float> &)> &edit = nullptr,
                 Extras extras = {}) {
        s.scale = double(float(1.0 / std::sqrt(double(s.head_dim))));
        uint32_t n = uint32_t(st.pos.size());
        size_t kv_elems = size_t(n_seq) * s.capacity * s.n_kv_heads * s.head_dim;
        std::vector<float> q = ref::random(size_t(n) * s.n_heads * s.head_dim, 31 + n);
        std::vector<float> k = ref::random(kv_elems, 32 + s.head_dim);
        std::vector<float> v = ref::random(kv_elems, 33 + s.capacity);
        if (edit) edit(q, k, v);
        std::vector<float> ks, vs;
        Buffer kb = cache(k, kv, s.head_dim, ks), vb = cache(v, kv, s.head_dim, vs);
        Buffer qb = upload(q), ob = floats(q.size());
        Uploaded sb = upload_step(st);
        Step seen = st;  // the window as the reference sees it
        for (size_t t = 0; t < st.pos.size() && extras.window; ++t)
            seen.begin[t] = std::max(st.begin[t], st.pos[t] - int32_t(extras.window) + 1);
        std::vector<float> want =
            ref::attention(q, ks, vs, seen.pos, seen.seq, seen.begin, s, n_seq);
        std::vector<float> sink_values = sink_logits(s.n_heads, 9 + s.head_dim);
        Buffer sinks = upload(sink_values);
        if (extras.sinks) add_sink_logits(want, q, ks, seen, s, n_seq, sink_values);
        double worst = 0;
        // Each variant as the device would run it, then the GPU shapes with the keys split
        // into 3 slices (split-K, as GPUs run decode steps) and with the tokens tiled (as GPUs
        // run prefill steps).
        enum Mode { Auto, Split, Tiled };
        for (Kernels *kern : variants()) {
            for (Mode mode : {Auto, Split, Tiled}) {
                if (mode != Auto && kern->cpu_shapes()) continue;
                if (!kern->cpu_shapes() &&
                    ((mode == Auto && !extras.one_pass) || (mode == Tiled && !extras.tiled)))
                    continue;
                kern->set_attention_splits(mode == Split ? 3 : 0);
                kern->set_attention_tiled(mode == Tiled);
                // The cooperative-matrix kernel (f16 operands) has its own suite and tolerance.
                kern->set_attention_coopmat(false);
                AttentionShape sh = shape(s, n, kv);
                sh.window = extras.window;
                if (mode == Tiled) {
                    EXPECT_EQ(kern->attention_tiled(sh), tiled_head(s.head_dim));
                }
                uint64_t scratch_bytes = kern->attention_scratch_bytes(sh);
                Buffer scratch = floats(std::max<uint64_t>(scratch_bytes / 4, 1));
                run([&](Recording &r) {
                    r.fill(ob.range(), 0x7fc00000u);  // NaN: every output must be written
                    if (scratch_bytes) r.fill(scratch.range(), 0);  // the slices' counts
                    kern->attention(r, qb.range(), kb.range(), vb.range(), ob.range(), sb.view(),
                                    sh, extras.sinks ? sinks.range() : BufferRange{},
                                    scratch_bytes ? scratch.range() : BufferRange{});
                });
                kern->set_attention_splits(0);
                kern->set_attention_tiled(false);
                kern->set_attention_coopmat(std::nullopt);
                std::vector<float> got = download(ob, q.size());
                expect_close(got, want, 0, kTol,
                             (std::string(what) + " kv type " + std::to_string(uint32_t(kv)) +
                              " mode " + std::to_string(int(mode)))
                                 .c_str());
                for (size_t i = 0; i < got.size(); ++i)
                    worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
            }
        }
        return worst;
    }

    void check_both(const ref::AttnShape &s, uint32_t n_seq, const Step &st, const char *what) {
        for (KvType kv : kv_types(s.head_dim))
            check(s, n_seq, st, kv, what);
    }
};

}  // namespace

TEST_F(AttentionTest, RingPlacementWrapsPositionsAndLimitsTheWindow) {
    // capacity 48, no sinks: position p lives in slot p % 48; each token sees [begin, pos].
    ref::AttnShape s{4, 2, 64, 48, 0, 0};
    Step st{{5, 47, 48, 100, 130, 130}, {0, 0, 0, 0, 0, 0}, {0, 0, 1, 60, 83, 120}};
    check_both(s, 1, st, "ring");
}

TEST_F(AttentionTest, SinkPositionsStayVisibleBesideTheWindow) {
    // 4 sinks in slots 0..3, a ring of 36 slots for the rest.
    ref::AttnShape s{2, 1, 32, 40, 4, 0};
    Step st{{0, 2, 3, 4, 39, 40, 75, 500, 500},
            {0, 0, 0, 0, 0, 0, 0, 0, 0},
            {4, 4, 4, 4, 4, 5, 40, 465, 490}};
    check_both(s, 1, st, "sinks");
}

TEST_F(AttentionTest, GroupedQueryHeadsReadTheirKvHead) {
    Step st{{70, 9}, {0, 0}, {0, 0}};
    check_both(ref::AttnShape{4, 2, 64, 80, 0, 0}, 1, st, "gqa 4/2");
    check_both(ref::AttnShape{8, 1, 128, 80, 0, 0}, 1, st, "gqa 8/1");
    check_both(ref::AttnShape{14, 2, 64, 80, 0, 0}, 1, st, "gqa 14/2");  // Qwen2.5-0.5B
    check_both(ref::AttnShape{6, 6, 80, 80, 0, 0}, 1, st, "mha head_dim 80");
    check_both(ref::AttnShape{12, 4, 96, 80, 0, 0}, 1, st, "gqa 12/4 head_dim 96");
    check_both(ref::AttnShape{16, 2, 32, 80, 0, 0}, 1, st, "gqa 16/2 head_dim 32");
}

TEST_F(AttentionTest, SmallAndOddHeadSizesMatchTheReference) {
    // stories260K (8 heads of 8 over 4 KV heads) and 48 (the fast kernels' smallest and an odd
    // multiple of 16), a random Llama's heads of 4 and 20 (not multiples of 8: the small-head
    // kernel), with a ring and sinks.
    Step st{{0, 7, 30, 95}, {0, 0, 0, 0}, {2, 2, 2, 66}};
    check_both(ref::AttnShape{8, 4, 8, 32, 2, 0}, 1, st, "head_dim 8");
    check_both(ref::AttnShape{2, 2, 4, 32, 2, 0}, 1, st, "head_dim 4");
    check_both(ref::AttnShape{4, 2, 20, 32, 2, 0}, 1, st, "head_dim 20");
    check_both(ref::AttnShape{2, 1, 48, 32, 2, 0}, 1, st, "head_dim 48");
}

// Every head size real models use (64 and 128: Llama, Qwen; 80 and 96: Phi; 112, 160, 192;
// 256: Gemma 2 and 3) and odd multiples of 8 (72, 200) take the fast kernels, checked against
// the reference with the device's shapes and with a GPU's: the one-pass kernel, split keys and
// tiles (16 x 16 up to 128, smaller tiles for larger heads). The step: 19 prefill tokens past
// the ring's end (across the tiles of tokens and of keys) with sink positions, a decode token
// of another sequence and one that sees nothing, all under a sliding window and with sink
// logits. Per head size, each GQA ratio the tests cover (each its own heads per workgroup on
// lavapipe) on an F16 cache; the ratio 2 (Gemma 2 2B's 8 / 4) also with Gemma 2's soft cap, and
// Gemma 3's 4 / 1 on the other cache types. The tiled kernel's variants cost lavapipe the most
// compilation (a pipeline per head size): those two run without it
// (SoftCappedScoresMatchTheReference tiles soft-capped heads of 256 on every cache type), and it
// tiles five head sizes, one per case of its code: 64 and 72 (whole and half 16-lane rows), 128
// (Llama's and Qwen's), and on lavapipe's 32 KiB 192 (16 x 8 tiles) and 256 (8 x 8); the other
// sizes take the same tiles and loops to another bound.
TEST_F(AttentionTest, EveryHeadSizeUpTo256TakesTheFastKernels) {
    const uint32_t cap = 40, n_sink = 2, window = 24;
    Step st;
    for (int32_t p = 45; p < 64; ++p)  // the ring holds the last cap - n_sink positions
        st.pos.push_back(p), st.seq.push_back(0), st.begin.push_back(p - int32_t(cap - n_sink) + 1);
    st.pos.push_back(20), st.seq.push_back(1), st.begin.push_back(int32_t(n_sink));
    st.pos.push_back(-1), st.seq.push_back(0), st.begin.push_back(int32_t(n_sink));
    auto sharpen = [](std::vector<float> &q, std::vector<float> &, std::vector<float> &) {
        for (float &x : q)
            x *= 6.0f;  // scores up to ~20, which a cap of 5 bends hard
    };
    const Extras split_only{window, true, false, false};
    for (uint32_t d : {64u, 72u, 80u, 96u, 112u, 128u, 160u, 192u, 200u, 256u}) {
        std::string at = "head_dim " + std::to_string(d);
        const Extras all{window, true, true,
                         d == 64 || d == 72 || d == 128 || d == 192 || d == 256};
        for (auto [heads, kv_heads] : {std::pair{6u, 6u}, {12u, 4u}, {14u, 2u}, {16u, 2u}})
            check(ref::AttnShape{heads, kv_heads, d, cap, n_sink, 0}, 2, st, KvType::F16,
                  (at + " heads " + std::to_string(heads) + "/" + std::to_string(kv_heads)).c_str(),
                  nullptr, all);
        ref::AttnShape capped{8, 4, d, cap, n_sink, 0};
        capped.softcap = 5.0;
        check(capped, 2, st, KvType::F16, (at + " heads 8/4, soft cap").c_str(), sharpen,
              split_only);
        KvType other = d % 32 ? KvType::F32 : KvType::Q8_0;
        check(ref::AttnShape{4, 1, d, cap, n_sink, 0}, 2, st, other, (at + " heads 4/1").c_str(),
              nullptr, split_only);
    }
}

// Gemma 2's attention-logit soft-capping: queries 6 times larger so the scores reach ~20 and a
// cap of 5 bends them hard (tanh saturates), through the fast kernels (one pass, split and
// tiled; heads of 64 and Gemma 2's 256) and the small-head one (heads of 20), every cache type.
TEST_F(AttentionTest, SoftCappedScoresMatchTheReference) {
    for (uint32_t dim : {64u, 256u, 20u}) {
        ref::AttnShape s{4, 2, dim, 40, 0, 0};
        s.softcap = 5.0;
        Step st{{3, 17, 39}, {0, 0, 0}, {0, 0, 0}};
        for (KvType kv : kv_types(dim))
            check(s, 1, st, kv, ("soft cap, heads of " + std::to_string(dim)).c_str(),
                  [](std::vector<float> &q, std::vector<float> &, std::vector<float> &) {
                      for (float &x : q)
                          x *= 6.0f;
                  });
    }
}

TEST_F(AttentionTest, SeveralSequencesInOneStepLikeABatchedDecode) {
    // One token of each of three sequences at its own position, plus tokens that see nothing
    // (a sequence outside the cache, a negative position): zeros.
    ref::AttnShape s{4, 2, 64, 64, 2, 0};
    Step st{{63, 5, 200, 1, 10, -1}, {2, 0, 1, 1, 3, 0}, {2, 2, 139, 2, 2, 2}};
    check_both(s, 3, st, "batched decode");
}

TEST_F(AttentionTest, PrefillTokensSeeTheirOwnPrefixOnly) {
    // 40 tokens of sequence 1 at positions 60..99: token t sees positions <= its own.
    ref::AttnShape s{14, 2, 64, 128, 0, 0};
    Step st;
    for (int32_t p = 60; p < 100; ++p) {
        st.pos.push_back(p);
        st.seq.push_back(1);
        st.begin.push_back(0);
    }
    check_both(s, 2, st, "prefill");
    // The same past the ring's end, each token with the window the ring still holds.
    for (size_t i = 0; i < st.pos.size(); ++i) {
        st.pos[i] += 200;
        st.begin[i] = st.pos[i] - 127;
    }
    check_both(s, 2, st, "prefill, wrapped");
}

// 32768 cached positions and one query: each lane of a workgroup visits thousands of keys, so
// a loop cut short by llvmpipe's iteration limit would drop the latest keys. The key at the
// query's own position is made to dominate query head 0 (weight > 99%), so missing it could
// not go unnoticed.
TEST_F(AttentionTest, LongContextUsesEveryKey) {
    const uint32_t cap = 32768;
    for (uint32_t sinks : {0u, 4u}) {
        ref::AttnShape s{14, 2, 64, cap, sinks, 0};
        int32_t pos = sinks ? 70000 : int32_t(cap - 1);
        int32_t begin = sinks ? pos - int32_t(cap - sinks) + 1 : 0;
        Step st{{pos}, {0}, {begin}};
        auto plant = [&](std::vector<float> &q, std::vector<float> &k, std::vector<float> &) {
            size_t row = size_t(ref::kv_slot(pos, cap, sinks)) * 2 * 64;  // KV head 0
            for (uint32_t i = 0; i < 64; ++i)
                k[row + i] = q[i] > 0 ? 4.0f : -4.0f;  // score ~ 16 for query head 0
        };
        for (KvType kv : kv_types(64))
            check(s, 1, st, kv, sinks ? "long context with sinks" : "long context", plant);
    }
}

// GPT-OSS's sink logits and sliding window with the keys split into slices: the merge must add
// the sink once (not once per slice) and the window must cut across the slices. Compared with
// the one-pass kernel (checked with sinks and windows against the CPU reference through the
// GPT-OSS model tests) on a decode step of 3 sequences. One scratch, zeroed once, serves every
// split count in turn: each dispatch must leave the slices' counts at zero, or the next one
// would merge at the wrong slice and leave outputs unwritten (NaN).
TEST_F(AttentionTest, SplitKeysMergeWithSinkLogitsAndASlidingWindow) {
    const uint32_t heads = 8, kv_heads = 2, dim = 64, cap = 300, n_seq = 3;
    size_t kv_elems = size_t(n_seq) * cap * kv_heads * dim;
    std::vector<float> q = ref::random(size_t(n_seq) * heads * dim, 5);
    Buffer qb = upload(q), kb = upload(ref::random(kv_elems, 7)),
           vb = upload(ref::random(kv_elems, 8)), sinks = upload(sink_logits(heads, 6));
    Step st{{299, 40, 3}, {0, 1, 2}, {0, 0, 0}};
    Uploaded sb = upload_step(st);
    AttentionShape most{n_seq, heads, kv_heads, dim, cap, 0, KvType::F32, 0.125f, 0};
    kernels().set_attention_splits(32);
    Buffer scratch = floats(kernels().attention_scratch_bytes(most) / 4);
    run([&](Recording &r) { r.fill(scratch.range(), 0); });
    for (uint32_t window : {0u, 100u}) {
        AttentionShape sh{n_seq, heads, kv_heads, dim, cap, 0, KvType::F32, 0.125f, window};
        std::vector<std::vector<float>> outs;
        for (uint32_t splits : {1u, 2u, 5u, 32u}) {
            kernels().set_attention_splits(splits);
            uint64_t bytes = kernels().attention_scratch_bytes(sh);
            EXPECT_EQ(bytes > 0, splits > 1);
            Buffer ob = floats(q.size());
            run([&](Recording &r) {
                r.fill(ob.range(), 0x7fc00000u);  // NaN: every output must be written
                kernels().attention(r, qb.range(), kb.range(), vb.range(), ob.range(), sb.view(),
                                    sh, sinks.range(),
                                    bytes ? scratch.range(0, bytes) : BufferRange{});
            });
            kernels().set_attention_splits(0);
            outs.push_back(download(ob, q.size()));
        }
        for (size_t i = 1; i < outs.size(); ++i)
            expect_close(
                outs[i], outs[0], 0, kTol,
                ("window " + std::to_string(window) + ", split " + std::to_string(i)).c_str());
    }
}

// The tiled kernel on prefill steps with what the reference does not model: GPT-OSS's sink
// logits and a sliding window, with two sequences' runs meeting inside a tile (a pass per
// sequence) and a token that sees nothing. Compared with the one-pass kernel, which the
// reference checks with sinks and windows through the GPT-OSS model tests.
TEST_F(AttentionTest, TiledPrefillMatchesOnePassWithSinksWindowsAndTwoSequences) {
    const uint32_t heads = 8, kv_heads = 2, dim = 64, cap = 96, n_seq = 2;
    size_t kv_elems = size_t(n_seq) * cap * kv_heads * dim;
    Step st;
    for (int32_t i = 0; i < 21; ++i)  // sequence 0: positions 50..70, then sequence 1: 0..18
        st.pos.push_back(50 + i), st.seq.push_back(0), st.begin.push_back(0);
    for (int32_t i = 0; i < 19; ++i)
        st.pos.push_back(i), st.seq.push_back(1), st.begin.push_back(0);
    st.pos.push_back(-1), st.seq.push_back(0), st.begin.push_back(0);
    uint32_t n = uint32_t(st.pos.size());
    std::vector<float> q = ref::random(size_t(n) * heads * dim, 15);
    Buffer qb = upload(q), kb = upload(ref::random(kv_elems, 17)),
           vb = upload(ref::random(kv_elems, 18)), sinks = upload(sink_logits(heads, 16));
    Uploaded sb = upload_step(st);
    for (uint32_t window : {0u, 10u}) {
        AttentionShape sh{n, heads, kv_heads, dim, cap, 0, KvType::F32, 0.125f, window, true};
        std::vector<std::vector<float>> outs;
        for (bool tiled : {false, true}) {
            kernels().set_attention_tiled(tiled);
            kernels().set_attention_coopmat(false);
            EXPECT_EQ(kernels().attention_tiled(sh), tiled || !kernels().cpu_shapes());
            Buffer ob = floats(q.size());
            run([&](Recording &r) {
                r.fill(ob.range(), 0x7fc00000u);
                kernels().attention(r, qb.range(), kb.range(), vb.range(), ob.range(), sb.view(),
                                    sh, sinks.range());
            });
            kernels().set_attention_tiled(false);
            kernels().set_attention_coopmat(std::nullopt);
            outs.push_back(download(ob, q.size()));
        }
        if (kernels().cpu_shapes())
            expect_close(outs[1], outs[0], 0, kTol, ("window " + std::to_string(window)).c_str());
        for (size_t i = size_t(n - 1) * heads * dim; i < q.size(); ++i)
            ASSERT_EQ(outs[1][i], 0.0f) << "the token at position -1 sees nothing";
    }
}

// GPUs tile prefill steps of more than 8 tokens; decode steps (a token or two per sequence)
// keep a workgroup per token, which split-K fills the device with.
TEST_F(AttentionTest, GpusTilePrefillStepsOnly) {
    for (Kernels *kern : variants()) {
        AttentionShape sh{9, 14, 2, 64, 4096, 0, KvType::F16, 0.125f, 0, true};
        EXPECT_EQ(kern->attention_tiled(sh), !kern->cpu_shapes());
        sh.n_tokens = 8;
        EXPECT_FALSE(kern->attention_tiled(sh));
        sh.n_tokens = 512;
        sh.prefill = false;
        EXPECT_FALSE(kern->attention_tiled(sh));
        sh.prefill = true;
        sh.head_dim = 20;  // attention_small_head.comp's
        EXPECT_FALSE(kern->attention_tiled(sh));
    }
}

// kv_store with RoPE fused in stores exactly what rope() then kv_store() store, for both pair
// layouts, a partial rotation (rot_dim < head_dim) and every cache type; K is left unrotated.
// Q, given, is rotated in place as rope() rotates it, every token's (the skipped sequence's
// too, as rope() does).
TEST_F(AttentionTest, KvStoreRotatesKAsRopeThenStoreWould) {
    const uint32_t heads = 2, q_heads = 4, dim = 64, cap = 16, n = 5, n_pos = 40;
    std::vector<float> k = ref::random(size_t(n) * heads * dim, 11);
    std::vector<float> q = ref::random(size_t(n) * q_heads * dim, 14);
    std::vector<float> v = ref::random(k.size(), 12);
    Step st{{3, 4, 39, 0, 17}, {0, 0, 1, 7, 0}, {0, 0, 0, 0, 0}};
    Uploaded sb = upload_step(st);
    for (RopeLayout layout : {RopeLayout::Interleaved, RopeLayout::Neox}) {
        for (uint32_t rot : {64u, 32u}) {
            Buffer table = upload(ref::random(size_t(n_pos) * rot, 13 + rot));
            for (KvType kv : kv_types(dim)) {
                AttentionShape sh{n, 4, heads, dim, cap, 0, kv, 0.125f};
                uint64_t bytes = uint64_t(2) * cap * heads * kv_row_bytes(kv, dim);
                Buffer kb = upload(k), vb = upload(v), rotated = upload(k);
                Buffer qb = upload(q), q_plain = upload(q);
                Buffer fused_k = floats(bytes / 4), fused_v = floats(bytes / 4);
                Buffer plain_k = floats(bytes / 4), plain_v = floats(bytes / 4);
                run([&](Recording &r) {
                    r.fill(fused_k.range(), 0);
                    r.fill(plain_k.range(), 0);
                    kernels().kv_store(
                        r, kb.range(), vb.range(), fused_k.range(), fused_v.range(), sb.view(), sh,
                        KvRope{layout, table.range(), rot, n_pos, qb.range(), q_heads});
                    kernels().rope(r, layout, rotated.range(), table.range(), sb.pos.range(), n,
                                   heads, dim, rot, n_pos);
                    kernels().rope(r, layout, q_plain.range(), table.range(), sb.pos.range(), n,
                                   q_heads, dim, rot, n_pos);
                    kernels().kv_store(r, rotated.range(), vb.range(), plain_k.range(),
                                       plain_v.range(), sb.view(), sh);
                });
                std::string what = std::string(layout == RopeLayout::Neox ? "neox" : "pairs") +
                                   " rot " + std::to_string(rot) + " kv " +
                                   std::to_string(uint32_t(kv));
                // The same arithmetic up to the rounding of a fused multiply-add, which F16 and
                // Q8_0 may round to the neighbouring value (an F16 ulp; a Q8_0 step).
                std::vector<float> a = values(download(fused_k, bytes / 4), kv, dim),
                                   b = values(download(plain_k, bytes / 4), kv, dim);
                double tol = kv == KvType::F32 ? 1e-6 : kv == KvType::F16 ? 2e-3 : 3e-2;
                expect_close(a, b, 0, tol, what.c_str());
                EXPECT_EQ(download(kb, k.size()), k) << what;
                std::vector<float> q_fused = download(qb, q.size());
                expect_close(q_fused, download(q_plain, q.size()), 0, 1e-6, (what + " q").c_str());
                EXPECT_NE(q_fused, q) << what;
            }
        }
    }
}

TEST_F(AttentionTest, KvStoreThenAttentionRoundTrip) {
    ref::AttnShape s{4, 2, 64, 32, 2, 0};
    s.scale = double(float(1.0 / 8.0));
    const uint32_t n_seq = 2, kv_dim = 2 * 64;
    // Prefill of sequence 0 (positions 0..19) and of sequence 1 (0..31), then a second step
    // of sequence 1 past the ring's end (positions 32..39 overwrite 2..9), then a decode token
    // of each. The overwrite is a step of its own: within one dispatch, two tokens of one slot
    // would race (the engine never stores a step that wraps onto itself).
    Step fill, wrap;
    for (int32_t p = 0; p < 40; ++p) {
        if (p < 20) fill.pos.push_back(p), fill.seq.push_back(0), fill.begin.push_back(2);
        Step &st = p < 32 ? fill : wrap;
        st.pos.push_back(p), st.seq.push_back(1), st.begin.push_back(2);
    }
    fill.pos.push_back(7), fill.seq.push_back(5), fill.begin.push_back(2);  // skipped
    uint32_t n_first = uint32_t(fill.pos.size()), n_wrap = uint32_t(wrap.pos.size());
    Uploaded ws = upload_step(wrap);
    for (size_t i = 0; i < n_wrap; ++i)  // the reference stores both steps in order
        fill.pos.push_back(wrap.pos[i]), fill.seq.push_back(wrap.seq[i]),
            fill.begin.push_back(wrap.begin[i]);
    Step dec{{19, 39}, {0, 1}, {2, 10}};
    uint32_t n_fill = uint32_t(fill.pos.size());
    std::vector<float> k = ref::random(size_t(n_fill) * kv_dim, 41);
    std::vector<float> v = ref::random(size_t(n_fill) * kv_dim, 42);
    std::vector<float> q = ref::random(size_t(2) * 4 * 64, 43);
    Buffer kb = upload(k), vb = upload(v), qb = upload(q), ob = floats(q.size());
    Uploaded fs = upload_step(fill), ds = upload_step(dec);
    // The second step's K and V rows follow the first's (offsets of 512-byte rows: aligned).
    const uint64_t first_bytes = uint64_t(n_first) * kv_dim * 4,
                   wrap_bytes = uint64_t(n_wrap) * kv_dim * 4;
    size_t cache_elems = size_t(n_seq) * s.capacity * kv_dim;
    for (KvType kv : kv_types(64)) {
        bool f16 = kv == KvType::F16;
        // The reference stores the values rounded as F16 would be, nearest even.
        std::vector<float> kr = k, vr = v;
        if (f16) ref::to_f16(k, &kr), ref::to_f16(v, &vr);
        std::vector<float> kc(cache_elems, 0.0f), vc(cache_elems, 0.0f);
        ref::kv_store(kr, vr, fill.pos, fill.seq, s, n_seq, kc, vc);
        for (Kernels *kern : variants()) {
            size_t bytes = size_t(n_seq) * s.capacity * 2 * kv_row_bytes(kv, 64);
            Buffer kcb = ctx_->allocator().allocate(bytes, MemoryKind::Device);
            Buffer vcb = ctx_->allocator().allocate(bytes, MemoryKind::Device);
            run([&](Recording &r) {
                r.fill(kcb.range(), 0);
                r.fill(vcb.range(), 0);
                kern->kv_store(r, kb.range(0, first_bytes), vb.range(0, first_bytes), kcb.range(),
                               vcb.range(), fs.view(), shape(s, n_first, kv));
                kern->kv_store(r, kb.range(first_bytes, wrap_bytes),
                               vb.range(first_bytes, wrap_bytes), kcb.range(), vcb.range(),
                               ws.view(), shape(s, n_wrap, kv));
                kern->attention(r, qb.range(), kcb.range(), vcb.range(), ob.range(), ds.view(),
                                shape(s, 2, kv));
            });
            // Stored values: exact for F32; for F16 the device's conversion may round either
            // way, so within one F16 ulp (2^-10 relative) of the nearest-even value; for Q8_0
            // within half a quantization step of each value plus the F16 rounding of the
            // block's scale (127 steps of 2^-11 relative): amax (0.5 / 127 + 2^-10).
            std::vector<float> read[2];
            int which = 0;
            for (auto [buf, want_cache] : {std::pair{&kcb, &kc}, std::pair{&vcb, &vc}}) {
                std::vector<float> &got = read[which++];
                got.resize(cache_elems);
                if (kv == KvType::Q8_0) {
                    std::vector<uint8_t> raw(bytes);
                    ctx_->transfer().download(*buf, raw.data(), bytes);
                    got = dequantize_q8_0_cache(raw, 64);
                    for (size_t b = 0; b < cache_elems / 32; ++b) {
                        float amax = 0;
                        for (size_t i = 0; i < 32; ++i)
                            amax = std::max(amax, std::fabs((*want_cache)[b * 32 + i]));
                        for (size_t i = 0; i < 32; ++i)
                            ASSERT_LE(std::fabs(got[b * 32 + i] - (*want_cache)[b * 32 + i]),
                                      amax * (0.5 / 127 + 1.0 / 1024))
                                << "q8_0 cache value " << b * 32 + i;
                    }
                } else if (f16) {
                    std::vector<uint16_t> h(cache_elems);
                    ctx_->transfer().download(*buf, h.data(), bytes);
                    for (size_t i = 0; i < h.size(); ++i)
                        got[i] = vkllm::half_to_float(h[i]);
                    expect_close(got, *want_cache, 1.0 / 1024, 1e-7, "f16 cache");
                } else {
                    ctx_->transfer().download(*buf, got.data(), bytes);
                    expect_close(got, *want_cache, 0, 0, "f32 cache");
                }
            }
            // Attention over what was stored (for Q8_0 the values the device quantized).
            const std::vector<float> &kw = kv == KvType::Q8_0 ? read[0] : kc;
            const std::vector<float> &vw = kv == KvType::Q8_0 ? read[1] : vc;
            std::vector<float> want =
                ref::attention(q, kw, vw, dec.pos, dec.seq, dec.begin, s, n_seq);
            expect_close(download(ob, q.size()), want, 0, f16 ? 1e-3 : kTol, "round trip");
        }
    }
}

TEST_F(AttentionTest, UnsupportedShapesAreRefused) {
    Buffer small = floats(64);
    BufferRange r = small.range();
    StepView sv{r, r, r};
    auto status = [&](AttentionShape sh, BufferRange cache) {
        try {
            run([&](Recording &rec) { kernels().attention(rec, r, cache, cache, r, sv, sh); });
        } catch (const vkllm::Error &e) {
            return e.status();
        }
        return VKLLM_OK;
    };
    AttentionShape ok{1, 2, 1, 32, 2, 0, KvType::F32, 0.1f};  // 2 slots x 32 values = 256 bytes
    EXPECT_EQ(status(ok, r), VKLLM_OK);
    AttentionShape bad = ok;
    bad.head_dim = 300;
    EXPECT_EQ(status(bad, r), VKLLM_ERR_UNSUPPORTED);
    bad = ok;
    bad.n_heads = 3, bad.n_kv_heads = 2;
    EXPECT_EQ(status(bad, r), VKLLM_ERR_UNSUPPORTED);
    bad = ok;
    bad.head_dim = 48, bad.kv_type = KvType::Q8_0;  // Q8_0 rows are whole blocks of 32
    EXPECT_EQ(status(bad, r), VKLLM_ERR_UNSUPPORTED);
    bad = ok;
    bad.n_sink = 2;
    EXPECT_EQ(status(bad, r), VKLLM_ERR_UNSUPPORTED);
    // A cache binding beyond maxStorageBufferRange (never bound: refused before recording).
    BufferRange huge = r;
    huge.size = ctx_->device().info().max_storage_buffer_range + 256;
    EXPECT_EQ(status(ok, huge), VKLLM_ERR_UNSUPPORTED);
}
