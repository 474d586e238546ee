#include "gpu/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "gpu/pattern.h"

namespace vkllm::gpu {

namespace {

// What a shape's timing needs: its input and output on the device and the recording that
// repeats the product between two timestamps.
struct Bench {
    Context &ctx;
    Buffer x, y;
    size_t n_out;
    Recording rec{ctx.device(), 2};

    Bench(Context &c, size_t n_in, size_t outputs)
        : ctx(c),
          x(c.allocator().allocate(n_in * 4, MemoryKind::Device)),
          y(c.allocator().allocate(outputs * 4, MemoryKind::Device)),
          n_out(outputs) {
        std::vector<float> in = pattern(n_in, uint32_t(n_in + outputs));
        c.transfer().upload(x, in.data(), n_in * 4);
    }

    // The product of the first matrix (`which` 0).
    std::vector<float> output(const std::function<void(Recording &, size_t which)> &product) {
        rec.begin();
        product(rec, 0);
        rec.end();
        rec.submit();
        std::vector<float> out(n_out);
        ctx.transfer().download(y, out.data(), n_out * 4);
        return out;
    }

    // Microseconds of one product: `reps` of them back to back (each waits for the previous
    // one's output, as a decode step's do), the fastest of three submits. The products cycle
    // through the `count` matrices of the shape (a model's layers), each read from memory as
    // a decode step reads it: the same matrix again and again would come from the caches
    // (the 50 MB L2 of an H100, a CPU's L3 on lavapipe) and flatter the variants that
    // re-read weights.
    double time(const std::function<void(Recording &, size_t which)> &product, size_t count) {
        auto run = [&](uint32_t reps) {
            rec.begin();
            rec.timestamp("start");
            for (uint32_t i = 0; i < reps; ++i)
                product(rec, i % count);
            rec.timestamp("end");
            rec.end();
            auto t0 = std::chrono::steady_clock::now();
            rec.submit();
            double host_ms =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            std::vector<Timing> t = rec.timings();
            double ms = t.size() == 2 ? t[1].ms : host_ms;
            return ms * 1000.0 / reps;
        };
        double once = run(1);  // also compiles the pipeline
        // About 2 ms per submit, so that a timestamp's resolution and a submit's cost vanish,
        // and every matrix at least once.
        double most = std::max(64.0, double(count));
        uint32_t reps = uint32_t(std::clamp(2000.0 / std::max(once, 1.0), double(count), most));
        double best = run(reps);
        for (int i = 0; i < 2; ++i)
            best = std::min(best, run(reps));
        return best;
    }
};

// The largest difference from `ref`, relative to kTuneTolerance times ref's largest magnitude;
// NaN and infinity are infinitely wrong.
double relative_error(const std::vector<float> &got, const std::vector<float> &ref) {
    double scale = 0;
    for (float r : ref)
        scale = std::max(scale, double(std::fabs(r)));
    scale = kTuneTolerance * std::max(scale, 1e-30);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        double e = std::fabs(double(got[i]) - double(ref[i])) / scale;
        if (!(e <= worst)) worst = std::isfinite(e) ? e : INFINITY;
    }
    return worst;
}

// One product with variant `v` (the texel kernel, or with `texel` false the storage-buffer
// one) of matrix `which` of the shape's matrices.
using Product = std::function<void(Recording &, const MatvecVariant &, bool texel, size_t which)>;

TunedShape tune(const KernelEnv &env, Bench &bench, const MatvecKey &key, bool texel, size_t count,
                const Product &product) {
    TunedShape shape;
    shape.key = key;
    shape.default_variant = env.default_matvec_variant(key, texel);
    MatvecVariant reference_variant{env.matvec_wg, env.matvec_rows, false};
    std::vector<float> ref = bench.output(
        [&](Recording &rec, size_t which) { product(rec, reference_variant, false, which); });
    for (const MatvecVariant &v : matvec_candidates(env, key, texel)) {
        TunedCandidate c;
        c.variant = v;
        c.error = relative_error(
            bench.output([&](Recording &rec, size_t which) { product(rec, v, true, which); }), ref);
        c.rejected = !(c.error <= 1.0);
        c.us = INFINITY;
        shape.candidates.push_back(c);
    }
    // Two rounds over the candidates, each keeping its faster time, so that a slow moment of
    // a shared machine does not fall on one candidate alone.
    for (int round = 0; round < 2; ++round)
        for (TunedCandidate &c : shape.candidates)
            if (!c.rejected)
                c.us = std::min(
                    c.us, bench.time([&](Recording &rec,
                                         size_t which) { product(rec, c.variant, true, which); },
                                     count));
    // The default is the first candidate; another wins only by more than the timing's noise.
    const TunedCandidate &first = shape.candidates.front();
    shape.default_us = first.us;
    shape.winner = first.variant;
    shape.winner_us = first.us;
    for (const TunedCandidate &c : shape.candidates)
        if (!c.rejected && c.us < shape.winner_us * 0.97) {
            shape.winner = c.variant;
            shape.winner_us = c.us;
        }
    for (TunedCandidate &c : shape.candidates)
        if (c.rejected) c.us = 0;
    return shape;
}

}  // namespace

