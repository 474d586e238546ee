#include "reference/logprobs_ref.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ref {

double log_sum_exp(const double *row, size_t n) {
    double mx = -INFINITY;
    for (size_t i = 0; i < n; ++i)
        if (!std::isnan(row[i])) mx = std::max(mx, row[i]);
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
        if (!std::isnan(row[i])) sum += std::exp(row[i] - mx);
    return mx + std::log(sum);
}

std::vector<IdLogprob> top_logprobs(const double *row, size_t n, size_t top) {
    std::vector<int32_t> ids;
    for (size_t i = 0; i < n; ++i)
        if (!std::isnan(row[i])) ids.push_back(int32_t(i));
    std::stable_sort(ids.begin(), ids.end(),
                     [row](int32_t a, int32_t b) { return row[a] > row[b]; });
    double lse = log_sum_exp(row, n);
    std::vector<IdLogprob> out;
    for (size_t k = 0; k < top && k < ids.size(); ++k)
        out.push_back({ids[k], row[ids[k]] - lse});
    return out;
}

}  // namespace ref
