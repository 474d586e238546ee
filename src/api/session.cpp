// Sessions and generation through the C ABI.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/guard.h"
#include "api/objects.h"
#include "api/out.h"
#include "api/params.h"
#include "api/sampling.h"
#include "api/session_access.h"

using vkllm::fail;
using vkllm::api::change;
using vkllm::api::guard;
using vkllm::api::read_params;
using vkllm::api::readable;
using vkllm::api::require_arg;
using vkllm::api::require_struct;

extern "C" {

void vkllm_session_params_init(vkllm_session_params *p) {
    if (!p) return;
    std::memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->n_seq = 1;
    p->n_batch = 64;
    p->n_sink = 4;
    p->kv_type = VKLLM_KV_F16;
}

vkllm_status vkllm_session_create(vkllm_model *model, const vkllm_session_params *params,
                                  vkllm_session **out) {
    return guard([&] {
        const char *fn = "vkllm_session_create";
        require_arg(model, fn, "model");
        require_arg(out, fn, "out");
        vkllm_session_params p = read_params(params, vkllm_session_params_init, fn);
        vkllm::engine::SessionOptions o;
        o.n_ctx = p.n_ctx;
        o.n_seq = p.n_seq;
        o.n_batch = p.n_batch;
        // 0x1 and 0x4 were the KV cache type before 0.3: refused, never taken for F16.
        if (p.flags & 0x5u)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s: flags 0x%x: the KV cache type is vkllm_session_params.kv_type since 0.3", fn,
                 p.flags & 0x5u);
        const uint32_t known =
            VKLLM_SESSION_STREAMING | VKLLM_SESSION_RECORD_EVERY_STEP | VKLLM_SESSION_PROFILE;
        if (p.flags & ~known)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x", fn, p.flags & ~known);
        switch (p.kv_type) {
            case VKLLM_KV_F16:
                o.kv_type = vkllm::gpu::KvType::F16;
                break;
            case VKLLM_KV_F32:
                o.kv_type = vkllm::gpu::KvType::F32;
                break;
            case VKLLM_KV_Q8_0:
                o.kv_type = vkllm::gpu::KvType::Q8_0;
                break;
            default:
                fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: unknown kv_type %d", fn, int(p.kv_type));
        }
        o.streaming = p.flags & VKLLM_SESSION_STREAMING;
        o.record_every_step = p.flags & VKLLM_SESSION_RECORD_EVERY_STEP;
        o.profile = p.flags & VKLLM_SESSION_PROFILE;
        o.n_sink = p.n_sink;
        auto s = std::make_unique<vkllm_session>();
        s->context = model->context;
        s->model = model->model;
        s->session = std::make_unique<vkllm::engine::Session>(*model->model, o);
        *out = s.release();
    });
}

void vkllm_session_destroy(vkllm_session *session) {
    try {
        delete session;
    } catch (...) {
    }
}

vkllm_status vkllm_session_reset(vkllm_session *session, int32_t seq) {
    return guard([&] {
        change(session, "vkllm_session_reset", [&](vkllm::engine::Session &s) {
            if (seq < -1 || seq >= int32_t(s.options().n_seq))
                fail(VKLLM_ERR_INVALID_ARGUMENT, "vkllm_session_reset: sequence %d does not exist",
                     seq);
            for (uint32_t i = 0; i < s.options().n_seq; ++i)
                if (seq == -1 || uint32_t(seq) == i) s.truncate(i, 0);
        });
    });
}

vkllm_status vkllm_session_truncate(vkllm_session *session, uint32_t seq, uint32_t n_keep) {
    return guard([&] {
        change(session, "vkllm_session_truncate",
               [&](vkllm::engine::Session &s) { s.truncate(seq, n_keep); });
    });
}

vkllm_status vkllm_session_get_position(const vkllm_session *session, uint32_t seq,
                                        uint32_t *n_past) {
    return guard([&] {
        const vkllm::engine::Session &s = readable(session, "vkllm_session_get_position");
        require_arg(n_past, "vkllm_session_get_position", "n_past");
        if (seq >= s.options().n_seq)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "vkllm_session_get_position: sequence %u does not exist", seq);
        *n_past = s.position(seq);
    });
}

