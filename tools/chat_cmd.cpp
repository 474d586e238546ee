// vkllm chat: a conversation through the model's chat template, through the public API.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "generation.h"
#include "line_reader.h"

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
        generate_usage(stdout, true);
        return 0;
    }
    if (!parse_generate_options(argc, argv, o)) return 2;
    Loaded l;
    const char *stage = nullptr;
    vkllm_status s = load(o, l, stage);
    if (s != VKLLM_OK) return stage ? fail_with(s, stage) : 1;
    const vkllm_tokenizer *tok = vkllm_model_tokenizer(l.model);
    // No SA_RESTART: ^C at the prompt ends the read, and quits.
    struct sigaction sa = {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    const uint32_t n_ctx = context_size(l);
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
