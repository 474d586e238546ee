#include "gpu/kernels/argmax.h"

#include <algorithm>
#include <cstdint>

#include "argmax/argmax.h"
#include "argmax/chain_advance.h"
#include "argmax/logprobs.h"
#include "argmax/sample.h"
#include "gpu/kernels/weight_layout.h"
#include "shader_names.h"

namespace vkllm::gpu {

void ArgmaxKernels::argmax(Recording &rec, const BufferRange &x, const BufferRange &ids,
                           uint32_t rows, uint32_t cols, uint32_t n) {
    if (n == 0 || n > cols)
        fail(VKLLM_ERR_INTERNAL, "argmax: %u candidates in rows of %u elements", n, cols);
    require(x, uint64_t(rows) * cols * 4, "argmax", "x");
    require(ids, uint64_t(rows) * 4, "argmax", "ids");
    check_loops(n / (4 * env_.argmax_wg) + 1, "argmax", n);  // 4 elements per iteration
    shaders::ArgmaxSpec spec;
    spec.WG = env_.argmax_wg;
    const Pipeline &p = env_.pipelines.get<shaders::ArgmaxBindings>(shaders::argmax, spec);
    shaders::ArgmaxBindings b;
    b.ids = ids;
    // Rows of many logits (prefill) may not fit one binding: bound in row chunks.
    for (const KernelEnv::Chunk &c : env_.split_rows(Matrix{x, WeightType::F32, rows, cols})) {
        shaders::ArgmaxPush push{};
        push.rows = c.rows;
        push.cols = cols;
        push.row0 = c.row0;
        push.n = n;
        b.x = c.data;
        env_.dispatch_1d(rec, p, b, &push, sizeof push, c.rows);
    }
}

void ArgmaxKernels::sample(Recording &rec, const BufferRange &x, const SampleBuffers &s,
                           uint32_t rows, uint32_t cols, uint32_t n, uint32_t capacity) {
    if (n == 0 || n > cols || capacity == 0)
        fail(VKLLM_ERR_INTERNAL, "sample: %u candidates in rows of %u, history of %u", n, cols,
             capacity);
    require(x, uint64_t(rows) * cols * 4, "sample", "x");
    require(s.options, uint64_t(rows) * SAMPLE_ROW_WORDS * 4, "sample", "options");
    require(s.bias, 8, "sample", "bias");
    require(s.history, uint64_t(rows) * capacity * 4, "sample", "history");
    require(s.state, uint64_t(rows) * 8, "sample", "state");
    require(s.ids, uint64_t(rows) * 4, "sample", "ids");
    // Per lane: the bias pairs; the penalties (each of the window's tokens against the window);
    // nine sweeps of the vocabulary (two four-pass selects, the gather) with the selects' walks
    // of 256 bins and the count; three bitonic sorts of 45 passes; lane 0's typical and top-p
    // walks; the draw (each candidate against the candidates); lane 0's scan of the lanes
    // (top-k off); the reductions; Philox's ten rounds.
    const uint64_t wg = env_.sample_wg, k = kMaxSampleTopK, sweep = n / wg + 1;
    const uint64_t window = capacity / wg + 1;
    check_loops(s.bias.size / 8 / wg + 1 + window * (capacity + 1) + 9 * sweep + 9 * 256 +
                    3 * 45 * (k / 2 / wg) + 2 * k + (k / wg + 1) * k + wg + 16 * 32 + 10,
                "sample", n);
    shaders::SampleSpec spec;
    spec.WG = uint32_t(wg);
    const Pipeline &p = env_.pipelines.get<shaders::SampleBindings>(shaders::sample, spec);
    shaders::SampleBindings b;
    b.options = s.options;
    b.bias = s.bias;
    b.history = s.history;
    b.state = s.state;
    b.ids = s.ids;
    for (const KernelEnv::Chunk &c : env_.split_rows(Matrix{x, WeightType::F32, rows, cols})) {
        shaders::SamplePush push{};
        push.rows = c.rows;
        push.cols = cols;
        push.row0 = c.row0;
        push.n = n;
        push.capacity = capacity;
        b.x = c.data;
        env_.dispatch_1d(rec, p, b, &push, sizeof push, c.rows);
    }
}

void ArgmaxKernels::logprobs(Recording &rec, const BufferRange &x, const BufferRange &out,
                             uint32_t rows, uint32_t cols, uint32_t n, uint32_t top,
                             uint32_t out_row0) {
    if (n == 0 || n > cols || top > kMaxTop)
        fail(VKLLM_ERR_INTERNAL, "logprobs: %u candidates in rows of %u, top %u", n, cols, top);
    require(x, uint64_t(rows) * cols * 4, "logprobs", "x");
    require(out, (uint64_t(out_row0) + rows) * logprobs_row_words(top) * 4, "logprobs", "out");
    // Lavapipe: one 8-lane subgroup per row (LAVAPIPE.md). GPUs: 64 lanes, whose kept pairs
    // (64 x 20 x 8 bytes) stay within the 16 KiB of shared memory every device has.
    uint32_t wg = env_.cpu_class ? 8 : 64;
    // The scan (4 elements per iteration), then lane 0's sum and merge over the lanes.
    check_loops(n / (4 * wg) + 1 + wg * (top + 2), "logprobs", n);
    shaders::LogprobsSpec spec;
    spec.WG = wg;
    spec.K = std::max(top, 1u);
    const Pipeline &p = env_.pipelines.get<shaders::LogprobsBindings>(shaders::logprobs, spec);
    shaders::LogprobsBindings b;
    b.out = out;
    for (const KernelEnv::Chunk &c : env_.split_rows(Matrix{x, WeightType::F32, rows, cols})) {
        shaders::LogprobsPush push{};
        push.rows = c.rows;
        push.cols = cols;
        push.row0 = c.row0;
        push.n = n;
        push.top = top;
        push.out0 = out_row0;
        b.x = c.data;
        env_.dispatch_1d(rec, p, b, &push, sizeof push, c.rows);
    }
}

void ArgmaxKernels::chain_advance(Recording &rec, const BufferRange &ids, const BufferRange &tokens,
                                  const StepView &step_view, const BufferRange &out, uint32_t n,
                                  uint32_t step, uint32_t window, uint32_t n_sink) {
    require(ids, uint64_t(n) * 4, "chain_advance", "ids");
    require(tokens, uint64_t(n) * 4, "chain_advance", "tokens");
    require(step_view.positions, uint64_t(n) * 4, "chain_advance", "positions");
    require(step_view.kv_begin, uint64_t(n) * 4, "chain_advance", "kv_begin");
    require(out, (uint64_t(step) + 1) * n * 4, "chain_advance", "out");
    const Pipeline &p =
        env_.pipelines.get<shaders::ChainAdvanceBindings>(shaders::chain_advance, NoSpec{});
    shaders::ChainAdvanceBindings b;
    b.ids = ids;
    b.tokens = tokens;
    b.positions = step_view.positions;
    b.kv_begin = step_view.kv_begin;
    b.out = out;
    shaders::ChainAdvancePush push{};
    push.n = n;
    push.step = step;
    push.window = window;
    push.n_sink = n_sink;
    env_.dispatch_1d(rec, p, b, &push, sizeof push, (n + 63) / 64);
}

}  // namespace vkllm::gpu
