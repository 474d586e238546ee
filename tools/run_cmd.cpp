// vkllm run: text from a prompt, through the public API.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "chat_setup.h"
#include "cli.h"
#include "cli_args.h"
#include "generation.h"
#include "samples.h"
#include "text_file.h"

using namespace vkllm_tool;

namespace {

// The model's positions: the most a streaming window (--context-shift) can move through.
uint32_t n_positions(const vkllm_model *model) {
    vkllm_model_info mi;
    mi.struct_size = sizeof mi;
    vkllm_model_get_info(model, &mi);
    return mi.n_ctx_train;
}

// --load-session: restores the saved sequence and keeps of it the longest prefix it shares
// with the prompt (less one token when that is the whole prompt: its logits choose the first
// answer token, and a state holds none). `reused` gets how many prompt tokens need no prefill.
vkllm_status resume_session(const Loaded &l, const char *path, const std::vector<int32_t> &prompt,
                            size_t &reused) {
    vkllm_status s = vkllm_session_state_load_file(l.session, 0, path);
    if (s != VKLLM_OK) return s;
    size_t n = 0;
    vkllm_session_get_tokens(l.session, 0, nullptr, 0, &n);
    std::vector<int32_t> saved(n);
    s = vkllm_session_get_tokens(l.session, 0, saved.data(), saved.size(), &n);
    if (s != VKLLM_OK) return s;
    size_t common = 0;
    while (common < saved.size() && common < prompt.size() && saved[common] == prompt[common])
        ++common;
    if (common == prompt.size() && common > 0) --common;
    reused = common;
    if (common < saved.size() &&
        vkllm_session_truncate(l.session, 0, uint32_t(common)) != VKLLM_OK) {
        // A ring that wrapped keeps no earlier prefix: start over.
        reused = 0;
        s = vkllm_session_reset(l.session, 0);
    }
    std::fprintf(stderr, "vkllm: run: %zu of the prompt's %zu tokens restored from %s\n", reused,
                 prompt.size(), path);
    return s;
}

}  // namespace

