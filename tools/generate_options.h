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
    bool jsonl = false;        // run --jsonl: a JSON line per token, nothing else on stdout
    int32_t top_logprobs = 0;  // run --top-logprobs
    bool ignore_eos = false;
    bool chat = false;
    const char *system = nullptr;
    const char *template_name = nullptr;
    std::string template_source;            // --chat-template-file's text
    const char *template_kwargs = nullptr;  // JSON object of extra template variables
    std::string tools;                      // chat --tools: the JSON array of tools
    uint32_t n_predict = 128;
    bool n_predict_given = false;  // -n on the command line (run's grammars default to all)
    uint32_t n_ctx = 0;
    uint32_t n_batch = 0;
    bool kv_f32 = false;
    bool kv_q8 = false;
    bool context_shift = false;
    std::vector<std::string> stop;
    bool verbose_prompt = false;
    bool color = false;
    uint32_t samples = 1;                // run -s: samples of the prompt, from one prefill
    const char *load_session = nullptr;  // run: start from this saved state
    const char *save_session = nullptr;  // run: save the sequence here at the end
    // The constraint on generated text: GBNF text or a JSON Schema, and where it came from (a
    // file name, or the option that gave it) for error messages.
    enum class Constraint { None, Gbnf, JsonSchema } constraint = Constraint::None;
    std::string constraint_text;
    std::string constraint_source;
    vkllm_sampling_params sampling;  // its logit_bias points into logit_bias
    std::vector<vkllm_logit_bias> logit_bias;
    vkllm_runtime_params runtime;
};

// The usage of run (chat: false) or chat (chat: true).
void generate_usage(FILE *out, bool chat);
// Parses the options after argv[0] ("run" or "chat"); false, after printing a message, when
// the command line is wrong.
bool parse_generate_options(int argc, char **argv, Options &o);

}  // namespace vkllm_tool
