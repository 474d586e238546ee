// What vkllm run and vkllm chat share: loading through the public API, tokenizing and
// templating, one streamed generation, the statistics and --verbose-prompt's listing.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "generate_options.h"
#include "reply_view.h"
#include "vkllm.h"

namespace vkllm_tool {

// llama.cpp's colors: the prompt in yellow, what the user types in bold green.
constexpr const char *kPromptColor = "\033[33m";
constexpr const char *kInputColor = "\033[1m\033[32m";
constexpr const char *kResetColor = "\033[0m";

// Runtime, model and session, released in order.
struct Loaded {
    vkllm_runtime *rt = nullptr;
    vkllm_model *model = nullptr;
    vkllm_session *session = nullptr;
    vkllm_grammar *grammar = nullptr;  // --grammar, --json-schema, ...: compiled for the model
    double load_ms = 0;
    ~Loaded() {
        vkllm_grammar_destroy(grammar);
        vkllm_session_destroy(session);
        vkllm_model_destroy(model);
        vkllm_runtime_destroy(rt);
    }
};

// Prints "vkllm: WHAT: status: message"; returns the exit status 1.
int fail_with(vkllm_status s, const char *what);
// The same with a message kept from the failed call (Stream::error).
int fail_with(vkllm_status s, const char *what, const std::string &message);
// Creates the runtime, loads the model and makes the session. `stage` says which step failed:
// the device, the model file or the session; nullptr when the message is printed already.
vkllm_status load(const Options &o, Loaded &l, const char *&stage);
std::vector<int32_t> tokenize(const vkllm_tokenizer *tok, const std::string &text, uint32_t flags,
                              vkllm_status &s);
// A turn of a conversation the tool keeps.
struct Turn {
    std::string role, content;
    bool has_content = true;  // false: an assistant turn that only calls tools (content None)
    std::string reasoning;
    std::vector<ToolCall> calls;
    std::string tool_call_id, name;  // a "tool" turn: the call it answers
};

// The conversation through --template, --chat-template-file or the model's template, with
// chat's --tools and --chat-template-kwargs; `open_answer`: end with the assistant's header.
std::string render_chat(const Options &o, const vkllm_model *model, const std::vector<Turn> &turns,
                        bool open_answer, vkllm_status &s);
// How the replies of that template mark reasoning and tool calls.
vkllm_reply_format reply_format(const Options &o, const vkllm_model *model);
// The ids of a rendered chat: special-token text parsed; the model's BOS first where it wants
// one and the template did not write it.
std::vector<int32_t> chat_ids(const vkllm_tokenizer *tok, const std::string &text, vkllm_status &s);

// The generated ids and text of one answer; the text is printed as it comes when print_text.
struct Stream {
    bool print_text = true;
    ReplyView *view = nullptr;  // a chat reply: the text goes through it, not straight out
    // --jsonl: each token's line (token_json.h), written as on_logprobs receives it.
    const vkllm_tokenizer *json = nullptr;
    std::vector<int32_t> ids;
    std::string text;
    // Pipelines compile on first use, inside the prefill or the first decode steps: generate
    // reads how long they took at the start, at the first token and at the end, so that the
    // statistics report them apart.
    const vkllm_runtime *rt = nullptr;
    double compile_at_first_token = -1;
    double compile_prefill_ms = 0, compile_decode_ms = 0;
    // A failed generation's vkllm_last_error(), kept: the calls after it (statistics, the reply
    // view's end) would clear it before it is printed.
    std::string error;
};

// SIGINT's handler: sets g_interrupted (line_reader.h), which stops an answer through the
// library's cancellation and leaves the session usable. Install it without SA_RESTART.
void on_sigint(int);
// Tokens a sequence of the session holds (-c, else the library's default).
uint32_t context_size(const Loaded &l);
// --verbose-prompt, in llama.cpp's shape: the text, the count, then each id and its piece.
void print_prompt_tokens(const vkllm_tokenizer *tok, const std::vector<int32_t> &ids);
// The most tokens an answer can have when `n_past` tokens are cached and `n_prompt` come:
// the last one is sampled but not cached, so a context with room for k more gives k + 1.
// Unlimited with --context-shift, where the window moves instead.
uint32_t answer_limit(const Options &o, const Loaded &l, size_t n_past, size_t n_prompt);
// Generates from `prompt` on sequence 0, streaming into `st` (and the compile times into it).
vkllm_status generate(const Options &o, const Loaded &l, const std::vector<int32_t> &prompt,
                      uint32_t max_tokens, Stream &st, vkllm_generate_result &r);
// run's exit status when an answer under --grammar, --json-schema or --json stops before the
// grammar is finished: the text is not valid output, and an app must not take it as such.
constexpr int kExitUnfinished = 3;
// Says so on stderr: `what` ("the answer", "sample 2 of 4") was stopped by `by` ("-n 5").
void report_unfinished(const Options &o, const std::string &by, const std::string &what);

// The load, compile, prefill and decode statistics and the seed, on stderr; the prefill and
// decode rates leave out the pipelines compiled during them.
void print_stats(const Loaded &l, const vkllm_generate_result &r, const Stream &st);
// Milliseconds the runtime has spent compiling pipelines.
double compile_ms(const vkllm_runtime *rt);

}  // namespace vkllm_tool
