// Session::decode_sampled: chained decode steps whose tokens are drawn on the device.
#include <algorithm>
#include <cstring>

#include "argmax/sample.h"
#include "common/error.h"
#include "engine/session.h"

namespace vkllm::engine {

void Session::write_sampling(const DeviceSamplingStep &d, size_t n) {
    if (d.rows.options.size() != n * SAMPLE_ROW_WORDS || d.history.size() != n ||
        d.draws.size() != n || d.rows.bias.empty())
        fail(VKLLM_ERR_INTERNAL, "decode_sampled: sampling rows for %zu sequences", n);
    gpu::Allocator &alloc = ctx_.allocator();
    const uint32_t cap = kDeviceSamplingHistory;
    if (!sample_options_.size()) {
        sample_options_ =
            alloc.allocate(uint64_t(opt_.n_seq) * SAMPLE_ROW_WORDS * 4, gpu::MemoryKind::Host);
        sample_history_ = alloc.allocate(uint64_t(opt_.n_seq) * cap * 4, gpu::MemoryKind::Host);
        sample_state_ = alloc.allocate(uint64_t(opt_.n_seq) * 8, gpu::MemoryKind::Host);
    }
    uint64_t bias_bytes = d.rows.bias.size() * 4;
    if (bias_bytes > sample_bias_.size()) {
        uint64_t size = 256;
        while (size < bias_bytes)
            size *= 2;
        sample_bias_ = alloc.allocate(size, gpu::MemoryKind::Host);
        recordings_.clear();  // they bound the smaller buffer
    }
    std::memcpy(sample_options_.mapped(), d.rows.options.data(), d.rows.options.size() * 4);
    std::memcpy(sample_bias_.mapped(), d.rows.bias.data(), bias_bytes);
    auto *history = static_cast<int32_t *>(sample_history_.mapped());
    auto *state = static_cast<uint32_t *>(sample_state_.mapped());
    for (size_t i = 0; i < n; ++i) {
        const std::vector<int32_t> &h = d.history[i];
        size_t from = h.size() > cap ? h.size() - cap : 0;  // the penalties see no further
        for (size_t j = from; j < h.size(); ++j)
            history[i * cap + j % cap] = h[j];
        state[2 * i] = uint32_t(h.size());
        state[2 * i + 1] = d.draws[i];
    }
}

void Session::decode_sampled(const uint32_t *seqs, const int32_t *tokens, size_t n, uint32_t steps,
                             const DeviceSamplingStep &sampling, int32_t *out,
                             const LogprobRequest *lp) {
    if (steps == 0 || steps > kMaxChainSteps)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "sampled decode of %u steps: 1 to %u are chained", steps,
             kMaxChainSteps);
    check_decode(seqs, tokens, n, steps);
    write_sampling(sampling, n);
    decode_chain(seqs, tokens, n, steps, out, lp, true);
}

}  // namespace vkllm::engine
