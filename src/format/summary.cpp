#include "format/summary.h"

#include <cstdio>
#include <cstring>

namespace vkllm::format {

template <size_t N>
static void copy(char (&dst)[N], std::string_view src) {
    size_t n = std::min(src.size(), N - 1);
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

vkllm_model_summary summarize(const GgufFile &f) {
    vkllm_model_summary s{};
    s.struct_size = sizeof s;
    s.gguf_version = f.version();
    s.file_bytes = f.file_size();
    s.n_keys = f.keys().size();
    s.n_tensors = f.tensors().size();
    for (const TensorInfo &t : f.tensors()) {
        s.tensor_bytes += t.n_bytes;
        s.n_params += t.n_elements;
        if (t.type->id < VKLLM_GGML_TYPE_COUNT) ++s.tensors_of_type[t.type->id];
    }
    std::string arch(f.get_string("general.architecture").value_or(""));
    copy(s.architecture, arch);
    copy(s.name, f.get_string("general.name").value_or(""));
    // Architecture keys are optional here (a vocab-only file has few); a key of the wrong
    // type still fails loudly, through get_int.
    auto u32 = [&](const char *suffix) -> uint32_t {
        int64_t v = f.get_int(arch + suffix).value_or(0);
        return v < 0 || v > int64_t(UINT32_MAX) ? 0 : uint32_t(v);
    };
    s.context_length = u32(".context_length");
    s.n_layers = u32(".block_count");
    s.n_embd = u32(".embedding_length");
    s.n_heads = u32(".attention.head_count");
    s.n_kv_heads = u32(".attention.head_count_kv");
    if (s.n_kv_heads == 0) s.n_kv_heads = s.n_heads;
    s.n_experts = u32(".expert_count");
    s.n_experts_used = u32(".expert_used_count");
    if (const KeyValue *tokens = f.find("tokenizer.ggml.tokens"))
        s.n_vocab = tokens->count > UINT32_MAX ? 0 : uint32_t(tokens->count);
    copy(s.tokenizer_model, f.get_string("tokenizer.ggml.model").value_or(""));
    copy(s.tokenizer_pre, f.get_string("tokenizer.ggml.pre").value_or(""));
    return s;
}

}  // namespace vkllm::format
