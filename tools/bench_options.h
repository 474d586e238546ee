// vkllm bench's command line: its options, their help text and their parsing.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "vkllm.h"

namespace vkllm_tool {

struct BenchOptions {
    const char *model = nullptr;
    // -p and -n take lists, as llama-bench's do: a run per pair of values. n_prompt and n_gen
    // are one run's (after parsing, the largest of each list: what the context must hold).
    std::vector<uint32_t> prompts{512}, gens{128};
    uint32_t n_prompt = 512;
    uint32_t n_gen = 128;
    uint32_t reps = 3;
    uint32_t n_ctx = 0;    // 0: n_prompt + n_gen
    uint32_t n_batch = 0;  // 0: the library's default
    bool kv_cache = true;
    bool record_every_step = false;
    bool json = false;
    bool warm_up = true;
    bool profile = false;
    uint32_t n_seq = 1;    // sequences decoded together
    uint32_t chain = 0;    // greedy steps per submission (0: one step, logits read back)
    bool fork = false;     // sequences after the first get the prompt by vkllm_session_fork
    bool restore = false;  // the prompt but its last token comes from a saved state
    vkllm_runtime_params runtime;
};

// Prints bench's help text.
void bench_usage(FILE *out);

// Fills `o` from argv; on a bad argument prints why on stderr and returns false.
bool parse_bench_options(int argc, char **argv, BenchOptions &o);

}  // namespace vkllm_tool