vkllm_status vkllm_session_eval(vkllm_session *session, uint32_t seq, const int32_t *tokens,
                                size_t n, float *logits) {
    return guard([&] {
        if (n > 0) require_arg(tokens, "vkllm_session_eval", "tokens");
        change(session, "vkllm_session_eval",
               [&](vkllm::engine::Session &s) { s.prefill(seq, tokens, n, logits); });
    });
}

void vkllm_eval_params_init(vkllm_eval_params *p) {
    if (!p) return;
    std::memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->kind = VKLLM_LOGITS_RAW;
}

vkllm_status vkllm_session_eval_logits(vkllm_session *session, uint32_t seq, const int32_t *tokens,
                                       size_t n, const vkllm_eval_params *params, float *out) {
    return guard([&] {
        const char *fn = "vkllm_session_eval_logits";
        readable(session, fn);
        if (n > 0) require_arg(tokens, fn, "tokens");
        vkllm_eval_params p = read_params(params, vkllm_eval_params_init, fn);
        if (p.kind != VKLLM_LOGITS_RAW && p.kind != VKLLM_LOGITS_LOG_SOFTMAX)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: unknown kind %d", fn, int(p.kind));
        if (!p.positions && p.n_positions > 0)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: positions is NULL with n_positions %zu", fn,
                 p.n_positions);
        std::vector<uint32_t> positions;
        if (p.positions) positions.assign(p.positions, p.positions + p.n_positions);
        if ((p.positions ? p.n_positions : n) > 0) require_arg(out, fn, "out");
        change(session, fn, [&](vkllm::engine::Session &s) {
            s.eval_logits(seq, tokens, n, p.positions ? &positions : nullptr,
                          p.kind == VKLLM_LOGITS_LOG_SOFTMAX, out);
        });
    });
}

vkllm_status vkllm_session_decode(vkllm_session *session, const uint32_t *seqs,
                                  const int32_t *tokens, size_t n, float *logits) {
    return guard([&] {
        require_arg(seqs, "vkllm_session_decode", "seqs");
        require_arg(tokens, "vkllm_session_decode", "tokens");
        change(session, "vkllm_session_decode",
               [&](vkllm::engine::Session &s) { s.decode(seqs, tokens, n, logits, nullptr); });
    });
}

vkllm_status vkllm_session_decode_greedy(vkllm_session *session, const uint32_t *seqs,
                                         const int32_t *tokens, size_t n, uint32_t steps,
                                         int32_t *out) {
    return guard([&] {
        const char *fn = "vkllm_session_decode_greedy";
        require_arg(seqs, fn, "seqs");
        require_arg(tokens, fn, "tokens");
        require_arg(out, fn, "out");
        change(session, fn,
               [&](vkllm::engine::Session &s) { s.decode_greedy(seqs, tokens, n, steps, out); });
    });
}

vkllm_status vkllm_session_get_stats(const vkllm_session *session, vkllm_session_stats *out) {
    return guard([&] {
        const vkllm::engine::Session &s = readable(session, "vkllm_session_get_stats");
        require_struct(out, "vkllm_session_get_stats", "out");
        const vkllm::engine::SessionStats &st = s.stats();
        vkllm_session_stats r{};
        r.struct_size = sizeof r;
        r.command_buffers_recorded = st.recorded;
        r.submits = st.submits;
        r.tokens_prefilled = st.tokens_prefilled;
        r.tokens_decoded = st.tokens_decoded;
        r.prefill_ms = st.prefill_ms;
        r.decode_ms = st.decode_ms;
        r.kv_cache_bytes = s.kv_bytes();
        vkllm::api::copy_struct(r, out);
    });
}

vkllm_status vkllm_session_get_profile(const vkllm_session *session, vkllm_kernel_time *out,
                                       size_t capacity, size_t *count) {
    return guard([&] {
        const char *fn = "vkllm_session_get_profile";
        const vkllm::engine::Session &s = readable(session, fn);
        require_arg(count, fn, "count");
        if (capacity > 0) require_arg(out, fn, "out");
        if (!s.options().profile)
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "%s: the session was not created with VKLLM_SESSION_PROFILE", fn);
        std::vector<const vkllm::engine::KernelTime *> order;
        for (const vkllm::engine::KernelTime &k : s.profile())
            order.push_back(&k);
        std::stable_sort(order.begin(), order.end(),
                         [](auto *a, auto *b) { return a->ms > b->ms; });
        for (size_t i = 0; i < order.size() && i < capacity; ++i)
            out[i] =
                vkllm_kernel_time{order[i]->kernel.c_str(), order[i]->dispatches, order[i]->ms};
        *count = order.size();
    });
}

