#include "generate_options.h"

#include <cmath>
#include <random>

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

// llama.cpp's --logit-bias: TOKEN_ID, a sign, then the bias ("15043+1", "15043-inf").
vkllm_logit_bias logit_bias_arg(const std::string &flag, const char *text) {
    std::string s = text;
    size_t sign = s.find_first_of("+-", 1);
    if (sign == std::string::npos || sign == 0)
        throw vkllm_tool::ArgError(flag + " expects ID+BIAS or ID-BIAS, not " +
                                   vkllm_tool::quoted(text));
    vkllm_logit_bias b;
    b.token = int32_t(vkllm_tool::int_arg(flag, s.substr(0, sign).c_str(), 0, INT32_MAX));
    std::string bias = s.substr(sign);
    b.bias = bias == "-inf" ? -INFINITY : vkllm_tool::float_arg(flag, bias.c_str());
    return b;
}

// A seed from the system's random source: the tool's, so that run prints it in its statistics
// and every turn of a chat draws from the same one.
uint64_t random_seed() {
    // 32 bits, as llama.cpp's seeds: short enough to type again.
    return std::random_device()();
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
                      "  --template NAME         a built-in template instead of the file's (the\n"
                      "                          names: --template help)\n"
                      "  --chat-template-file FILE\n"
                      "                          a Jinja template instead of the file's\n"
                      "  --chat-template-kwargs JSON\n"
                      "                          more template variables: '{\"enable_thinking\":\n"
                      "                          false}'\n"
                      "  --tools FILE            JSON array of tools (OpenAI function form): the\n"
                      "                          model's tool calls print as JSON lines, and the\n"
                      "                          line typed next is the tool's result\n"
                      "The model's reasoning (<think>, harmony's analysis) goes to stderr, its\n"
                      "answer to stdout.\n"
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
                      "  -s, --samples N         N samples of the prompt from one prefill (forked\n"
                      "                          on the device, generated together; seeds S,\n"
                      "                          S+1, ...), each after a \"--- sample i of N\"\n"
                      "                          line\n"
                      "  --jsonl                 print one JSON object per generated token and\n"
                      "                          nothing else: id, text (bytes that are not\n"
                      "                          UTF-8 as U+FFFD), bytes, logprob (the model's,\n"
                      "                          before temperature and penalties) and top\n"
                      "  --top-logprobs N        with --jsonl: the N most likely tokens at each\n"
                      "                          position in top, with theirs (0 to 20)\n"
                      "  --chat                  wrap the prompt in the model's chat template\n"
                      "  --system TEXT           with --chat: the system message\n"
                      "  --template NAME         with --chat: a built-in template instead of the\n"
                      "                          file's (the names: --template help)\n"
                      "  --chat-template-file FILE\n"
                      "                          with --chat: a Jinja template instead of the\n"
                      "                          file's\n"
                      "  --chat-template-kwargs JSON\n"
                      "                          with --chat: more template variables\n"
                      "  --load-session FILE     start from a state --save-session wrote (same\n"
                      "                          model, -c, -b and KV options): the tokens the\n"
                      "                          prompt shares with it are not prefilled again\n"
                      "  --save-session FILE     after the answer, save the sequence (the prompt\n"
                      "                          and the answer's tokens) to FILE\n"
                      "With --chat the reasoning goes to stderr, the answer to stdout, and tool\n"
                      "calls print as JSON lines.\n",
               out);
    std::fputs(
        "  -n, --n-predict N       tokens to generate (default: run 128, or up to the\n"
        "                          context's end under a grammar; chat to the end token\n"
        "                          or a full context; 0: prefill only)\n"
        "  --ignore-eos            generate end tokens like any other: always N tokens\n"
        "  --stop TEXT             end the answer where TEXT appears, TEXT not printed\n"
        "                          (repeatable)\n"
        "  --temp T                temperature, 0 or more (default 0.8; 0: greedy)\n"
        "  --top-k K               keep the K likeliest tokens (default 40; 0: all)\n"
        "  --top-p P               keep the likeliest tokens up to probability P, above 0 and\n"
        "                          at most 1 (default 0.95; 1: off)\n"
        "  --min-p P               drop tokens below P times the likeliest, 0 to 1 (default\n"
        "                          0.05; 0: off)\n"
        "  --repeat-penalty R      penalise recent tokens, above 0 (default 1: off)\n"
        "  --repeat-last-n N       the recent tokens the penalties look at (default 64; 0:\n"
        "                          none; -1: the whole context)\n"
        "  --presence-penalty F    subtract F from the logit of each token seen (default 0)\n"
        "  --frequency-penalty F   subtract F times its count from each token seen (default 0)\n"
        "  --typical P             locally typical sampling with mass P, above 0 and at most\n"
        "                          1 (default 1: off)\n"
        "  --logit-bias SPEC       ID+B or ID-B: add B to token ID's logit or take it away;\n"
        "                          ID-inf bans the token (repeatable)\n"
        "  --seed S                the sampler's seed (default -1: a random one, printed in\n"
        "                          the statistics; the same S gives the same answer)\n"
        "  --grammar TEXT          the answer follows this GBNF grammar (llama.cpp's format;\n"
        "                          docs/GRAMMARS.md); it ends when the grammar is finished\n"
        "  --grammar-file FILE     the GBNF grammar from a file\n"
        "  --json-schema SCHEMA    the answer is JSON valid under this JSON Schema: a file,\n"
        "                          or the schema itself when it starts with '{'\n"
        "  --json                  the answer is one JSON value, any\n"
        "                          (run prints only the answer under any of these four; an\n"
        "                          answer that stops before the grammar is finished, at -n,\n"
        "                          a full context or --stop, is reported on stderr and exits\n"
        "                          with status 3; ^C, with 130)\n"
        "  -c, --ctx-size N        context in tokens (default 0: the model's training context,\n"
        "                          at most 4096)\n"
        "  -b, --batch-size N      prefill chunk in tokens (default 64)\n"
        "  --kv-f32, --kv-q8       the KV cache in F32 or Q8_0 (default F16)\n"
        "  --context-shift         when the context is full, go on with its first tokens and\n"
        "                          the most recent ones (a streaming window); without it a\n"
        "                          full context ends the answer\n"
        "  --device N|NAME         device index or name substring (default: VKLLM_DEVICE, else\n"
        "                          the best device)\n"
        "  --validate              enable the Vulkan validation layer\n"
        "  --pipeline-cache FILE   keep compiled pipelines in FILE between runs, and use the\n"
        "                          kernel variants `vkllm tune` kept in FILE.tune\n"
        "  --verbose-prompt        print the prompt's tokens, id and text, to stderr (chat: each\n"
        "                          turn's new tokens)\n"
        "  --color                 color the prompt (run) or the typed text (chat)\n"
        "  -h, --help              this help\n",
        out);
    if (chat) std::fprintf(out, "\nline editing: %s\n", vkllm_tool::LineReader::backend());
}

