// Session::eval_logits: the logits or log-probabilities of chosen positions of a prompt, the
// output head run over whole prefill chunks on the device, and the buffers it grows.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/session.h"
#include "gpu/kernels/argmax.h"

namespace vkllm::engine {

using models::Act;
using models::LogitRows;

uint32_t Session::eval_chunk() const {
    uint64_t row_bytes = uint64_t(model_.config().n_vocab) * sizeof(float);
    uint64_t fit = ctx_.device().info().max_storage_buffer_range / row_bytes;
    return uint32_t(std::clamp<uint64_t>(fit, 1, opt_.n_batch));
}

void Session::ensure_logit_rows(uint32_t rows) {
    if (rows <= logit_rows_) return;
    gpu::Allocator &alloc = ctx_.allocator();
    gpu::Buffer logits = alloc.allocate(uint64_t(rows) * model_.config().n_vocab * sizeof(float),
                                        gpu::MemoryKind::Host);
    gpu::Buffer ids = alloc.allocate(uint64_t(rows) * 4, gpu::MemoryKind::Host);
    recordings_.clear();  // they bound the smaller buffers
    last_ = nullptr;
    acts_[size_t(Act::Logits)] = std::move(logits);
    ids_ = std::move(ids);
    logit_rows_ = rows;
}

void Session::ensure_logprob_rows() {
    if (logprobs_.size()) return;
    // The most rows one submission summarises: a chain of steps of every sequence, or an
    // eval_logits chunk.
    uint64_t rows = std::max<uint64_t>(uint64_t(kMaxChainSteps) * opt_.n_seq, max_rows_);
    logprobs_ = ctx_.allocator().allocate(
        rows * gpu::ArgmaxKernels::logprobs_row_words(kMaxTopLogprobs) * 4, gpu::MemoryKind::Host);
}

void Session::eval_logits(uint32_t seq, const int32_t *tokens, size_t n,
                          const std::vector<uint32_t> *positions, bool log_softmax, float *out) {
    check_prefill(seq, tokens, n);
    // (position, output row) pairs in position order: the rows each chunk copies out.
    std::vector<std::pair<uint32_t, size_t>> wanted;
    if (positions) {
        for (size_t i = 0; i < positions->size(); ++i) {
            if ((*positions)[i] >= n)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "position %u (entry %zu) is past the %zu tokens",
                     (*positions)[i], i, n);
            wanted.emplace_back((*positions)[i], i);
        }
        std::sort(wanted.begin(), wanted.end());
    } else {
        for (size_t i = 0; i < n; ++i)
            wanted.emplace_back(uint32_t(i), i);
    }
    const uint32_t chunk = eval_chunk();
    const size_t vocab = model_.config().n_vocab, ids = model_.n_tokens();
    ensure_logit_rows(chunk);
    if (log_softmax) ensure_logprob_rows();
    std::vector<RowLogprobs> lse;
    LogprobRequest lp{0, &lse};
    auto next = wanted.begin();
    for (size_t done = 0; done < n;) {
        size_t len = std::min<size_t>(chunk, n - done);
        auto end =
            std::find_if(next, wanted.end(), [&](const auto &w) { return w.first >= done + len; });
        // A chunk with no wanted row computes no logits; one that wants only its last, only
        // that row's.
        LogitRows rows =
            next == end ? LogitRows::None
            : std::all_of(next, end, [&](const auto &w) { return w.first == done + len - 1; })
                ? LogitRows::Last
                : LogitRows::All;
        Tokens t{std::vector<int32_t>(tokens + done, tokens + done + len),
                 std::vector<uint32_t>(len, seq)};
        step(t, rows, nullptr, nullptr, stats_.prefill_ms, stats_.tokens_prefilled,
             log_softmax && rows != LogitRows::None ? &lp : nullptr);
        const float *logits = static_cast<const float *>(acts_[size_t(Act::Logits)].mapped());
        for (; next != end; ++next) {
            size_t row = rows == LogitRows::Last ? 0 : next->first - done;
            const float *src = logits + row * vocab;
            float *dst = out + next->second * vocab;
            if (!log_softmax) {
                std::memcpy(dst, src, vocab * sizeof(float));
                continue;
            }
            // The padded ids past the tokenizer's are no token: probability 0.
            float sum = lse[row].lse;
            for (size_t j = 0; j < ids; ++j)
                dst[j] = src[j] - sum;
            std::fill(dst + ids, dst + vocab, -std::numeric_limits<float>::infinity());
        }
        done += len;
    }
}

}  // namespace vkllm::engine
