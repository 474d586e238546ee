#include "engine/tune.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "engine/tune_file.h"
#include "gpu/kernels/weight_layout.h"
#include "gpu/tuner.h"

namespace vkllm::engine {

namespace {

std::string describe(const gpu::MatvecVariant &v) {
    char s[64];
    std::snprintf(s, sizeof s, "wg=%u rows=%u %s", v.wg, v.rows,
                  v.subgroup ? "subgroup" : "shared");
    return s;
}

// Every matrix a decode step multiplies a vector by, by shape: the attention projections
// (stacked where the loader stacked them), the feed-forward's, the router and the experts, and
// the output head.
struct Shapes {
    std::map<gpu::MatvecKey, std::vector<gpu::Matrix>> dense;
    std::map<gpu::MatvecKey, std::vector<gpu::ExpertMatrix>> experts;

    void add(const gpu::Matrix &m) {
        if (m.data.size == 0 || m.rows == 0) return;
        dense[gpu::MatvecKey{gpu::MatvecFamily::Dense, m.type, m.rows, m.cols}].push_back(m);
    }
    void add(const gpu::ExpertMatrix &m) {
        if (m.data.size == 0 || m.rows == 0) return;
        experts[gpu::MatvecKey{gpu::MatvecFamily::Moe, m.type, m.rows, m.cols}].push_back(m);
    }
};

Shapes decode_shapes(const Model &model) {
    Shapes s;
    for (const models::LayerWeights &l : model.weights().layers) {
        if (l.wqkv.data.size) {
            s.add(l.wqkv);
        } else {
            s.add(l.wq);
            s.add(l.wk);
            s.add(l.wv);
        }
        for (const gpu::Matrix *m : {&l.wo, &l.gate, &l.up, &l.down, &l.gate_inp})
            s.add(*m);
        for (const gpu::ExpertMatrix *m : {&l.gate_exps, &l.up_exps, &l.down_exps})
            s.add(*m);
    }
    s.add(model.weights().output);
    return s;
}

void report(const Logger &log, const gpu::TunedShape &t, uint32_t per_step) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "tune: %s %s %ux%u (%u per step):",
                  t.key.family == gpu::MatvecFamily::Moe ? "moe_matvec" : "matvec",
                  gpu::weight_type_name(t.key.type), t.key.rows, t.key.cols, per_step);
    std::string head = buf;
    for (const gpu::TunedCandidate &c : t.candidates) {
        if (c.rejected)
            std::snprintf(buf, sizeof buf, "   %-26s rejected: error %.3g of the tolerance",
                          describe(c.variant).c_str(), c.error);
        else
            std::snprintf(buf, sizeof buf, "   %-26s %9.2f us%s", describe(c.variant).c_str(), c.us,
                          c.variant == t.default_variant ? "  (default)" : "");
        log(VKLLM_LOG_INFO, head + buf);
    }
    std::snprintf(buf, sizeof buf, " picked %s: %.2f us (default %.2f us)",
                  describe(t.winner).c_str(), t.winner_us, t.default_us);
    log(VKLLM_LOG_INFO, head + buf);
}

}  // namespace

std::string tune_file_path(const std::string &pipeline_cache_path) {
    return pipeline_cache_path + ".tune";
}

TuneSummary tune_model(const Model &model, const std::string &pipeline_cache_path,
                       const Logger &log) {
    auto t0 = std::chrono::steady_clock::now();
    gpu::Context &ctx = model.context();
    Shapes shapes = decode_shapes(model);
    TuneSummary sum;
    gpu::MatvecTuning winners;
    auto take = [&](const gpu::TunedShape &t, uint32_t per_step) {
        report(log, t, per_step);
        ++sum.shapes;
        for (const gpu::TunedCandidate &c : t.candidates) {
            ++sum.candidates_timed;
            sum.candidates_rejected += c.rejected;
        }
        sum.default_us += t.default_us * per_step;
        sum.tuned_us += t.winner_us * per_step;
        if (t.winner != t.default_variant) ++sum.shapes_changed;
        winners[t.key] = t.winner;
    };
    uint32_t k = model.config().n_expert_used;
    for (const auto &[key, ms] : shapes.dense)
        take(gpu::tune_matvec(ctx, ctx.kernels(), ms), uint32_t(ms.size()));
    // A step multiplies a token by k experts of each tensor.
    for (const auto &[key, ms] : shapes.experts)
        take(gpu::tune_moe_matvec(ctx, ctx.kernels(), ms, k), uint32_t(ms.size()) * k);

    gpu::MatvecTuning all = ctx.kernels().env().tuning();
    for (const auto &[key, v] : winners)
        all[key] = v;
    ctx.kernels().env().set_tuning(all);
    if (!pipeline_cache_path.empty()) {
        std::string path = tune_file_path(pipeline_cache_path);
        TuneIdentity id = tune_identity(ctx.device());
        // What the file holds for other models' shapes stays; a stale or bad file is replaced.
        gpu::MatvecTuning stored = read_tune_file(path, id, log);
        for (const auto &[key, v] : winners)
            stored[key] = v;
        write_tune_file(path, id, stored);
        sum.file_written = true;
    }
    sum.elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return sum;
}

size_t load_tuning(gpu::Context &ctx, const std::string &pipeline_cache_path, const Logger &log) {
    if (pipeline_cache_path.empty()) return 0;
    std::string path = tune_file_path(pipeline_cache_path);
    gpu::MatvecTuning tuning = read_tune_file(path, tune_identity(ctx.device()), log);
    for (const auto &[key, v] : tuning) {
        if (!ctx.kernels().env().supports(v)) {
            log(VKLLM_LOG_WARNING, "ignoring the tune file " + path + ": it names a variant (" +
                                       describe(v) + ") this device cannot run");
            return 0;
        }
    }
    ctx.kernels().env().set_tuning(tuning);
    return tuning.size();
}

}  // namespace vkllm::engine
