// vkllm chat: a conversation through the model's chat template, through the public API.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "chat_setup.h"
#include "cli.h"
#include "cli_args.h"
#include "generation.h"
#include "line_reader.h"
#include "os.h"

using namespace vkllm_tool;

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
    std::vector<Turn> turns;
    std::vector<int32_t> cached;  // the tokens in sequence 0's cache
    uint64_t calls_made = 0;      // for the ids of calls that come without one

    void reset(vkllm_session *session) {
        turns.clear();
        if (!system.empty()) turns.push_back({"system", system});
        cached.clear();
        vkllm_session_truncate(session, 0, 0);
    }
};

// Each call's result, one line each, as the next turns; false at the end of input.
bool read_tool_results(LineReader &in, bool interactive, std::vector<Turn> &turns,
                       const std::vector<ToolCall> &calls) {
    for (const ToolCall &c : calls) {
        std::string result;
        std::string prompt = interactive ? "result of " + c.name + "> " : "";
        if (!in.read(prompt.c_str(), result)) return false;
        Turn t{"tool", result};
        t.tool_call_id = c.id;
        t.name = c.name;
        turns.push_back(t);
    }
    return true;
}

// Mistral's templates want call ids of nine letters and digits; models that give none get one.
void name_calls(std::vector<ToolCall> &calls, uint64_t &counter) {
    for (ToolCall &c : calls)
        if (c.id.empty()) {
            char id[16];
            std::snprintf(id, sizeof id, "call%05llu", (unsigned long long)(++counter % 100000));
            c.id = id;
        }
}

// Renders the conversation, prefills what the cache does not hold yet and generates the
// assistant's turn, which joins the conversation. `answered`: the turn ended without tool calls
// (or could not be made). False, with `rc` set, when the tool must exit.
bool answer(const Options &o, const Loaded &l, const vkllm_tokenizer *tok, Conversation &c, int &rc,
            bool &answered) {
    const uint32_t n_ctx = context_size(l);
    vkllm_status s;
    std::string text = render_chat(o, l.model, c.turns, true, s);
    if (s != VKLLM_OK) return rc = fail_with(s, "applying the chat template"), false;
    std::vector<int32_t> all = chat_ids(tok, text, s);
    if (s != VKLLM_OK) return rc = fail_with(s, "tokenizing"), false;
    answered = true;
    if (!o.context_shift && all.size() > n_ctx) {
        while (!c.turns.empty() && c.turns.back().role != "assistant")
            c.turns.pop_back();
        std::fprintf(stderr,
                     "[the context of %u tokens is full: this message does not fit. /reset "
                     "starts over; --context-shift keeps long chats going]\n",
                     n_ctx);
        return true;
    }
    size_t common = 0;
    while (common < c.cached.size() && common + 1 < all.size() && c.cached[common] == all[common])
        ++common;
    // What the cache holds before this turn's new tokens.
    std::vector<int32_t> held(all.begin(), all.begin() + long(common));
    s = vkllm_session_truncate(l.session, 0, uint32_t(common));
    // Once a streaming window has wrapped, the cache can no longer rewind: the turn goes on
    // after everything cached with what the template adds after the last answer (or, when the
    // rendering is not an extension of the last one, the tokens past the common prefix, some of
    // which then come again).
    std::vector<int32_t> fresh(all.begin() + long(common), all.end());
    if (s == VKLLM_ERR_INVALID_ARGUMENT && o.context_shift) {
        held = c.cached;
        std::vector<Turn> before(c.turns);
        while (!before.empty() && before.back().role != "assistant")
            before.pop_back();
        std::string prefix = render_chat(o, l.model, before, false, s);
        if (s == VKLLM_OK && text.compare(0, prefix.size(), prefix) == 0)
            fresh = tokenize(tok, text.substr(prefix.size()), VKLLM_TOKENIZE_PARSE_SPECIAL, s);
        if (s != VKLLM_OK) return rc = fail_with(s, "tokenizing"), false;
    } else if (s != VKLLM_OK) {
        return rc = fail_with(s, "reusing the cache"), false;
    }
    if (o.verbose_prompt) print_prompt_tokens(tok, fresh);
    uint32_t n_past = 0;
    vkllm_session_get_position(l.session, 0, &n_past);
    uint32_t limit = answer_limit(o, l, n_past, fresh.size());
    ReplyView view(reply_format(o, l.model), vkllm_prompt_opens_reasoning(text.c_str()) != 0,
                   o.color);
    Stream st;
    st.view = &view;
    vkllm_generate_result r = {};
    s = generate(o, l, fresh, limit, st, r);
    view.finish();
    std::printf("\n");
    std::fflush(stdout);
    if (s != VKLLM_OK && s != VKLLM_ERR_CANCELLED && s != VKLLM_ERR_CONTEXT_FULL)
        return rc = fail_with(s, "generating", st.error), false;
    vkllm_session_get_position(l.session, 0, &n_past);
    // What the cache holds now: the turn's tokens and the answer's but its last; after ^C in
    // the prefill, part of the turn's tokens.
    c.cached = held;
    c.cached.insert(c.cached.end(), fresh.begin(), fresh.end());
    c.cached.insert(c.cached.end(), st.ids.begin(), st.ids.end());
    c.cached.resize(std::min<size_t>(c.cached.size(), n_past));
    Turn reply{"assistant", view.content};
    reply.reasoning = view.reasoning;
    reply.calls = view.calls;
    name_calls(reply.calls, c.calls_made);
    reply.has_content = !view.content.empty() || reply.calls.empty();
    answered = reply.calls.empty() || s != VKLLM_OK;
    for (const ToolCall &call : reply.calls)
        std::printf("%s\n", tool_call_json(call).c_str());
    std::fflush(stdout);
    c.turns.push_back(std::move(reply));
    const std::string capped = "[stopped at -n " + std::to_string(o.n_predict) + "]\n";
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
        // An explicit -n cut the answer short: said apart, so that it is not taken for the end.
        std::fprintf(stderr, "%s[prefilled %zu new tokens of %zu; %.1f tok/s decode]\n",
                     r.stop_reason == VKLLM_STOP_MAX_TOKENS ? capped.c_str() : "", fresh.size(),
                     all.size(),
                     r.decode_ms > 0 ? 1000.0 * double(r.n_generated) / r.decode_ms : 0.0);
    return true;
}

}  // namespace

