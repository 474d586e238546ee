#include "engine/logprobs.h"

#include <cstring>
#include <limits>

#include "gpu/kernels/argmax.h"

namespace vkllm::engine {

static_assert(kMaxTopLogprobs == gpu::ArgmaxKernels::kMaxTop,
              "the C API's most alternatives are what the kernel reports");

std::vector<RowLogprobs> read_logprob_rows(const void *words, uint32_t rows, uint32_t top) {
    const auto *w = static_cast<const uint32_t *>(words);
    uint32_t stride = gpu::ArgmaxKernels::logprobs_row_words(top);
    std::vector<RowLogprobs> out(rows);
    for (uint32_t r = 0; r < rows; ++r) {
        const uint32_t *row = w + size_t(r) * stride;
        std::memcpy(&out[r].max, &row[0], 4);
        std::memcpy(&out[r].lse, &row[1], 4);
        for (uint32_t k = 0; k < top; ++k) {
            TokenLogprob t;
            std::memcpy(&t.token, &row[2 + 2 * k], 4);
            std::memcpy(&t.logprob, &row[3 + 2 * k], 4);
            if (t.token < 0) break;  // fewer ids than asked for; only padding follows
            out[r].top.push_back(t);
        }
    }
    return out;
}

void TokenLogprobs::keep_raw(const float *logits, size_t n) {
    if (on_) raw_.assign(logits, logits + n);
}

float TokenLogprobs::logprob(int32_t token, size_t row) const {
    const RowLogprobs &r = rows_.at(row);
    for (const TokenLogprob &t : r.top)
        if (t.token == token) return t.logprob;
    // A sampled token outside the most likely: sampling read the logits, so they were kept.
    if (size_t(token) < raw_.size()) return raw_[size_t(token)] - r.lse;
    return std::numeric_limits<float>::quiet_NaN();  // a row without numbers has no distribution
}

std::vector<TokenLogprob> TokenLogprobs::top(size_t row) const {
    const std::vector<TokenLogprob> &all = rows_.at(row).top;
    return std::vector<TokenLogprob>(all.begin(), all.begin() + std::min<size_t>(top_, all.size()));
}

}  // namespace vkllm::engine
