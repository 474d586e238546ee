// C side of the streaming callbacks: the Go functions vkllmgoOnToken, vkllmgoOnPrefill and
// vkllmgoOnLogprobs
// (exported in generate.go) receive the runtime/cgo.Handle of the Go state through user_data.
// Keeping the uintptr_t <-> void* conversion in C avoids making an unsafe.Pointer from an
// integer in Go.
#include "_cgo_export.h"
#include "vkllm.h"

static int32_t vkllmgo_on_token(void *user_data, int32_t token, const char *text, size_t length) {
    return vkllmgoOnToken((uintptr_t)user_data, token, (char *)text, length);
}

static int32_t vkllmgo_on_prefill(void *user_data, size_t done, size_t total) {
    return vkllmgoOnPrefill((uintptr_t)user_data, done, total);
}

static int32_t vkllmgo_on_logprobs(void *user_data, int32_t token, float logprob,
                                   const vkllm_token_logprob *top, size_t n_top) {
    return vkllmgoOnLogprobs((uintptr_t)user_data, token, logprob, (vkllm_token_logprob *)top,
                             n_top);
}

vkllm_status vkllmgo_generate(vkllm_session *session, const int32_t *prompt, size_t n_prompt,
                              const vkllm_sampling_params *sampling, uint32_t max_tokens,
                              int32_t ignore_eog, int32_t logprobs, int32_t top_logprobs,
                              uintptr_t handle, vkllm_generate_result *result) {
    vkllm_generate_params params;
    vkllm_generate_params_init(&params);
    params.max_tokens = max_tokens;
    params.ignore_eog = ignore_eog;
    params.on_token = vkllmgo_on_token;
    params.on_prefill = vkllmgo_on_prefill;
    params.user_data = (void *)handle;
    if (logprobs) params.on_logprobs = vkllmgo_on_logprobs;
    params.top_logprobs = top_logprobs;
    return vkllm_session_generate(session, prompt, n_prompt, sampling, &params, result);
}
