// CPU reference (double precision) for log-probabilities: the log-softmax of a row of logits
// over its first n values (the tokenizer's ids) and its most likely ids, as the logprobs kernel
// and the C API's log-softmax outputs define them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ref {

// log(sum of exp) over the first n values of `row`, NaNs skipped.
double log_sum_exp(const double *row, size_t n);

struct IdLogprob {
    int32_t id;
    double logprob;
};

// The `top` largest of the first n values (NaNs skipped) as (id, value - lse), largest first,
// the lowest id first on ties; fewer when fewer remain.
std::vector<IdLogprob> top_logprobs(const double *row, size_t n, size_t top);

}  // namespace ref
