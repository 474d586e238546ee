// vkllm run and vkllm chat: text generation from the command line, through the public API.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "line_reader.h"
#include "text_file.h"
#include "vkllm.h"

namespace {

struct Options {
    const char *model = nullptr;
    std::string prompt;
    bool have_prompt = false;
    std::vector<int32_t> prompt_ids;
    bool have_ids = false;
    bool print_ids = false;
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

// llama.cpp's colors: the prompt in yellow, what the user types in bold green.
constexpr const char *kPromptColor = "\033[33m";
constexpr const char *kInputColor = "\033[1m\033[32m";
constexpr const char *kResetColor = "\033[0m";

// The prompt from a file ("-": stdin), as llama.cpp's -f reads it: the bytes as they are but
// one final newline, which an editor adds and a prompt rarely means.
std::string read_prompt_file(const char *path) {
    std::string prompt, error;
    if (!vkllm_tool::read_text_file(path, prompt, error))
        throw vkllm_tool::ArgError("-f: " + error);
    if (!prompt.empty() && prompt.back() == '\n') prompt.pop_back();
    return prompt;
}

int fail_with(vkllm_status s, const char *what) {
    std::fprintf(stderr, "vkllm: %s: %s: %s\n", what, vkllm_status_string(s), vkllm_last_error());
    return 1;
}

// The options of run (chat: false) and chat (chat: true); the prompt options are run's only.
void usage(FILE *out, bool chat) {
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
bool parse(int argc, char **argv, Options &o) try {
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
                             a == "--prompt-ids" || a == "--print-ids" || a == "--chat";
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
    if (o.kv_f32 && o.kv_q8) throw vkllm_tool::ArgError("--kv-f32 and --kv-q8 exclude each other");
    if (!chat_cmd && !o.chat && (o.system || o.template_name))
        throw vkllm_tool::ArgError(std::string(o.system ? "--system" : "--template") +
                                   " applies to the chat template: add --chat");
    return true;
} catch (const vkllm_tool::ArgError &e) {
    std::fprintf(stderr, "vkllm: %s: %s\n", argv[0], e.what());
    return false;
}

int32_t progress_bar(void *, float p) {
    int width = 40, done = int(p * float(width) + 0.5f);
    std::fprintf(stderr, "\rloading [%.*s%*s] %3d%%", done,
                 "########################################", width - done, "",
                 int(p * 100.0f + 0.5f));
    if (p >= 1.0f) std::fprintf(stderr, "\n");
    return 0;
}

// Runtime, model and session, released in order.
struct Loaded {
    vkllm_runtime *rt = nullptr;
    vkllm_model *model = nullptr;
    vkllm_session *session = nullptr;
    double load_ms = 0;
    ~Loaded() {
        vkllm_session_destroy(session);
        vkllm_model_destroy(model);
        vkllm_runtime_destroy(rt);
    }
};

// `stage` says which step failed: the device, the model file or the session; nullptr when
// the message is printed already.
vkllm_status load(const Options &o, Loaded &l, const char *&stage) {
    auto t0 = std::chrono::steady_clock::now();
    stage = "opening the device";
    vkllm_status s = vkllm_runtime_create(&o.runtime, &l.rt);
    if (s != VKLLM_OK) return s;
    stage = "loading the model";
    vkllm_model_params mp;
    vkllm_model_params_init(&mp);
    if (isatty(STDERR_FILENO)) mp.progress = progress_bar;
    s = vkllm_model_load(l.rt, o.model, &mp, &l.model);
    if (s != VKLLM_OK) return s;
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    vkllm_model_get_info(l.model, &mi);
    if (o.n_ctx > mi.n_ctx_train) {
        std::fprintf(stderr,
                     "vkllm: -c %u is more than the %u positions the model was trained for\n",
                     o.n_ctx, mi.n_ctx_train);
        stage = nullptr;
        return VKLLM_ERR_INVALID_ARGUMENT;
    }
    l.load_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_ctx = o.n_ctx;
    if (o.n_batch) sp.n_batch = o.n_batch;
    if (o.kv_f32) sp.flags |= VKLLM_SESSION_KV_F32;
    if (o.kv_q8) sp.flags |= VKLLM_SESSION_KV_Q8_0;
    if (o.context_shift) sp.flags |= VKLLM_SESSION_STREAMING;
    stage = "creating the session";
    return vkllm_session_create(l.model, &sp, &l.session);
}

std::vector<int32_t> tokenize(const vkllm_tokenizer *tok, const std::string &text, uint32_t flags,
                              vkllm_status &s) {
    size_t n = 0;
    vkllm_tokenize(tok, text.data(), text.size(), flags, nullptr, 0, &n);
    std::vector<int32_t> ids(n);
    s = vkllm_tokenize(tok, text.data(), text.size(), flags, ids.data(), ids.size(), &n);
    return ids;
}

// `open_answer`: end with the assistant's header, for the model to answer after.
std::string apply_template(const Options &o, const vkllm_model *model,
                           const std::vector<vkllm_chat_message> &messages, vkllm_status &s,
                           int32_t open_answer = 1) {
    const char *tmpl = vkllm_model_chat_template(model);
    size_t len = 0;
    s = vkllm_chat_apply_template(o.template_name, tmpl, messages.data(), messages.size(),
                                  open_answer, nullptr, 0, &len);
    if (s != VKLLM_ERR_BUFFER_TOO_SMALL) return std::string();
    std::vector<char> buf(len + 1);
    s = vkllm_chat_apply_template(o.template_name, tmpl, messages.data(), messages.size(),
                                  open_answer, buf.data(), buf.size(), &len);
    return std::string(buf.data(), len);
}

// vkllm_tool::g_interrupted is set by the SIGINT handler (the only thing it does); the
// callbacks below then stop the answer through the library's cancellation, which leaves the
// session usable.
using vkllm_tool::g_interrupted;

struct Stream {
    bool print_text = true;
    std::vector<int32_t> ids;
    std::string text;
};

int32_t on_token(void *user, int32_t token, const char *text, size_t length) {
    auto *st = static_cast<Stream *>(user);
    if (token >= 0) st->ids.push_back(token);
    st->text.append(text, length);
    if (st->print_text) {
        std::fwrite(text, 1, length, stdout);
        std::fflush(stdout);
    }
    return g_interrupted ? 1 : 0;
}

int32_t on_prefill(void *, size_t, size_t) {
    return g_interrupted ? 1 : 0;
}

void on_sigint(int) {
    g_interrupted = 1;
}

// Tokens a sequence holds: -c, else the model's training context (the session's default).
uint32_t context_size(const Options &o, const Loaded &l) {
    if (o.n_ctx) return o.n_ctx;
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    vkllm_model_get_info(l.model, &mi);
    return mi.n_ctx_train;
}

// --verbose-prompt, in llama.cpp's shape: the text, the count, then each id and its piece.
// Pieces are printed as they are, bytes of a partial UTF-8 character included.
void print_prompt_tokens(const vkllm_tokenizer *tok, const std::vector<int32_t> &ids) {
    std::vector<char> buf;
    auto text = [&](auto &&fill) {
        size_t len = 0;
        fill(static_cast<char *>(nullptr), size_t(0), &len);
        buf.resize(len + 1);
        return fill(buf.data(), buf.size(), &len) == VKLLM_OK ? std::string(buf.data(), len)
                                                              : std::string("?");
    };
    std::string all = text([&](char *out, size_t cap, size_t *len) {
        return vkllm_detokenize(tok, ids.data(), ids.size(), VKLLM_DETOKENIZE_SPECIAL, out, cap,
                                len);
    });
    std::fprintf(stderr, "prompt: '%s'\nnumber of tokens in prompt = %zu\n", all.c_str(),
                 ids.size());
    for (int32_t id : ids) {
        std::string piece = text([&](char *out, size_t cap, size_t *len) {
            return vkllm_token_to_piece(tok, id, VKLLM_DETOKENIZE_SPECIAL, out, cap, len);
        });
        std::fprintf(stderr, "%6d -> '%s'\n", id, piece.c_str());
    }
}

// The most tokens an answer can have when `n_past` tokens are cached and `n_prompt` come:
// the last one is sampled but not cached, so a context with room for k more gives k + 1.
// Unlimited with --context-shift, where the window moves instead.
uint32_t answer_limit(const Options &o, const Loaded &l, size_t n_past, size_t n_prompt) {
    if (o.context_shift) return o.n_predict;
    uint64_t room = uint64_t(context_size(o, l)) - n_past - n_prompt + 1;
    return uint32_t(std::min<uint64_t>(o.n_predict, room));
}

// Generates from `prompt` on sequence 0, streaming into `st`.
vkllm_status generate(const Options &o, const Loaded &l, const std::vector<int32_t> &prompt,
                      uint32_t max_tokens, Stream &st, vkllm_generate_result &r) {
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = max_tokens;
    std::vector<const char *> stop;
    for (const std::string &text : o.stop)
        stop.push_back(text.c_str());
    gp.stop = stop.data();
    gp.n_stop = stop.size();
    gp.ignore_eog = o.ignore_eos ? 1 : 0;
    gp.on_token = on_token;
    gp.on_prefill = on_prefill;
    gp.user_data = &st;
    r.struct_size = sizeof r;
    return vkllm_generate(l.session, prompt.data(), prompt.size(), &o.sampling, &gp, &r);
}

void print_stats(const Loaded &l, const vkllm_generate_result &r) {
    vkllm_session_stats st;
    st.struct_size = sizeof st;
    vkllm_session_get_stats(l.session, &st);
    vkllm_device_info d;
    d.struct_size = sizeof d;
    vkllm_runtime_device_info(l.rt, &d);
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    vkllm_model_get_info(l.model, &mi);
    vkllm_runtime_stats rs;
    rs.struct_size = sizeof rs;
    vkllm_runtime_stats_get(l.rt, &rs);
    std::fprintf(stderr,
                 "\n[%s] weights %.1f MiB on the device for %.1f MiB of tensor data; device "
                 "memory allocated %.1f MiB (KV cache %.1f MiB)",
                 d.name, double(mi.device_bytes) / 1048576.0, double(mi.tensor_bytes) / 1048576.0,
                 double(rs.device_memory_allocated) / 1048576.0,
                 double(st.kv_cache_bytes) / 1048576.0);
    std::fprintf(stderr,
                 "\n[%s] load %.0f ms | prefill %zu tokens %.1f tok/s | decode %zu tokens %.1f "
                 "tok/s | command buffers recorded %llu, submits %llu\n",
                 d.name, l.load_ms, r.n_prompt,
                 r.prefill_ms > 0 ? 1000.0 * double(r.n_prompt) / r.prefill_ms : 0.0, r.n_generated,
                 r.decode_ms > 0 ? 1000.0 * double(r.n_generated) / r.decode_ms : 0.0,
                 (unsigned long long)st.command_buffers_recorded, (unsigned long long)st.submits);
}

}  // namespace

int cmd_run(int argc, char **argv) {
    Options o;
    if (vkllm_tool::wants_help(argc, argv)) {
        usage(stdout, false);
        return 0;
    }
    if (!parse(argc, argv, o)) return 2;
    if (!o.have_prompt && !o.have_ids) {
        if (isatty(STDIN_FILENO)) {
            std::fprintf(stderr,
                         "vkllm: run: -p TEXT, -f FILE, --prompt-ids IDS or a prompt on stdin "
                         "is required\n");
            return 2;
        }
        std::string error;
        if (!vkllm_tool::read_text_file("-", o.prompt, error)) {
            std::fprintf(stderr, "vkllm: run: %s\n", error.c_str());
            return 1;
        }
        if (!o.prompt.empty() && o.prompt.back() == '\n') o.prompt.pop_back();
    }
    Loaded l;
    const char *stage = nullptr;
    vkllm_status s = load(o, l, stage);
    if (s != VKLLM_OK) return stage ? fail_with(s, stage) : 1;
    if (o.repeat_whole_context) o.sampling.repeat_last_n = int32_t(context_size(o, l));
    const vkllm_tokenizer *tok = vkllm_model_tokenizer(l.model);
    std::vector<int32_t> prompt = o.prompt_ids;
    if (!o.have_ids) {
        std::string text = o.prompt;
        if (o.chat) {
            std::vector<vkllm_chat_message> msgs;
            if (o.system) msgs.push_back({"system", o.system});
            msgs.push_back({"user", o.prompt.c_str()});
            text = apply_template(o, l.model, msgs, s);
            if (s != VKLLM_OK) return fail_with(s, "applying the chat template");
        }
        prompt = tokenize(tok, text, VKLLM_TOKENIZE_ADD_SPECIAL | VKLLM_TOKENIZE_PARSE_SPECIAL, s);
        if (s != VKLLM_OK) return fail_with(s, "tokenizing");
    }
    if (o.verbose_prompt) print_prompt_tokens(tok, prompt);
    if (!o.have_ids && !o.chat && !o.print_ids) {
        if (o.color) std::fputs(kPromptColor, stdout);
        std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
        if (o.color) std::fputs(kResetColor, stdout);
    }
    uint32_t n_ctx = context_size(o, l);
    if (!o.context_shift && prompt.size() > n_ctx) {
        std::fprintf(stderr,
                     "vkllm: run: the prompt's %zu tokens do not fit the context of %u (-c)\n",
                     prompt.size(), n_ctx);
        return 1;
    }
    uint32_t limit = answer_limit(o, l, 0, prompt.size());
    Stream st;
    st.print_text = !o.print_ids;
    vkllm_generate_result r;
    std::signal(SIGINT, on_sigint);
    s = generate(o, l, prompt, limit, st, r);
    std::signal(SIGINT, SIG_DFL);
    if (s != VKLLM_OK && s != VKLLM_ERR_CANCELLED) return fail_with(s, "generating");
    if (o.print_ids) {
        for (size_t i = 0; i < st.ids.size(); ++i)
            std::printf("%s%d", i ? "," : "", st.ids[i]);
        std::printf("\n");
    } else {
        std::printf("\n");
    }
    print_stats(l, r);
    if (s == VKLLM_ERR_CANCELLED) {
        std::fprintf(stderr, "vkllm: run: stopped by ^C after %zu tokens\n", r.n_generated);
        return 130;
    }
    if (limit < o.n_predict && r.stop_reason == VKLLM_STOP_MAX_TOKENS)
        std::fprintf(stderr,
                     "vkllm: run: the context of %u tokens is full; the answer ends after %zu "
                     "tokens (a larger -c, or --context-shift, goes on)\n",
                     n_ctx, r.n_generated);
    return 0;
}

namespace {

// One turn of input: lines that end with a backslash go on to the next line. False at the
// end of input or when ^C interrupts the read.
bool read_turn(vkllm_tool::LineReader &in, bool interactive, std::string &turn) {
    turn.clear();
    for (std::string line;;) {
        if (!in.read(!interactive ? "" : turn.empty() ? "> " : "... ", line)) return false;
        in.remember(line);
        if (line.empty() || line.back() != '\\') return turn += line, true;
        line.pop_back();
        turn += line + "\n";
    }
}

struct Conversation {
    std::string system;
    std::vector<std::string> roles, contents;
    std::vector<int32_t> cached;  // the tokens in sequence 0's cache