// Each turn renders the whole conversation, keeps the cached tokens it shares with what the
// session already holds, and prefills only the rest.
int cmd_chat(int argc, char **argv) {
    Options o;
    if (vkllm_tool::wants_help(argc, argv)) {
        generate_usage(stdout, true);
        print_chat_notes(stdout);
        return 0;
    }
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--template" &&
            (std::string(argv[i + 1]) == "help" || std::string(argv[i + 1]) == "list")) {
            print_builtin_templates(stdout);
            return 0;
        }
    // As llama-cli's conversation mode: an answer runs to its end token or a full context
    // unless -n caps it (answer_limit keeps it within the context).
    o.n_predict = UINT32_MAX;
    if (!parse_generate_options(argc, argv, o)) return 2;
    Loaded l;
    const char *stage = nullptr;
    vkllm_status s = load(o, l, stage);
    if (s != VKLLM_OK) return stage ? fail_with(s, stage) : 1;
    if (int rc = prepare_chat_template(o, l.model, argc, argv)) return rc;
    // Drawn once for the whole chat (random unless --seed): printed so that a chat can be
    // repeated.
    std::fprintf(stderr, "[seed %llu]\n", static_cast<unsigned long long>(o.sampling.seed));
    const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(l.model);
    // ^C at the prompt ends the read, and quits.
    vkllm_tool::on_interrupt(on_sigint);
    Conversation c;
    if (o.system) c.system = o.system;
    c.reset(l.session);
    bool interactive = isatty(STDIN_FILENO);
    vkllm_tool::LineReader input(interactive, interactive && o.color ? kInputColor : "");
    bool quit = false;
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
        c.turns.push_back({"user", line});
        // The answer, and after tool calls the answer to their results, until one calls none.
        for (bool answered = false; !answered;) {
            int rc = 0;
            if (!answer(o, l, tok, c, rc, answered)) return rc;
            if (answered || g_interrupted) break;
            if (!read_tool_results(input, interactive, c.turns, c.turns.back().calls)) {
                quit = true;
                break;
            }
        }
        if (quit) break;
    }
    if (interactive) std::fprintf(stderr, "\n");
    return 0;
}
