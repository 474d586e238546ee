// Cancelling a session, what a session is, and batched generation, through the C ABI.
#include <memory>
#include <vector>

#include "api/out.h"
#include "api/params.h"
#include "api/sampling.h"
#include "api/session_access.h"
#include "engine/generate_batch.h"

using vkllm::fail;
using vkllm::api::change;
using vkllm::api::guard;
using vkllm::api::readable;
using vkllm::api::require_arg;
using vkllm::api::require_struct;

extern "C" {

vkllm_status vkllm_session_cancel(vkllm_session *session) {
    return guard([&] {
        require_arg(session, "vkllm_session_cancel", "session");
        session->session->cancel();
    });
}

vkllm_status vkllm_session_get_info(const vkllm_session *session, vkllm_session_info *out) {
    return guard([&] {
        const char *fn = "vkllm_session_get_info";
        const vkllm::engine::Session &s = readable(session, fn);
        require_struct(out, fn, "out");
        const vkllm::engine::SessionOptions &o = s.options();
        vkllm_session_info r{};
        r.struct_size = sizeof r;
        r.n_ctx = o.n_ctx;
        r.n_seq = o.n_seq;
        r.n_batch = o.n_batch;
        r.n_sink = o.n_sink;
        r.flags = (o.streaming ? VKLLM_SESSION_STREAMING : 0u) |
                  (o.record_every_step ? VKLLM_SESSION_RECORD_EVERY_STEP : 0u) |
                  (o.profile ? VKLLM_SESSION_PROFILE : 0u);
        r.kv_type = o.kv_type == vkllm::gpu::KvType::F32    ? VKLLM_KV_F32
                    : o.kv_type == vkllm::gpu::KvType::Q8_0 ? VKLLM_KV_Q8_0
                                                            : VKLLM_KV_F16;
        r.kv_cache_bytes = s.kv_bytes();
        r.device_bytes = s.device_bytes();
        vkllm::api::copy_struct(r, out);
    });
}

vkllm_status vkllm_session_generate_batch(vkllm_session *session, vkllm_batch_sequence *seqs,
                                          size_t n_seqs, const vkllm_generate_params *params) {
    const char *fn = "vkllm_session_generate_batch";
    std::vector<vkllm::engine::BatchSequence> batch;
    size_t stride = 0;
    auto at = [&](size_t i) {
        return reinterpret_cast<vkllm_batch_sequence *>(reinterpret_cast<char *>(seqs) +
                                                        i * stride);
    };
    vkllm_status status = guard([&] {
        readable(session, fn);
        require_arg(seqs, fn, "seqs");
        if (n_seqs == 0) fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: no sequences", fn);
        vkllm_generate_params gp = vkllm::api::read_params(params, vkllm_generate_params_init, fn);
        stride = seqs->struct_size;
        if (stride < sizeof(vkllm_batch_sequence))
            fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: seqs[0].struct_size %zu; set it to %zu", fn,
                 stride, sizeof(vkllm_batch_sequence));
        // Sequences without a sampler decode greedily, as the default chain at temperature 0.
        vkllm::engine::SamplingOptions greedy_options;
        std::vector<std::unique_ptr<vkllm::engine::Sampler>> greedy;
        for (size_t i = 0; i < n_seqs; ++i) {
            const vkllm_batch_sequence &s = *at(i);
            if (s.struct_size != stride)
                fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: seqs[%zu].struct_size %zu differs from %zu",
                     fn, i, s.struct_size, stride);
            require_arg(s.prompt, fn, "seqs[i].prompt");
            if (gp.max_tokens > 0) require_arg(s.tokens, fn, "seqs[i].tokens");
            for (size_t j = 0; j < i; ++j)
                if (at(j)->sampler && at(j)->sampler == s.sampler)
                    fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: seqs[%zu] and seqs[%zu] share a sampler",
                         fn, j, i);
            vkllm::engine::BatchSequence b;
            b.seq = s.seq;
            b.prompt.assign(s.prompt, s.prompt + s.n_prompt);
            if (s.sampler) {
                b.sampler = &s.sampler->impl;
            } else {
                greedy.push_back(std::make_unique<vkllm::engine::Sampler>(greedy_options));
                b.sampler = greedy.back().get();
            }
            batch.push_back(std::move(b));
        }
        change(session, fn, [&](vkllm::engine::Session &s) {
            vkllm::engine::generate_batch(s, batch, gp.max_tokens, gp.ignore_eog != 0);
        });
    });
    if (status == VKLLM_OK || status == VKLLM_ERR_CANCELLED) {
        for (size_t i = 0; i < batch.size(); ++i) {
            vkllm_batch_sequence &s = *at(i);
            std::copy(batch[i].tokens.begin(), batch[i].tokens.end(), s.tokens);
            s.n_generated = batch[i].tokens.size();
            s.stop_reason = status == VKLLM_ERR_CANCELLED ? VKLLM_STOP_CANCELLED
                                                          : vkllm_stop_reason(batch[i].reason);
        }
    }
    return status;
}

}  // extern "C"
