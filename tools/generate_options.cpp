#include "generate_options.h"

#include "cli_args.h"
#include "line_reader.h"
#include "text_file.h"

namespace vkllm_tool {

namespace {

// The prompt from a file ("-": stdin), as llama.cpp's -f reads it: the bytes as they are but
// one final newline, which an editor adds and a prompt rarely means.
std::string read_prompt_file(const char *path) {
    std::string prompt, error;
    if (!vkllm_tool::read_text_file(path, prompt, error))
        throw vkllm_tool::ArgError("-f: " + error);
    if (!prompt.empty() && prompt.back() == '\n') prompt.pop_back();
    return prompt;
}

}  // namespace

// The options of run (chat: false) and chat (chat: true); the prompt options are run's only.
void generate_usage(FILE *out, bool chat) {
    std::fputs(chat ? "usage: vkllm chat -m FILE [options]\n"
                      "talk with a chat model through its chat template, one line per turn; the\n"
                      "KV cache is kept, each turn prefills only its new tokens. ^C stops an\n"
                      "answer; ^C at the prompt, ^D or /exit quits; /reset starts over, /system\n"
                      "TEXT starts over with a new system message; a line ending in \\ goes on\n"
                      "to the next. At a terminal, lines are edited with the arrow keys and the\n"
                      "up arrow recalls earlier ones (with libedit or readline, if the build\n"
                      "found one: the end of this help says which)\n"
                      "\n"
                      "  -m, --model FILE        the GGUF model\n"
                      "  --system TEXT           the system message\n"
                      "  --template NAME         chatml, llama3 or harmony instead of the file's\n"
                      "                          template\n"
                    : "usage: vkllm run -m FILE (-p TEXT | -f FILE | --prompt-ids IDS) [options]\n"
                      "       vkllm run -m FILE [options] < PROMPT\n"
                      "generate text from a prompt: the prompt and the text on stdout,\n"
                      "statistics on stderr. Without a prompt option the prompt is stdin,\n"
                      "unless it is a terminal. -n 0 only prefills the prompt. ^C stops the\n"
                      "answer (exit status 130, after the statistics)\n"
                      "\n"
                      "  -m, --model FILE        the GGUF model\n"
                      "  -p, --prompt TEXT       the prompt\n"
                      "  -f, --file FILE         the prompt from a file, - for stdin (its final\n"
                      "                          newline dropped, as llama.cpp's -f does)\n"
                      "  --prompt-ids IDS        the prompt as token ids: 1,2,3\n"
                      "  --print-ids             print the generated ids, not the text\n"
                      "  --json                  print one JSON object per generated token and\n"
                      "                          nothing else: id, text (bytes that are not\n"
                      "                          UTF-8 as U+FFFD), bytes, logprob (the model's,\n"
                      "                          before temperature and penalties) and top\n"
                      "  --top-logprobs N        with --json: the N most likely tokens at each\n"
                      "                          position in top, with theirs (0 to 20)\n"
                      "  --chat                  wrap the prompt in the model's chat template\n"
                      "  --system TEXT           with --chat: the system message\n"
                      "  --template NAME         with --chat: chatml, llama3 or harmony instead\n"
                      "                          of the file's template\n",
               out);
    std::fputs(
        "  -n, --n-predict N       tokens to generate (default 128; 0: prefill only)\n"
        "  --ignore-eos            generate end tokens like any other: always N tokens\n"
        "  --stop TEXT             end the answer where TEXT appears, TEXT not printed\n"
        "                          (repeatable)\n"
        "  --temp T                temperature (default 0.8; 0: greedy)\n"
        "  --top-k K               keep the K likeliest tokens (default 40; 0: all)\n"
        "  --top-p P               keep the likeliest tokens up to probability P (default 0.95)\n"
        "  --min-p P               drop tokens below P times the likeliest (default 0.05)\n"
        "  --repeat-penalty R      penalise recent tokens (default 1: off)\n"
        "  --repeat-last-n N       the recent tokens it looks at (default 64; 0: none; -1:\n"
        "                          the whole context)\n"
        "  --seed S                the sampler's seed (default 0)\n"
        "  -c, --ctx-size N        context in tokens (default 0: the model's training context)\n"
        "  -b, --batch-size N      prefill chunk in tokens (default 64)\n"
        "  --kv-f32, --kv-q8       the KV cache in F32 or Q8_0 (default F16)\n"
        "  --context-shift         when the context is full, go on with its first tokens and\n"
        "                          the most recent ones (a streaming window); without it a\n"
        "                          full context ends the answer\n"
        "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
        "                          the best device)\n"
        "  --validate              enable the Vulkan validation layer\n"
        "  --pipeline-cache FILE   keep compiled pipelines in FILE between runs\n"
        "  --verbose-prompt        print the prompt's tokens, id and text, to stderr (chat: each\n"
        "                          turn's new tokens)\n"
        "  --color                 color the prompt (run) or the typed text (chat)\n"
        "  -h, --help              this help\n",
        out);
    if (chat) std::fprintf(out, "\nline editing: %s\n", vkllm_tool::LineReader::backend());
}

// Parses the options after argv[0]; false (and a message) when the command line is wrong.
bool parse_generate_options(int argc, char **argv, Options &o) try {
    const bool chat_cmd = std::string(argv[0]) == "chat";
    const char *cmd = argv[0];
    vkllm_sampling_params_init(&o.sampling);
    vkllm_runtime_params_init(&o.runtime);
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        auto value = [&]() { return argv[++i]; };
        // run's prompt options mean nothing to chat, which reads its turns from stdin.
        bool prompt_option = a == "-p" || a == "--prompt" || a == "-f" || a == "--file" ||
                             a == "--prompt-ids" || a == "--print-ids" || a == "--chat" ||
                             a == "--json" || a == "--top-logprobs";
        if (chat_cmd && prompt_option)
            throw vkllm_tool::ArgError(a +
                                       " is an option of vkllm run; chat reads its turns "
                                       "from stdin");
        if ((a == "-m" || a == "--model") && has_value) {
            o.model = value();
        } else if ((a == "-p" || a == "--prompt") && has_value) {
            o.prompt = value();
            o.have_prompt = true;
        } else if ((a == "-f" || a == "--file") && has_value) {
            o.prompt = read_prompt_file(value());
            o.have_prompt = true;
        } else if (a == "--prompt-ids" && has_value) {
            o.prompt_ids = vkllm_tool::ids_arg(a, value());
            o.have_ids = true;
        } else if (a == "--print-ids") {
            o.print_ids = true;
        } else if (a == "--json") {
            o.json = true;
        } else if (a == "--top-logprobs" && has_value) {
            o.top_logprobs = int32_t(vkllm_tool::int_arg(a, value(), 0, VKLLM_MAX_TOP_LOGPROBS));
        } else if (a == "--ignore-eos") {
            o.ignore_eos = true;
        } else if (a == "--chat") {
            o.chat = true;
        } else if (a == "--system" && has_value) {
            o.system = value();
        } else if (a == "--template" && has_value) {
            o.template_name = value();
        } else if ((a == "-n" || a == "--n-predict") && has_value) {
            o.n_predict = uint32_t(vkllm_tool::int_arg(a, value(), 0, UINT32_MAX));
        } else if ((a == "-c" || a == "--ctx-size") && has_value) {
            o.n_ctx = uint32_t(vkllm_tool::int_arg(a, value(), 0, UINT32_MAX));
        } else if ((a == "-b" || a == "--batch-size") && has_value) {
            o.n_batch = uint32_t(vkllm_tool::int_arg(a, value(), 1, UINT32_MAX));
        } else if (a == "--kv-f32") {
            o.kv_f32 = true;
        } else if (a == "--kv-q8") {
            o.kv_q8 = true;
        } else if (a == "--context-shift") {
            o.context_shift = true;
        } else if (a == "--temp" && has_value) {
            o.sampling.temperature = vkllm_tool::float_arg(a, value());
        } else if (a == "--top-k" && has_value) {
            o.sampling.top_k = int32_t(vkllm_tool::int_arg(a, value(), INT32_MIN, INT32_MAX));
        } else if (a == "--top-p" && has_value) {
            o.sampling.top_p = vkllm_tool::float_arg(a, value());
        } else if (a == "--min-p" && has_value) {
            o.sampling.min_p = vkllm_tool::float_arg(a, value());
        } else if (a == "--repeat-penalty" && has_value) {
            o.sampling.repeat_penalty = vkllm_tool::float_arg(a, value());
        } else if (a == "--repeat-last-n" && has_value) {
            o.sampling.repeat_last_n = int32_t(vkllm_tool::int_arg(a, value(), -1, INT32_MAX));
            o.repeat_whole_context = o.sampling.repeat_last_n == -1;
        } else if (a == "--stop" && has_value) {
            o.stop.emplace_back(value());
            if (o.stop.back().empty())
                throw vkllm_tool::ArgError("--stop expects a text, not \"\"");
        } else if (a == "--verbose-prompt") {
            o.verbose_prompt = true;
        } else if (a == "--color") {
            o.color = true;
        } else if (a == "--seed" && has_value) {
            o.sampling.seed = vkllm_tool::uint_arg(a, value(), 0, UINT64_MAX);
        } else if (a == "--device" && has_value) {
            vkllm_tool::device_arg(value(), o.runtime);
        } else if (a == "--validate") {
            o.runtime.flags |= VKLLM_RUNTIME_VALIDATION;
        } else if (a == "--pipeline-cache" && has_value) {
            o.runtime.pipeline_cache_path = value();
        } else if (a.empty() || a[0] != '-') {
            throw vkllm_tool::ArgError("unexpected argument " + vkllm_tool::quoted(a.c_str()) +
                                       (chat_cmd ? "" : " (a prompt goes after -p)"));
        } else if (has_value) {
            throw vkllm_tool::ArgError("unknown option " + a + " (vkllm " + cmd +
                                       " --help lists the options)");
        } else {
            throw vkllm_tool::ArgError(a + " is missing its value, or is not an option of vkllm " +
                                       cmd);
        }
    }
    if (!o.model) throw vkllm_tool::ArgError("-m MODEL is required");
    if (o.top_logprobs > 0 && !o.json) throw vkllm_tool::ArgError("--top-logprobs needs --json");
    if (o.json && o.print_ids)
        throw vkllm_tool::ArgError("--json and --print-ids exclude each other");
    if (o.kv_f32 && o.kv_q8) throw vkllm_tool::ArgError("--kv-f32 and --kv-q8 exclude each other");
    if (!chat_cmd && !o.chat && (o.system || o.template_name))
        throw vkllm_tool::ArgError(std::string(o.system ? "--system" : "--template") +
                                   " applies to the chat template: add --chat");
    return true;
} catch (const vkllm_tool::ArgError &e) {
    std::fprintf(stderr, "vkllm: %s: %s\n", argv[0], e.what());
    return false;
}

}  // namespace vkllm_tool