    void reset(vkllm_session *session) {
        roles.clear();
        contents.clear();
        if (!system.empty()) roles.push_back("system"), contents.push_back(system);
        cached.clear();
        vkllm_session_truncate(session, 0, 0);
    }
};

}  // namespace

// Each turn renders the whole conversation, keeps the cached tokens it shares with what the
// session already holds, and prefills only the rest.
int cmd_chat(int argc, char **argv) {
    Options o;
    if (vkllm_tool::wants_help(argc, argv)) {
        usage(stdout, true);
        return 0;
    }
    if (!parse(argc, argv, o)) return 2;
    Loaded l;
    const char *stage = nullptr;
    vkllm_status s = load(o, l, stage);
    if (s != VKLLM_OK) return stage ? fail_with(s, stage) : 1;
    if (o.repeat_whole_context) o.sampling.repeat_last_n = int32_t(context_size(o, l));
    const vkllm_tokenizer *tok = vkllm_model_tokenizer(l.model);
    // No SA_RESTART: ^C at the prompt ends the read, and quits.
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    const uint32_t n_ctx = context_size(o, l);
    Conversation c;
    if (o.system) c.system = o.system;
    c.reset(l.session);
    bool interactive = isatty(STDIN_FILENO);
    vkllm_tool::LineReader input(interactive, interactive && o.color ? kInputColor : "");
    for (std::string line;;) {
        g_interrupted = 0;
        if (!read_turn(input, interactive, line) || line == "/exit") break;
        if (line.empty()) continue;
        if (line == "/reset" || line == "/system" || line.rfind("/system ", 0) == 0) {
            if (line != "/reset") c.system = line.size() > 8 ? line.substr(8) : "";
            c.reset(l.session);
            std::fprintf(stderr, "[the conversation starts over%s]\n",
                         c.system.empty() ? "" : ", with the system message");
            continue;
        }
        if (line[0] == '/') {
            std::fprintf(stderr,
                         "[commands: /reset, /system TEXT, /exit; a line ending in \\ "
                         "goes on to the next]\n");
            continue;
        }
        c.roles.push_back("user");
        c.contents.push_back(line);
        std::vector<vkllm_chat_message> msgs;
        for (size_t i = 0; i < c.roles.size(); ++i)
            msgs.push_back({c.roles[i].c_str(), c.contents[i].c_str()});
        std::string text = apply_template(o, l.model, msgs, s);
        if (s != VKLLM_OK) return fail_with(s, "applying the chat template");
        std::vector<int32_t> all =
            tokenize(tok, text, VKLLM_TOKENIZE_ADD_SPECIAL | VKLLM_TOKENIZE_PARSE_SPECIAL, s);
        if (s != VKLLM_OK) return fail_with(s, "tokenizing");
        if (!o.context_shift && all.size() > n_ctx) {
            c.roles.pop_back();
            c.contents.pop_back();
            std::fprintf(stderr,
                         "[the context of %u tokens is full: this message does not fit. /reset "
                         "starts over; --context-shift keeps long chats going]\n",
                         n_ctx);
            continue;
        }
        size_t common = 0;
        while (common < c.cached.size() && common + 1 < all.size() &&
               c.cached[common] == all[common])
            ++common;
        // What the cache holds before this turn's new tokens.
        std::vector<int32_t> held(all.begin(), all.begin() + long(common));
        s = vkllm_session_truncate(l.session, 0, uint32_t(common));
        // Once a streaming window has wrapped, the cache can no longer rewind: the turn goes
        // on after everything cached with what the template adds after the last answer (or,
        // when the rendering is not an extension of the last one, the tokens past the common
        // prefix, some of which then come again).
        std::vector<int32_t> fresh(all.begin() + long(common), all.end());
        if (s == VKLLM_ERR_INVALID_ARGUMENT && o.context_shift) {
            held = c.cached;
            msgs.pop_back();
            std::string before = apply_template(o, l.model, msgs, s, 0);
            if (s == VKLLM_OK && text.compare(0, before.size(), before) == 0)
                fresh = tokenize(tok, text.substr(before.size()), VKLLM_TOKENIZE_PARSE_SPECIAL, s);
            if (s != VKLLM_OK) return fail_with(s, "tokenizing");
        } else if (s != VKLLM_OK) {
            return fail_with(s, "reusing the cache");
        }
        if (o.verbose_prompt) print_prompt_tokens(tok, fresh);
        uint32_t n_past = 0;
        vkllm_session_position(l.session, 0, &n_past);
        uint32_t limit = answer_limit(o, l, n_past, fresh.size());
        Stream st;
        vkllm_generate_result r = {};
        s = generate(o, l, fresh, limit, st, r);
        std::printf("\n");
        std::fflush(stdout);
        if (s != VKLLM_OK && s != VKLLM_ERR_CANCELLED && s != VKLLM_ERR_CONTEXT_FULL)
            return fail_with(s, "generating");
        vkllm_session_position(l.session, 0, &n_past);
        // What the cache holds now: the turn's tokens and the answer's but its last; after ^C
        // in the prefill, part of the turn's tokens.
        c.cached = held;
        c.cached.insert(c.cached.end(), fresh.begin(), fresh.end());
        c.cached.insert(c.cached.end(), st.ids.begin(), st.ids.end());
        c.cached.resize(std::min<size_t>(c.cached.size(), n_past));
        c.roles.push_back("assistant");
        c.contents.push_back(st.text);
        if (s == VKLLM_ERR_CANCELLED)
            std::fprintf(stderr, "[stopped; ^C at the prompt or ^D quits]\n");
        else if (s == VKLLM_ERR_CONTEXT_FULL && o.context_shift)
            std::fprintf(stderr,
                         "[the positions the model was trained for are used up: the answer ends "
                         "here. /reset starts over]\n");
        else if (s == VKLLM_ERR_CONTEXT_FULL ||
                 (limit < o.n_predict && r.stop_reason == VKLLM_STOP_MAX_TOKENS))
            std::fprintf(stderr,
                         "[the context of %u tokens is full: the answer ends here. /reset starts "
                         "over; --context-shift keeps long chats going]\n",
                         n_ctx);
        else
            std::fprintf(stderr, "[prefilled %zu new tokens of %zu; %.1f tok/s decode]\n",
                         fresh.size(), all.size(),
                         r.decode_ms > 0 ? 1000.0 * double(r.n_generated) / r.decode_ms : 0.0);
    }
    if (interactive) std::fprintf(stderr, "\n");
    return 0;
}