vkllm_status vkllm_session_get_layer_kv_bytes(const vkllm_session *session, uint32_t layer,
                                              uint64_t *bytes) {
    return guard([&] {
        const char *fn = "vkllm_session_get_layer_kv_bytes";
        const vkllm::engine::Session &s = readable(session, fn);
        require_arg(bytes, fn, "bytes");
        uint32_t n_layer = s.model().config().n_layer;
        if (layer >= n_layer)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: layer %u of a model with %u", fn, layer, n_layer);
        *bytes = s.layer_kv_bytes(layer);
    });
}

void vkllm_generate_params_init(vkllm_generate_params *p) {
    if (!p) return;
    std::memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->max_tokens = 256;
}

vkllm_status vkllm_session_generate(vkllm_session *session, const int32_t *prompt, size_t n_prompt,
                                    const vkllm_sampling_params *sampling,
                                    const vkllm_generate_params *params,
                                    vkllm_generate_result *result) {
    vkllm::engine::GenerateResult r;
    vkllm_status status = guard([&] {
        const char *fn = "vkllm_session_generate";
        readable(session, fn);
        if (n_prompt > 0) require_arg(prompt, fn, "prompt");
        if (result) require_struct(result, fn, "result");
        vkllm_generate_params gp = read_params(params, vkllm_generate_params_init, fn);
        if (gp.n_stop > 0) require_arg(gp.stop, fn, "params->stop");
        vkllm::engine::GenerateOptions o;
        o.seq = gp.seq;
        o.max_tokens = gp.max_tokens;
        for (size_t i = 0; i < gp.n_stop; ++i) {
            if (!gp.stop[i]) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: stop[%zu] is NULL", fn, i);
            o.stop.emplace_back(gp.stop[i]);
        }
        o.render_special = gp.render_special != 0;
        o.steps_per_submit = gp.steps_per_submit;
        o.ignore_eog = gp.ignore_eog != 0;
        o.sampling = vkllm::api::sampling_options(sampling, session->model->n_tokens(), fn);
        if (gp.top_logprobs < 0 || gp.top_logprobs > VKLLM_MAX_TOP_LOGPROBS)
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: top_logprobs %d is outside 0 to %d", fn,
                 gp.top_logprobs, VKLLM_MAX_TOP_LOGPROBS);
        o.top_logprobs = uint32_t(gp.top_logprobs);
        if (gp.on_token)
            o.on_token = [&gp](int32_t token, std::string_view text) {
                std::string copy(text);  // NUL-terminated for C callers
                return gp.on_token(gp.user_data, token, copy.c_str(), copy.size()) == 0;
            };
        if (gp.on_prefill)
            o.on_prefill = [&gp](size_t done, size_t total) {
                return gp.on_prefill(gp.user_data, done, total) == 0;
            };
        if (gp.on_logprobs)
            o.on_logprobs = [&gp](int32_t token, float logprob,
                                  const std::vector<vkllm::engine::TokenLogprob> &top) {
                std::vector<vkllm_token_logprob> c;
                for (const vkllm::engine::TokenLogprob &t : top)
                    c.push_back({t.token, t.logprob});
                return gp.on_logprobs(gp.user_data, token, logprob, c.data(), c.size()) == 0;
            };
        std::vector<int32_t> tokens(prompt, prompt + n_prompt);
        change(session, fn,
               [&](vkllm::engine::Session &s) { vkllm::engine::generate(s, tokens, o, r); });
    });
    if (result && result->struct_size >= sizeof(size_t) &&
        (status == VKLLM_OK || status == VKLLM_ERR_CANCELLED)) {
        vkllm_generate_result out{};
        out.struct_size = sizeof out;
        out.n_prompt = r.n_prompt;
        out.n_generated = r.n_generated;
        out.stop_reason =
            status == VKLLM_ERR_CANCELLED ? VKLLM_STOP_CANCELLED : vkllm_stop_reason(r.reason);
        out.prefill_ms = r.prefill_ms;
        out.decode_ms = r.decode_ms;
        out.seed = r.seed;
        out.grammar_progress = vkllm_grammar_progress(r.grammar_progress);
        vkllm::api::copy_struct(out, result);
    }
    return status;
}

}  // extern "C"
