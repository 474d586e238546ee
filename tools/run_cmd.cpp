// vkllm run: text from a prompt, through the public API.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "cli_args.h"
#include "generation.h"
#include "text_file.h"

using namespace vkllm_tool;

int cmd_run(int argc, char **argv) {
    Options o;
    if (vkllm_tool::wants_help(argc, argv)) {
        generate_usage(stdout, false);
        return 0;
    }
    if (!parse_generate_options(argc, argv, o)) return 2;
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
    if (!o.have_ids && !o.chat && !o.print_ids && !o.json) {
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
    st.print_text = !o.print_ids && !o.json;
    if (o.json) st.json = tok;
    vkllm_generate_result r;
    std::signal(SIGINT, on_sigint);
    s = generate(o, l, prompt, limit, st, r);
    std::signal(SIGINT, SIG_DFL);
    if (s != VKLLM_OK && s != VKLLM_ERR_CANCELLED) return fail_with(s, "generating");
    if (o.print_ids) {
        for (size_t i = 0; i < st.ids.size(); ++i)
            std::printf("%s%d", i ? "," : "", st.ids[i]);
        std::printf("\n");
    } else if (!o.json) {
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
