// The options of vkllm run and vkllm chat, one set: chat takes all but run's prompt options.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "vkllm.h"

namespace vkllm_tool {

struct Options {
    const char *model = nullptr;
    std::string prompt;
    bool have_prompt = false;
    std::vector<int32_t> prompt_ids;
    bool have_ids = false;
    bool print_ids = false;
    bool json = false;         // run --json: a JSON line per token, nothing else on stdout
    int32_t top_logprobs = 0;  // run --top-logprobs
    bool ignore_eos = false;
    bool chat = false;
    const char *system = nullptr;
    const char *template_name = nullptr;
    uint32_t n_predict = 128;
    uint32_t n_ctx = 0;
    uint32_t n_batch = 0;
    bool kv_f32 = false;
    bool kv_q8 = false;
    bool context_shift = false;
    std::vector<std::string> stop;
    bool verbose_prompt = false;
    bool color = false;
    bool repeat_whole_context = false;  // --repeat-last-n -1
    vkllm_sampling_params sampling;
    vkllm_runtime_params runtime;
};

// The usage of run (chat: false) or chat (chat: true).
void generate_usage(FILE *out, bool chat);
// Parses the options after argv[0] ("run" or "chat"); false, after printing a message, when
// the command line is wrong.
bool parse_generate_options(int argc, char **argv, Options &o);

}  // namespace vkllm_tool
