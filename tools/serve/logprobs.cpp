#include "logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace serve {

std::string token_piece(const vkllm_tokenizer *tokenizer, int32_t token) {
    std::string piece(64, '\0');
    size_t length = 0;
    vkllm_status s =
        vkllm_tokenizer_get_piece(tokenizer, token, 0, piece.data(), piece.size(), &length);
    if (s == VKLLM_ERR_BUFFER_TOO_SMALL) {
        piece.resize(length + 1);
        s = vkllm_tokenizer_get_piece(tokenizer, token, 0, piece.data(), piece.size(), &length);
    }
    if (s != VKLLM_OK) return {};
    piece.resize(length);
    return piece;
}

TokenLogprob token_logprob(const vkllm_tokenizer *tokenizer, const float *row, size_t n_vocab,
                           int32_t token, int32_t n_top) {
    double max = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n_vocab; ++i)
        if (!std::isnan(row[i])) max = std::max(max, double(row[i]));
    double sum = 0;
    for (size_t i = 0; i < n_vocab; ++i)
        if (!std::isnan(row[i])) sum += std::exp(double(row[i]) - max);
    const double lse = max + std::log(sum);
    auto logprob = [&](size_t i) {
        return std::isnan(row[i]) ? -std::numeric_limits<float>::infinity()
                                  : float(double(row[i]) - lse);
    };

    TokenLogprob out;
    out.token = token;
    out.bytes = token_piece(tokenizer, token);
    out.logprob = token >= 0 && size_t(token) < n_vocab ? logprob(size_t(token))
                                                        : -std::numeric_limits<float>::infinity();
    if (n_top > 0) {
        std::vector<int32_t> ids;
        ids.reserve(n_vocab);
        for (size_t i = 0; i < n_vocab; ++i)
            if (!std::isnan(row[i])) ids.push_back(int32_t(i));
        const size_t k = std::min(ids.size(), size_t(n_top));
        std::partial_sort(
            ids.begin(), ids.begin() + std::ptrdiff_t(k), ids.end(),
            [&](int32_t a, int32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
        for (size_t i = 0; i < k; ++i)
            out.top.push_back({ids[i], logprob(size_t(ids[i]))});
    }
    return out;
}

}  // namespace serve