std::vector<MatvecVariant> matvec_candidates(const KernelEnv &env, const MatvecKey &key,
                                             bool texel) {
    std::vector<MatvecVariant> out{env.default_matvec_variant(key, texel)};
    auto add = [&](const MatvecVariant &v) {
        if (env.supports(v) && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    };
    if (env.cpu_class) {
        // lavapipe runs a workgroup as one SIMD program of its subgroup's width: wider ones
        // only loop over it. Its candidates differ in rows per workgroup and the walk.
        MatvecVariant v{env.matvec_wg, 0, env.matvec_subgroup};
        for (uint32_t rows : {4u, 8u, 16u, 32u})
            add(MatvecVariant{v.wg, rows, v.subgroup});
        if (texel && v.subgroup && env.single_subgroup(v) && key.cols / 32 <= v.wg * kWalkUnits)
            add(MatvecVariant{v.wg, kWalkRows, v.subgroup});
        return out;
    }
    for (uint32_t wg : {32u, 64u, 128u, 256u})
        for (uint32_t rows : {1u, 2u, 4u, 8u})
            for (bool subgroup : {false, true})
                // The storage-buffer MoE kernel has no subgroup form.
                if (!subgroup || texel || key.family == MatvecFamily::Dense)
                    add(MatvecVariant{wg, rows, subgroup});
    return out;
}

TunedShape tune_matvec(Context &ctx, Kernels &kernels, const std::vector<Matrix> &ws) {
    const Matrix &w = ws.at(0);
    Bench bench(ctx, w.cols, w.rows);
    bool texel = kernels.texel_matvec(w, bench.x.range());
    MatvecKey key{MatvecFamily::Dense, w.type, w.rows, w.cols};
    return tune(kernels.env(), bench, key, texel, ws.size(),
                [&](Recording &rec, const MatvecVariant &v, bool use_texel, size_t which) {
                    kernels.matvec_variant(rec, ws[which], bench.x.range(), bench.y.range(), v,
                                           use_texel);
                });
}

TunedShape tune_moe_matvec(Context &ctx, Kernels &kernels, const std::vector<ExpertMatrix> &ws,
                           uint32_t k) {
    const ExpertMatrix &w = ws.at(0);
    Bench bench(ctx, w.cols, size_t(k) * w.rows);
    // Router logits that choose k experts spread over the tensor (whose weights then come from
    // different places, as a real token's do).
    std::vector<float> logits(w.n_expert, 0.0f);
    for (uint32_t j = 0; j < k; ++j)
        logits[(uint64_t(j) * w.n_expert / k + j) % w.n_expert] = 1.0f + float(j);
    Buffer logit_buf = ctx.allocator().allocate(logits.size() * 4, MemoryKind::Device);
    ctx.transfer().upload(logit_buf, logits.data(), logits.size() * 4);
    Buffer route =
        ctx.allocator().allocate(moe_route_words(1, k, w.n_expert) * 4, MemoryKind::Device);
    {
        Recording rec(ctx.device());
        rec.begin();
        kernels.moe_route(rec, logit_buf.range(), route.range(), 1, w.n_expert, k,
                          Gating::SoftmaxTopK, false);
        rec.end();
        rec.submit();
    }
    bool texel = kernels.texel_matvec(Matrix{w.data, w.type, w.rows, w.cols}, bench.x.range());
    MatvecKey key{MatvecFamily::Moe, w.type, w.rows, w.cols};
    return tune(kernels.env(), bench, key, texel, ws.size(),
                [&](Recording &rec, const MatvecVariant &v, bool use_texel, size_t which) {
                    kernels.moe_matvec_variant(rec, ws[which], bench.x.range(), bench.y.range(),
                                               route.range(), k, v, use_texel);
                });
}

}  // namespace vkllm::gpu
