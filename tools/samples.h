// vkllm run -s N: N samples of one prompt, prefilled once and forked on the device into
// sequences 1..N-1, then generated together (vkllm_session_generate_batch), each with its own seed.
#pragma once

#include <cstdint>
#include <vector>

#include "generation.h"

namespace vkllm_tool {

// Prints each sample on stdout after a "--- sample i of N (seed S) ---" line (with
// --print-ids, one line of ids each), and the statistics on stderr. Returns the exit status.
int run_samples(const Options &o, const Loaded &l, const std::vector<int32_t> &prompt,
                uint32_t max_tokens);

}  // namespace vkllm_tool
