#include "prefill_flops.h"

#include <string>

namespace vkllm_tool {

namespace {

bool ends_with(const std::string &s, const char *tail) {
    std::string t = tail;
    return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

int64_t key_or(const vkllm_gguf *g, const std::string &key, int64_t fallback) {
    int64_t v = 0;
    return vkllm_gguf_get_int(g, key.c_str(), &v) == VKLLM_OK ? v : fallback;
}

}  // namespace

vkllm_status prefill_flops(const vkllm_gguf *g, PrefillFlops &out) {
    vkllm_model_summary m;
    m.struct_size = sizeof m;
    vkllm_status s = vkllm_gguf_get_summary(g, &m);
    if (s != VKLLM_OK) return s;
    out = PrefillFlops{};
    double tied_head = 0;
    for (uint64_t i = 0; i < m.n_tensors; ++i) {
        vkllm_tensor_info t;
        t.struct_size = sizeof t;
        if ((s = vkllm_gguf_get_tensor(g, i, &t)) != VKLLM_OK) return s;
        std::string name = t.name;
        // Norms, biases (the experts' are matrices), sinks: no matrix product.
        if (t.n_dims < 2 || ends_with(name, ".bias")) continue;
        double products = 2.0 * double(t.dims[0]) * double(t.dims[1]);
        if (name == "output.weight") {
            out.head = products;
        } else if (name == "token_embd.weight") {
            tied_head = products;  // a lookup, and the head where the file has no output
        } else if (name == "position_embd.weight" || name == "token_types.weight") {
            continue;  // lookups
        } else if (t.n_dims == 3 && ends_with(name, "_exps.weight") && m.n_experts) {
            out.weights += products * m.n_experts_used;  // of [in, out, experts]
        } else {
            out.weights += products * double(t.n_dims > 2 ? t.dims[2] : 1);
        }
    }
    if (out.head == 0) out.head = tied_head;
    std::string arch = m.architecture;
    int64_t heads = m.n_heads;
    int64_t key = key_or(g, arch + ".attention.key_length", heads ? m.n_embd / heads : 0);
    int64_t value = key_or(g, arch + ".attention.value_length", key);
    out.attention_per_key = 2.0 * double(heads) * double(key + value) * double(m.n_layers);
    return VKLLM_OK;
}

}  // namespace vkllm_tool
