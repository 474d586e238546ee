// The 0.1 names of functions 0.2 renamed (include/vkllm.h, "Deprecated names"): each is its
// replacement under the old name, so that applications and bindings built against 0.1 keep
// working for one minor version.
#include "vkllm.h"

vkllm_status vkllm_runtime_stats_get(const vkllm_runtime *runtime, vkllm_runtime_stats *stats) {
    return vkllm_runtime_get_stats(runtime, stats);
}

vkllm_status vkllm_runtime_device_info(const vkllm_runtime *runtime, vkllm_device_info *info) {
    return vkllm_runtime_get_device_info(runtime, info);
}

void vkllm_gguf_close(vkllm_gguf *gguf) {
    vkllm_gguf_destroy(gguf);
}

vkllm_status vkllm_gguf_summary(const vkllm_gguf *gguf, vkllm_model_summary *out) {
    return vkllm_gguf_get_summary(gguf, out);
}

const vkllm_tokenizer *vkllm_model_tokenizer(const vkllm_model *model) {
    return vkllm_model_get_tokenizer(model);
}

const char *vkllm_model_chat_template(const vkllm_model *model) {
    return vkllm_model_get_chat_template(model);
}

vkllm_status vkllm_session_position(const vkllm_session *session, uint32_t seq, uint32_t *n_past) {
    return vkllm_session_get_position(session, seq, n_past);
}

vkllm_status vkllm_session_layer_kv_bytes(const vkllm_session *session, uint32_t layer,
                                          uint64_t *bytes) {
    return vkllm_session_get_layer_kv_bytes(session, layer, bytes);
}

vkllm_status vkllm_session_profile(const vkllm_session *session, vkllm_kernel_time *out,
                                   size_t capacity, size_t *count) {
    return vkllm_session_get_profile(session, out, capacity, count);
}