int cmd_run(int argc, char **argv) {
    Options o;
    if (vkllm_tool::wants_help(argc, argv)) {
        generate_usage(stdout, false);
        return 0;
    }
    if (!parse_generate_options(argc, argv, o)) return 2;
    // A grammar's answer is cut invalid by a cap: by default only the context ends it.
    if (o.constraint != Options::Constraint::None && !o.n_predict_given) o.n_predict = UINT32_MAX;
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
    const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(l.model);
    std::vector<int32_t> prompt = o.prompt_ids;
    std::unique_ptr<ReplyView> view;
    if (!o.have_ids && o.chat) {
        // As chat: the template is checked (or chatml chosen, with a notice) before anything
        // runs, and its problems are named by run's own options.
        if (int rc = prepare_chat_template(o, l.model, argc, argv)) return rc;
        std::vector<Turn> turns;
        if (o.system) turns.push_back({"system", o.system});
        turns.push_back({"user", o.prompt});
        std::string text = render_chat(o, l.model, turns, true, s);
        if (s != VKLLM_OK) return fail_with(s, "applying the chat template");
        prompt = chat_ids(tok, text, s);
        if (!o.print_ids && !o.jsonl)
            view = std::make_unique<ReplyView>(
                reply_format(o, l.model), vkllm_prompt_opens_reasoning(text.c_str()) != 0, o.color);
    } else if (!o.have_ids) {
        prompt =
            tokenize(tok, o.prompt, VKLLM_TOKENIZE_ADD_SPECIAL | VKLLM_TOKENIZE_PARSE_SPECIAL, s);
    }
    if (s != VKLLM_OK) return fail_with(s, "tokenizing");
    if (o.verbose_prompt) print_prompt_tokens(tok, prompt);
    uint32_t n_ctx = context_size(l);
    // A streaming window moves along the positions, which end at the model's.
    const uint32_t positions = n_positions(l.model);
    if (!o.context_shift && prompt.size() > n_ctx) {
        std::fprintf(stderr,
                     "vkllm: run: the prompt's %zu tokens do not fit the context of %u (-c)\n",
                     prompt.size(), n_ctx);
        return 1;
    }
    if (o.context_shift && prompt.size() > positions) {
        std::fprintf(stderr,
                     "vkllm: run: the prompt's %zu tokens do not fit: --context-shift moves the "
                     "context of %u tokens (-c) along them, but not past the %u positions the "
                     "model was trained for\n",
                     prompt.size(), n_ctx, positions);
        return 1;
    }
    size_t reused = 0;
    if (o.load_session) {
        s = resume_session(l, o.load_session, prompt, reused);
        if (s != VKLLM_OK) return fail_with(s, "loading the session");
    }
    std::vector<int32_t> rest(prompt.begin() + long(reused), prompt.end());
    uint32_t limit = answer_limit(o, l, reused, rest.size());
    if (o.context_shift) limit = std::min<uint32_t>(limit, positions - uint32_t(prompt.size()) + 1);
    if (o.samples > 1) {
        if (prompt.empty()) {
            std::fprintf(stderr, "vkllm: run: -s needs a prompt of at least one token\n");
            return 2;
        }
        return run_samples(o, l, prompt, limit);
    }
    // Echoed once nothing can reject it any more.
    if (!o.have_ids && !o.chat && !o.print_ids && !o.jsonl &&
        o.constraint == Options::Constraint::None) {
        if (o.color) std::fputs(kPromptColor, stdout);
        std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
        if (o.color) std::fputs(kResetColor, stdout);
    }
    Stream st;
    st.print_text = !o.print_ids && !o.jsonl;
    st.view = view.get();
    if (o.jsonl) st.json = tok;
    vkllm_generate_result r;
    std::signal(SIGINT, on_sigint);
    s = generate(o, l, rest, limit, st, r);
    std::signal(SIGINT, SIG_DFL);
    if (view) {
        view->finish();
        for (const ToolCall &call : view->calls)
            std::printf("\n%s", tool_call_json(call).c_str());
    }
    if (s != VKLLM_OK && s != VKLLM_ERR_CANCELLED) return fail_with(s, "generating", st.error);
    if (o.save_session) {
        vkllm_status saved = vkllm_session_state_save_file(l.session, 0, o.save_session);
        if (saved != VKLLM_OK) return fail_with(saved, "saving the session");
    }
    if (o.print_ids) {
        for (size_t i = 0; i < st.ids.size(); ++i)
            std::printf("%s%d", i ? "," : "", st.ids[i]);
        std::printf("\n");
    } else if (!o.jsonl) {
        std::printf("\n");
    }
    print_stats(l, r, st);
    bool cancelled = s == VKLLM_ERR_CANCELLED;
    bool full = !cancelled && limit < o.n_predict && r.stop_reason == VKLLM_STOP_MAX_TOKENS;
    if (cancelled)
        std::fprintf(stderr, "vkllm: run: stopped by ^C after %zu tokens\n", r.n_generated);
    else if (full && o.context_shift)
        std::fprintf(stderr,
                     "vkllm: run: the %u positions the model was trained for are used up; the "
                     "answer ends after %zu tokens\n",
                     positions, r.n_generated);
    else if (full)
        std::fprintf(stderr,
                     "vkllm: run: the context of %u tokens is full; the answer ends after %zu "
                     "tokens (a larger -c, or --context-shift, goes on)\n",
                     n_ctx, r.n_generated);
    if (o.constraint != Options::Constraint::None && o.n_predict > 0 &&
        r.grammar_progress == VKLLM_GRAMMAR_INCOMPLETE) {
        std::string by = cancelled                            ? "^C"
                         : full                               ? "the full context"
                         : r.stop_reason == VKLLM_STOP_STRING ? "--stop"
                                                              : "-n " + std::to_string(o.n_predict);
        report_unfinished(o, by, "the answer");
        return cancelled ? 130 : kExitUnfinished;
    }
    return cancelled ? 130 : 0;
}
