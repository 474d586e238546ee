#include "samples.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace vkllm_tool {

namespace {

struct SamplerList {
    std::vector<vkllm_sampler *> items;
    ~SamplerList() {
        for (vkllm_sampler *s : items)
            vkllm_sampler_destroy(s);
    }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int run_samples(const Options &o, const Loaded &l, const std::vector<int32_t> &prompt,
                uint32_t max_tokens) {
    const uint32_t n = o.samples;
    const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(l.model);
    // The prompt but its last token goes into sequence 0 once; each sample then starts from
    // that token in its own sequence, so every sample's first token is drawn from its own
    // sampler.
    const size_t shared = prompt.size() - 1;
    auto t0 = std::chrono::steady_clock::now();
    vkllm_status s =
        shared ? vkllm_session_eval(l.session, 0, prompt.data(), shared, nullptr) : VKLLM_OK;
    if (s != VKLLM_OK) return fail_with(s, "prefilling the prompt");
    double prefill_ms = ms_since(t0);
    auto t1 = std::chrono::steady_clock::now();
    for (uint32_t i = 1; i < n && s == VKLLM_OK; ++i)
        s = vkllm_session_fork(l.session, 0, i, uint32_t(shared));
    if (s != VKLLM_OK) return fail_with(s, "forking the prompt");
    double fork_ms = ms_since(t1);
    SamplerList samplers;
    std::vector<uint64_t> seeds(n);
    std::vector<std::vector<int32_t>> out(n, std::vector<int32_t>(max_tokens ? max_tokens : 1));
    std::vector<vkllm_batch_sequence> seqs(n);
    const bool greedy = o.sampling.temperature <= 0;
    // Greedy samples without a grammar need no sampler: the device's argmax decides.
    const bool need_sampler = !greedy || l.grammar;
    for (uint32_t i = 0; i < n; ++i) {
        vkllm_sampling_params sp = o.sampling;
        sp.grammar = l.grammar;
        // Seeds base, base + 1, ...: a sample reruns alone with --seed base + i.
        if (sp.seed != VKLLM_SEED_RANDOM) sp.seed += i;
        vkllm_sampler *sampler = nullptr;
        if (need_sampler) {
            s = vkllm_sampler_create(tok, &sp, &sampler);
            if (s != VKLLM_OK) return fail_with(s, "creating a sampler");
            samplers.items.push_back(sampler);
            vkllm_sampler_get_seed(sampler, &seeds[i]);
            vkllm_sampler_accept_prompt(sampler, prompt.data(), shared);
        }
        seqs[i] = {sizeof(vkllm_batch_sequence), i, &prompt[shared], 1, sampler, out[i].data(), 0,
                   VKLLM_STOP_MAX_TOKENS};
    }
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = max_tokens;
    gp.ignore_eog = o.ignore_eos ? 1 : 0;
    auto t2 = std::chrono::steady_clock::now();
    s = vkllm_session_generate_batch(l.session, seqs.data(), n, &gp);
    double decode_ms = ms_since(t2);
    if (s != VKLLM_OK && s != VKLLM_ERR_CANCELLED) return fail_with(s, "generating");
    size_t generated = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const vkllm_batch_sequence &b = seqs[i];
        generated += b.n_generated;
        if (greedy)
            std::printf("--- sample %u of %u (greedy) ---\n", i + 1, n);
        else
            std::printf("--- sample %u of %u (seed %llu) ---\n", i + 1, n,
                        (unsigned long long)seeds[i]);
        if (o.print_ids) {
            for (size_t k = 0; k < b.n_generated; ++k)
                std::printf("%s%d", k ? "," : "", b.tokens[k]);
            std::printf("\n");
            continue;
        }
        size_t len = 0;
        vkllm_tokenizer_decode(tok, b.tokens, b.n_generated, 0, nullptr, 0, &len);
        std::string text(len + 1, '\0');
        vkllm_tokenizer_decode(tok, b.tokens, b.n_generated, 0, text.data(), text.size(), &len);
        text.resize(len);
        // As run prints one answer: the prompt first, unless it is a chat's or ids, or a
        // grammar asks for the answer alone.
        bool echo = !o.chat && !o.have_ids && o.constraint == Options::Constraint::None;
        std::printf("%s%s\n", echo ? o.prompt.c_str() : "", text.c_str());
    }
    std::fflush(stdout);
    std::fprintf(stderr,
                 "\n[%u samples] prefill %zu tokens once in %.0f ms, %u forks in %.1f ms | "
                 "decode %zu tokens in %.0f ms, %.1f tok/s (all samples together)\n",
                 n, shared, prefill_ms, n - 1, fork_ms, generated, decode_ms,
                 decode_ms > 0 ? 1000.0 * double(generated) / decode_ms : 0.0);
    bool unfinished = false;
    for (uint32_t i = 0; l.grammar && max_tokens > 0 && i < n; ++i) {
        vkllm_grammar_progress progress = VKLLM_GRAMMAR_COMPLETE;
        vkllm_sampler_get_grammar_progress(seqs[i].sampler, &progress);
        if (progress != VKLLM_GRAMMAR_INCOMPLETE) continue;
        unfinished = true;
        report_unfinished(o,
                          s == VKLLM_ERR_CANCELLED   ? "^C"
                          : max_tokens < o.n_predict ? "the full context"
                                                     : "-n " + std::to_string(o.n_predict),
                          "sample " + std::to_string(i + 1) + " of " + std::to_string(n));
    }
    if (s == VKLLM_ERR_CANCELLED) return 130;
    return unfinished ? kExitUnfinished : 0;
}

}  // namespace vkllm_tool
