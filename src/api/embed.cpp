// vkllm_session_embed and vkllm_session_embed_tokens: the arguments checked, texts tokenized and
// inputs cut to max_tokens here, before engine::embed runs anything.
#include <algorithm>
#include <cstring>
#include <vector>

#include "api/guard.h"
#include "api/objects.h"
#include "api/params.h"
#include "api/session_access.h"
#include "engine/embed.h"
#include "vkllm.h"

using vkllm::fail;
using vkllm::api::change;
using vkllm::api::guard;
using vkllm::api::read_params;
using vkllm::api::readable;
using vkllm::api::require_arg;
using vkllm::engine::Pooling;

namespace {

using Inputs = std::vector<std::vector<int32_t>>;

struct Plan {
    Pooling pooling = Pooling::Mean;
    bool normalize = false;
    bool truncate = false;
    uint32_t max_tokens = 0;  // the effective limit: never 0
};

Plan plan(const vkllm::engine::Session &s, const vkllm_embed_params *given, bool per_token_ok,
          const char *fn) {
    vkllm_embed_params p = read_params(given, vkllm_embed_params_init, fn);
    const uint32_t known = VKLLM_EMBED_NORMALIZE | VKLLM_EMBED_TRUNCATE;
    if (p.flags & ~known) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, p.flags);
    Plan r;
    switch (p.pooling) {
        case VKLLM_POOLING_MODEL:
            r.pooling = vkllm::engine::model_pooling(s.model());
            break;
        case VKLLM_POOLING_NONE:
            r.pooling = Pooling::None;
            break;
        case VKLLM_POOLING_MEAN:
            r.pooling = Pooling::Mean;
            break;
        case VKLLM_POOLING_CLS:
            r.pooling = Pooling::Cls;
            break;
        case VKLLM_POOLING_LAST:
            r.pooling = Pooling::Last;
            break;
        default:
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: unknown pooling %d", fn, int(p.pooling));
    }
    if (r.pooling == Pooling::None && !per_token_ok)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "%s: pooling none (%s) gives a vector per token; use vkllm_session_embed_tokens, or "
             "ask for mean, cls or last",
             fn, p.pooling == VKLLM_POOLING_MODEL ? "the model states no pooling" : "asked for");
    r.normalize = p.flags & VKLLM_EMBED_NORMALIZE;
    r.truncate = p.flags & VKLLM_EMBED_TRUNCATE;
    r.max_tokens = std::min(s.options().n_ctx, s.model().max_positions());
    if (p.max_tokens > 0) r.max_tokens = std::min(r.max_tokens, p.max_tokens);
    return r;
}

// Inputs longer than the limit: cut (keeping a final end token, as sentence-transformers keeps
// [SEP]) with truncate, else refused.
void fit(Inputs &inputs, const Plan &plan, const vkllm::tokenizer::Vocab &vocab, const char *fn) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        std::vector<int32_t> &in = inputs[i];
        if (in.empty())
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s: input %zu has no tokens (the model adds no special tokens to an empty text)",
                 fn, i);
        if (in.size() <= plan.max_tokens) continue;
        if (!plan.truncate)
            fail(VKLLM_ERR_CONTEXT_FULL,
                 "%s: input %zu has %zu tokens, over the limit of %u (max_tokens, the session's "
                 "context and the model's positions); pass VKLLM_EMBED_TRUNCATE to cut it",
                 fn, i, in.size(), plan.max_tokens);
        const int32_t last = in.back();
        const bool end = last >= 0 && (last == vocab.sep || last == vocab.eos);
        in.resize(plan.max_tokens);
        if (end) in.back() = last;
    }
}

uint64_t required(const vkllm::engine::Session &s, const Inputs &inputs, const Plan &plan,
                  size_t out_len, const char *fn) {
    const uint64_t need = vkllm::engine::embed_size(s.model(), inputs, plan.pooling);
    if (out_len < need)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: out_len is %zu floats; these inputs need %llu", fn,
             out_len, static_cast<unsigned long long>(need));
    return need;
}

void run(vkllm_session *session, const Inputs &inputs, const Plan &plan, float *out,
         const char *fn) {
    vkllm::engine::EmbedRequest request;
    request.pooling = plan.pooling;
    request.normalize = plan.normalize;
    change(session, fn,
           [&](vkllm::engine::Session &s) { vkllm::engine::embed(s, inputs, request, out); });
}

}  // namespace

extern "C" {

void vkllm_embed_params_init(vkllm_embed_params *p) {
    if (!p) return;
    std::memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->pooling = VKLLM_POOLING_MODEL;
}

vkllm_status vkllm_session_embed(vkllm_session *session, const char *const *texts, size_t n,
                                 const vkllm_embed_params *params, float *out, size_t out_len) {
    return guard([&] {
        const char *fn = "vkllm_session_embed";
        const vkllm::engine::Session &s = readable(session, fn);
        require_arg(texts, fn, "texts");
        require_arg(out, fn, "out");
        if (n == 0) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: n is 0 (no texts)", fn);
        const Plan p = plan(s, params, false, fn);
        const vkllm::tokenizer::Tokenizer &tok = *s.model().tokenizer();
        vkllm::tokenizer::EncodeOptions options;
        options.add_special = true;
        Inputs inputs(n);
        for (size_t i = 0; i < n; ++i) {
            if (!texts[i]) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: texts[%zu] is NULL", fn, i);
            inputs[i] = tok.encode(texts[i], options);
        }
        fit(inputs, p, tok.vocab(), fn);
        required(s, inputs, p, out_len, fn);
        run(session, inputs, p, out, fn);
    });
}

vkllm_status vkllm_session_embed_tokens(vkllm_session *session, const int32_t *const *inputs,
                                        const size_t *n_tokens, size_t n,
                                        const vkllm_embed_params *params, float *out,
                                        size_t out_len) {
    return guard([&] {
        const char *fn = "vkllm_session_embed_tokens";
        const vkllm::engine::Session &s = readable(session, fn);
        require_arg(inputs, fn, "inputs");
        require_arg(n_tokens, fn, "n_tokens");
        require_arg(out, fn, "out");
        if (n == 0) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: n is 0 (no inputs)", fn);
        const Plan p = plan(s, params, true, fn);
        const uint32_t n_vocab = s.model().config().n_vocab;
        Inputs copied(n);
        for (size_t i = 0; i < n; ++i) {
            if (n_tokens[i] > 0 && !inputs[i])
                fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: inputs[%zu] is NULL", fn, i);
            copied[i].assign(inputs[i], inputs[i] + n_tokens[i]);
            for (size_t j = 0; j < n_tokens[i]; ++j)
                if (inputs[i][j] < 0 || uint32_t(inputs[i][j]) >= n_vocab)
                    fail(VKLLM_ERR_INVALID_ARGUMENT,
                         "%s: inputs[%zu][%zu] is %d, outside the embedding's %u rows", fn, i, j,
                         inputs[i][j], n_vocab);
        }
        fit(copied, p, s.model().tokenizer()->vocab(), fn);
        required(s, copied, p, out_len, fn);
        run(session, copied, p, out, fn);
    });
}

}  // extern "C"