// --grammar TEXT, --grammar-file FILE, --json-schema FILE|JSON, --json: one of them.
void set_constraint(Options &o, const std::string &option, const char *value) {
    if (o.constraint != Options::Constraint::None)
        throw vkllm_tool::ArgError(option + ": the output is constrained already (" +
                                   o.constraint_source +
                                   "); give one of --grammar, --grammar-file, --json-schema "
                                   "and --json");
    std::string text = value ? value : "";
    std::string source = option;
    if (option == "--grammar-file" ||
        (option == "--json-schema" && !text.empty() && text[0] != '{')) {
        std::string error;
        source = text;
        if (!vkllm_tool::read_text_file(value, text, error))
            throw vkllm_tool::ArgError(option + ": " + error);
    }
    o.constraint = option == "--grammar" || option == "--grammar-file"
                       ? Options::Constraint::Gbnf
                       : Options::Constraint::JsonSchema;
    o.constraint_text = text;
    o.constraint_source = source;
}

// Parses the options after argv[0]; false (and a message) when the command line is wrong.
bool parse_generate_options(int argc, char **argv, Options &o) try {
    const bool chat_cmd = std::string(argv[0]) == "chat";
    const char *cmd = argv[0];
    vkllm_sampling_params_init(&o.sampling);
    // Unlike the library's fixed default, two runs of the tool differ, as llama.cpp's and
    // ollama's do; the seed is printed, and --seed S repeats a run.
    o.sampling.seed = random_seed();
    vkllm_runtime_params_init(&o.runtime);
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        bool has_value = i + 1 < argc;
        auto value = [&]() { return argv[++i]; };
        // run's prompt options mean nothing to chat, which reads its turns from stdin.
        bool prompt_option = a == "-p" || a == "--prompt" || a == "-f" || a == "--file" ||
                             a == "--prompt-ids" || a == "--print-ids" || a == "--chat" ||
                             a == "--load-session" || a == "--save-session" || a == "-s" ||
                             a == "--samples" || a == "--jsonl" || a == "--top-logprobs";
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
        } else if (a == "--load-session" && has_value) {
            o.load_session = value();
        } else if (a == "--save-session" && has_value) {
            o.save_session = value();
        } else if (a == "--print-ids") {
            o.print_ids = true;
        } else if (a == "--jsonl") {
            o.jsonl = true;
        } else if ((a == "--grammar" || a == "--grammar-file" || a == "--json-schema") &&
                   has_value) {
            set_constraint(o, a, value());
        } else if (a == "--json") {
            set_constraint(o, a, nullptr);
        } else if (a == "--top-logprobs" && has_value) {
            o.top_logprobs = int32_t(vkllm_tool::int_arg(a, value(), 0, VKLLM_MAX_TOP_LOGPROBS));
        } else if (a == "--ignore-eos") {
            o.ignore_eos = true;
        } else if ((a == "-s" || a == "--samples") && has_value) {
            o.samples = uint32_t(vkllm_tool::int_arg(a, value(), 1, 256));
        } else if (a == "--chat") {
            o.chat = true;
        } else if (a == "--system" && has_value) {
            o.system = value();
        } else if (a == "--template" && has_value) {
            o.template_name = value();
        } else if (a == "--chat-template-file" && has_value) {
            std::string error;
            const char *path = value();
            if (!vkllm_tool::read_text_file(path, o.template_source, error))
                throw vkllm_tool::ArgError(a + ": " + error);
        } else if (a == "--chat-template-kwargs" && has_value) {
            o.template_kwargs = value();
        } else if (a == "--tools" && has_value && chat_cmd) {
            std::string error;
            if (!vkllm_tool::read_text_file(value(), o.tools, error))
                throw vkllm_tool::ArgError(a + ": " + error);
        } else if ((a == "-n" || a == "--n-predict") && has_value) {
            o.n_predict = uint32_t(vkllm_tool::int_arg(a, value(), 0, UINT32_MAX));
            o.n_predict_given = true;
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
            o.sampling.temperature =
                vkllm_tool::float_in(a, value(), 0, false, INFINITY, "of 0 or more (0: greedy)");
        } else if (a == "--top-k" && has_value) {
            o.sampling.top_k = int32_t(vkllm_tool::int_arg(a, value(), -1, INT32_MAX));
        } else if (a == "--top-p" && has_value) {
            o.sampling.top_p =
                vkllm_tool::float_in(a, value(), 0, true, 1, "above 0 and at most 1 (1: off)");
        } else if (a == "--min-p" && has_value) {
            o.sampling.min_p =
                vkllm_tool::float_in(a, value(), 0, false, 1, "from 0 to 1 (0: off)");
        } else if (a == "--repeat-penalty" && has_value) {
            o.sampling.repeat_penalty =
                vkllm_tool::float_in(a, value(), 0, true, INFINITY, "above 0 (1: off)");
        } else if (a == "--repeat-last-n" && has_value) {
            o.sampling.repeat_last_n = int32_t(vkllm_tool::int_arg(a, value(), -1, INT32_MAX));
        } else if (a == "--stop" && has_value) {
            o.stop.emplace_back(value());
            if (o.stop.back().empty())
                throw vkllm_tool::ArgError("--stop expects a text, not \"\"");
        } else if (a == "--verbose-prompt") {
            o.verbose_prompt = true;
        } else if (a == "--color") {
            o.color = true;
        } else if (a == "--presence-penalty" && has_value) {
            o.sampling.presence_penalty = vkllm_tool::float_arg(a, value());
        } else if (a == "--frequency-penalty" && has_value) {
            o.sampling.frequency_penalty = vkllm_tool::float_arg(a, value());
        } else if (a == "--typical" && has_value) {
            o.sampling.typical_p =
                vkllm_tool::float_in(a, value(), 0, true, 1, "above 0 and at most 1 (1: off)");
        } else if (a == "--logit-bias" && has_value) {
            o.logit_bias.push_back(logit_bias_arg(a, value()));
        } else if (a == "--seed" && has_value) {
            const char *v = value();
            o.sampling.seed = std::string(v) == "-1"
                                  ? random_seed()
                                  : vkllm_tool::uint_arg(a, v, 0, UINT64_MAX - 1);
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
    o.sampling.logit_bias = o.logit_bias.data();
    o.sampling.n_logit_bias = o.logit_bias.size();
    if (o.top_logprobs > 0 && !o.jsonl)
        throw vkllm_tool::ArgError(
            "--top-logprobs needs --jsonl (the JSON line per token; --json asks for a JSON "
            "answer)");
    if (o.samples > 1 && (!o.stop.empty() || o.jsonl || o.load_session || o.save_session))
        throw vkllm_tool::ArgError(std::string(!o.stop.empty()  ? "--stop"
                                               : o.jsonl        ? "--jsonl"
                                               : o.load_session ? "--load-session"
                                                                : "--save-session") +
                                   " does not apply to -s: the samples are generated together");
    if (o.jsonl && o.print_ids)
        throw vkllm_tool::ArgError("--jsonl and --print-ids exclude each other");
    if (o.kv_f32 && o.kv_q8) throw vkllm_tool::ArgError("--kv-f32 and --kv-q8 exclude each other");
    const char *chat_only = o.system                     ? "--system"
                            : o.template_name            ? "--template"
                            : !o.template_source.empty() ? "--chat-template-file"
                            : o.template_kwargs          ? "--chat-template-kwargs"
                                                         : nullptr;
    if (!chat_cmd && !o.chat && chat_only)
        throw vkllm_tool::ArgError(std::string(chat_only) +
                                   " applies to the chat template: add --chat");
    if (o.template_name && !o.template_source.empty())
        throw vkllm_tool::ArgError("--template and --chat-template-file exclude each other");
    return true;
} catch (const vkllm_tool::ArgError &e) {
    std::fprintf(stderr, "vkllm: %s: %s\n", argv[0], e.what());
    return false;
}

}  // namespace vkllm_tool
