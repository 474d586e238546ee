// Samplers through the C ABI.
#include "api/sampling.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "api/guard.h"
#include "api/objects.h"
#include "api/params.h"

using vkllm::fail;
using vkllm::api::guard;
using vkllm::api::require_arg;

namespace vkllm::api {

engine::SamplingOptions sampling_options(const vkllm_sampling_params *given, size_t n_candidates,
                                         const char *fn) {
    vkllm_sampling_params p = read_params(given, vkllm_sampling_params_init, fn);
    if (p.n_logit_bias > 0) require_arg(p.logit_bias, fn, "params->logit_bias");
    engine::SamplingOptions o;
    o.temperature = p.temperature;
    o.top_k = p.top_k;
    o.top_p = p.top_p;
    o.min_p = p.min_p;
    o.typical_p = p.typical_p;
    o.repeat_penalty = p.repeat_penalty;
    o.repeat_last_n = p.repeat_last_n;
    o.presence_penalty = p.presence_penalty;
    o.frequency_penalty = p.frequency_penalty;
    for (size_t i = 0; i < p.n_logit_bias; ++i)
        o.logit_bias.emplace_back(p.logit_bias[i].token, p.logit_bias[i].bias);
    o.seed = p.seed;
    o.grammar = compiled_grammar(p.grammar);
    if (o.grammar && n_candidates && o.grammar->trie->vocab_size() != n_candidates)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "%s: params->grammar was compiled for a vocabulary of %zu tokens; this one has %zu",
             fn, o.grammar->trie->vocab_size(), n_candidates);
    engine::check_sampling(o, n_candidates, fn);
    return o;
}

}  // namespace vkllm::api

extern "C" {

void vkllm_sampling_params_init(vkllm_sampling_params *p) {
    if (!p) return;
    std::memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->temperature = 0.8f;
    p->top_k = 40;
    p->top_p = 0.95f;
    p->min_p = 0.05f;
    p->repeat_penalty = 1.0f;
    p->repeat_last_n = 64;
    p->typical_p = 1.0f;
}

vkllm_status vkllm_sampler_create(const vkllm_tokenizer *tokenizer,
                                  const vkllm_sampling_params *params, vkllm_sampler **out) {
    return guard([&] {
        const char *fn = "vkllm_sampler_create";
        require_arg(out, fn, "out");
        size_t n_candidates = tokenizer ? tokenizer->impl->vocab().size() : 0;
        vkllm::engine::SamplingOptions o = vkllm::api::sampling_options(params, n_candidates, fn);
        *out = new vkllm_sampler{vkllm::engine::Sampler(o), n_candidates, {}};
    });
}

void vkllm_sampler_destroy(vkllm_sampler *sampler) {
    delete sampler;
}

vkllm_status vkllm_sampler_sample(vkllm_sampler *sampler, const float *logits, size_t n_vocab,
                                  int32_t *token) {
    return guard([&] {
        const char *fn = "vkllm_sampler_sample";
        require_arg(sampler, fn, "sampler");
        require_arg(logits, fn, "logits");
        require_arg(token, fn, "token");
        if (n_vocab == 0 || n_vocab < sampler->n_candidates || n_vocab > INT32_MAX)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s: a row of %zu logits; the tokenizer has %zu ids (pass "
                 "vkllm_model_info.n_vocab)",
                 fn, n_vocab, sampler->n_candidates);
        size_t n = sampler->n_candidates ? sampler->n_candidates : n_vocab;
        sampler->row.assign(logits, logits + n);
        // The device's argmax is not at hand here: the chain always reads the logits.
        int32_t argmax = int32_t(std::max_element(sampler->row.begin(), sampler->row.end()) -
                                 sampler->row.begin());
        *token = sampler->impl.sample(sampler->row.data(), n, argmax);
    });
}

vkllm_status vkllm_sampler_accept(vkllm_sampler *sampler, int32_t token) {
    return guard([&] {
        require_arg(sampler, "vkllm_sampler_accept", "sampler");
        sampler->impl.accept(token);
    });
}

vkllm_status vkllm_sampler_accept_prompt(vkllm_sampler *sampler, const int32_t *tokens, size_t n) {
    return guard([&] {
        const char *fn = "vkllm_sampler_accept_prompt";
        require_arg(sampler, fn, "sampler");
        if (n > 0) require_arg(tokens, fn, "tokens");
        for (size_t i = 0; i < n; ++i)
            sampler->impl.accept_prompt(tokens[i]);
    });
}

vkllm_status vkllm_sampler_get_grammar_progress(const vkllm_sampler *sampler,
                                                vkllm_grammar_progress *progress) {
    return guard([&] {
        const char *fn = "vkllm_sampler_get_grammar_progress";
        require_arg(sampler, fn, "sampler");
        require_arg(progress, fn, "progress");
        *progress = vkllm_grammar_progress(sampler->impl.progress());
    });
}

vkllm_status vkllm_sampler_apply_grammar(vkllm_sampler *sampler, float *logits, size_t n_vocab) {
    return guard([&] {
        const char *fn = "vkllm_sampler_apply_grammar";
        require_arg(sampler, fn, "sampler");
        require_arg(logits, fn, "logits");
        if (n_vocab == 0 || n_vocab < sampler->n_candidates)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s: a row of %zu logits; the tokenizer has %zu ids (pass "
                 "vkllm_model_info.n_vocab)",
                 fn, n_vocab, sampler->n_candidates);
        sampler->impl.apply_grammar(logits, n_vocab);
    });
}

vkllm_status vkllm_sampler_reset(vkllm_sampler *sampler) {
    return guard([&] {
        require_arg(sampler, "vkllm_sampler_reset", "sampler");
        sampler->impl.reset();
    });
}

vkllm_status vkllm_sampler_get_seed(const vkllm_sampler *sampler, uint64_t *seed) {
    return guard([&] {
        require_arg(sampler, "vkllm_sampler_get_seed", "sampler");
        require_arg(seed, "vkllm_sampler_get_seed", "seed");
        *seed = sampler->impl.seed();
    });
}

}  // extern "C"
