// The 0.2 names of functions 0.3 renamed (include/vkllm.h, "Deprecated names"): each is its
// replacement under the old name, so that applications and bindings built against 0.2 keep
// working until 0.4.
#include "vkllm.h"

vkllm_status vkllm_gguf_key_at(const vkllm_gguf *gguf, size_t index, vkllm_gguf_key *out) {
    return vkllm_gguf_get_key(gguf, index, out);
}

vkllm_status vkllm_gguf_tensor_at(const vkllm_gguf *gguf, size_t index, vkllm_tensor_info *out) {
    return vkllm_gguf_get_tensor(gguf, index, out);
}

vkllm_status vkllm_tokenize(const vkllm_tokenizer *tokenizer, const char *text, size_t length,
                            uint32_t flags, int32_t *tokens, size_t capacity, size_t *n_tokens) {
    return vkllm_tokenizer_encode(tokenizer, text, length, flags, tokens, capacity, n_tokens);
}

vkllm_status vkllm_detokenize(const vkllm_tokenizer *tokenizer, const int32_t *tokens,
                              size_t n_tokens, uint32_t flags, char *buf, size_t capacity,
                              size_t *length) {
    return vkllm_tokenizer_decode(tokenizer, tokens, n_tokens, flags, buf, capacity, length);
}

vkllm_status vkllm_token_to_piece(const vkllm_tokenizer *tokenizer, int32_t token, uint32_t flags,
                                  char *buf, size_t capacity, size_t *length) {
    return vkllm_tokenizer_get_piece(tokenizer, token, flags, buf, capacity, length);
}

vkllm_status vkllm_token_is_end_of_generation(const vkllm_tokenizer *tokenizer, int32_t token,
                                              int32_t *out) {
    return vkllm_tokenizer_is_end_of_generation(tokenizer, token, out);
}

const vkllm_gguf *vkllm_model_gguf(const vkllm_model *model) {
    return vkllm_model_get_gguf(model);
}

vkllm_status vkllm_session_state_size(const vkllm_session *session, uint32_t seq, size_t *size) {
    return vkllm_session_get_state_size(session, seq, size);
}

vkllm_status vkllm_generate(vkllm_session *session, const int32_t *prompt, size_t n_prompt,
                            const vkllm_sampling_params *sampling,
                            const vkllm_generate_params *params, vkllm_generate_result *result) {
    return vkllm_session_generate(session, prompt, n_prompt, sampling, params, result);
}

vkllm_status vkllm_generate_batch(vkllm_session *session, vkllm_batch_sequence *seqs, size_t n_seqs,
                                  const vkllm_generate_params *params) {
    return vkllm_session_generate_batch(session, seqs, n_seqs, params);
}

vkllm_status vkllm_sampler_seed(const vkllm_sampler *sampler, uint64_t *seed) {
    return vkllm_sampler_get_seed(sampler, seed);
}
