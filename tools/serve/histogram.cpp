#include "histogram.h"

#include <algorithm>

namespace serve {

Histogram make_histogram(std::vector<double> bounds) {
    Histogram h;
    h.bounds = std::move(bounds);
    h.counts.assign(h.bounds.size() + 1, 0);
    return h;
}

void observe(Histogram &h, double value) {
    size_t i = size_t(std::lower_bound(h.bounds.begin(), h.bounds.end(), value) - h.bounds.begin());
    ++h.counts[i];
    h.sum += value;
    ++h.count;
}

Histogram time_to_first_token_histogram() {
    return make_histogram({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
}

Histogram time_per_token_histogram() {
    return make_histogram({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10});
}

}  // namespace serve
