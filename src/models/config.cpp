#include "models/config.h"

#include "common/error.h"

namespace vkllm::models {

ModelConfig read_config(const format::GgufFile &f) {
    const char *path = f.path().c_str();
    ModelConfig c;
    auto arch = f.get_string("general.architecture");
    if (!arch) fail(VKLLM_ERR_FORMAT, "%s: general.architecture is missing", path);
    c.arch_name = std::string(*arch);
    if (c.arch_name == "llama")
        c.arch = Arch::Llama;
    else if (c.arch_name == "qwen2")
        c.arch = Arch::Qwen2;
    else if (c.arch_name == "qwen3")
        c.arch = Arch::Qwen3;
    else if (c.arch_name == "gpt2")
        c.arch = Arch::Gpt2;
    else
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: architecture \"%s\" is not supported (llama, qwen2, qwen3, gpt2 are)", path,
             c.arch_name.c_str());

    const std::string p = c.arch_name + ".";
    auto need = [&](const std::string &key) -> uint32_t {
        auto v = f.get_int(p + key);
        if (!v) fail(VKLLM_ERR_FORMAT, "%s: %s%s is missing", path, p.c_str(), key.c_str());
        if (*v <= 0 || *v > int64_t(1) << 24)
            fail(VKLLM_ERR_FORMAT, "%s: %s%s = %lld is out of range", path, p.c_str(), key.c_str(),
                 (long long)*v);
        return uint32_t(*v);
    };
    auto opt = [&](const std::string &key, uint32_t def) -> uint32_t {
        return f.find(p + key) ? need(key) : def;
    };
    c.n_embd = need("embedding_length");
    c.n_layer = need("block_count");
    c.n_head = need("attention.head_count");
    c.n_head_kv = opt("attention.head_count_kv", c.n_head);
    c.head_dim = opt("attention.key_length", c.n_embd / c.n_head);
    c.n_ff = need("feed_forward_length");
    c.learned_positions = c.arch == Arch::Gpt2;
    // Learned positions: the position table's rows are the context, so it must be stated.
    c.n_ctx_train = c.learned_positions ? need("context_length") : opt("context_length", 4096);
    c.rot_dim = c.learned_positions ? 0 : opt("rope.dimension_count", c.head_dim);
    c.rope_base = float(f.get_float(p + "rope.freq_base").value_or(10000.0));
    c.norm_eps = float(f.get_float(p + (c.learned_positions ? "attention.layer_norm_epsilon"
                                                            : "attention.layer_norm_rms_epsilon"))
                           .value_or(1e-5));
    if (c.n_head % c.n_head_kv != 0)
        fail(VKLLM_ERR_FORMAT, "%s: %u heads cannot share %u key/value heads evenly", path,
             c.n_head, c.n_head_kv);
    if (c.rot_dim > c.head_dim || c.rot_dim % 2)
        fail(VKLLM_ERR_FORMAT, "%s: rotary dimension %u does not fit head dimension %u", path,
             c.rot_dim, c.head_dim);
    if (auto v = f.get_int(p + "attention.value_length"); v && *v != int64_t(c.head_dim))
        fail(VKLLM_ERR_UNSUPPORTED, "%s: value heads of %lld differ from key heads of %u", path,
             (long long)*v, c.head_dim);
    // GGUF llama files carry q/k rows permuted for adjacent-pair RoPE; Qwen ones are NEOX.
    c.neox = c.arch != Arch::Llama;
    c.qk_norm = c.arch == Arch::Qwen3;
    const format::TensorInfo *embd = f.find_tensor("token_embd.weight");
    if (!embd) fail(VKLLM_ERR_FORMAT, "%s: token_embd.weight is missing", path);
    if (embd->n_dims != 2 || embd->dims[0] != c.n_embd || embd->dims[1] > (1u << 24))
        fail(VKLLM_ERR_FORMAT,
             "%s: token_embd.weight has shape [%llu, %llu], expected [%u, n_vocab]", path,
             (unsigned long long)embd->dims[0], (unsigned long long)embd->dims[1], c.n_embd);
    c.n_vocab = uint32_t(embd->dims[1]);
    c.tied_output = f.find_tensor("output.weight") == nullptr;
    return c;
}

}  // namespace vkllm::models
