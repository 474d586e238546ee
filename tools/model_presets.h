// The shapes of real models, for `vkllm make-model`: hyperparameters, the metadata keys
// llama.cpp's converters write for each architecture, and every tensor with its shape, so a
// random-weight file costs the same to load and run as the real model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/gguf_writer.h"

namespace vkllm_tool {

// What the built-in byte-level vocabulary of a preset looks like (used without --vocab).
struct VocabStyle {
    const char *pre;                    // tokenizer.ggml.pre
    std::vector<const char *> control;  // control tokens, after the byte and merged tokens
    int bos, eos, pad;                  // indices into `control`; -1: none
    int add_bos;                        // tokenizer.ggml.add_bos_token: 0, 1, or -1 (absent)
};

struct Preset {
    const char *name;          // as given to --preset
    const char *arch;          // general.architecture
    const char *display_name;  // general.name
    uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
    double rope_base;  // 0 for learned positions (gpt2)
    double norm_eps;
    bool qkv_bias;              // qwen2's attn_q/k/v biases
    double llama3_rope_factor;  // > 0: a rope_freqs.weight tensor as Llama 3.1+ files carry
    VocabStyle vocab;
    // Shapes the fields above do not describe; the defaults are the dense models'.
    bool output = false;          // an output.weight of its own (false: tied to the embedding)
    uint32_t head_dim = 0;        // 0: n_embd / n_head (else attention.key_length is written)
    uint32_t n_expert = 0;        // mixture of experts (qwen2moe, gpt-oss): experts per layer,
    uint32_t n_expert_used = 0;   // chosen per token,
    uint32_t n_ff_exp = 0;        // each expert's FFN width,
    uint32_t n_ff_shexp = 0;      // and Qwen2-MoE's shared expert's
    uint32_t sliding_window = 0;  // gpt-oss, gemma2: the window of the even layers (gemma3:
                                  // of five layers in six)
    double yarn_factor = 0;       // > 0: rope.scaling.type "yarn" with this factor
    uint32_t yarn_orig_ctx = 0;   // and this original context
    // phi3: the rotated dims of each head (0: all of them) and LongRoPE: rot_dim / 2 long and
    // short frequency factors (rope_factors_long / _short.weight) over this original context.
    uint32_t rot_dim = 0;
    const float *longrope_long = nullptr, *longrope_short = nullptr;
    uint32_t longrope_orig_ctx = 0;
    double attn_softcap = 0;   // gemma2: attn_logit_softcapping
    double final_softcap = 0;  // gemma2: final_logit_softcapping
    // granite: embedding_scale, residual_scale, attention.scale and logit_scale (0: not
    // written; HF's embedding_multiplier, residual_multiplier, attention_multiplier and
    // logits_scaling, as GraniteModel's converter writes them).
    double embedding_scale = 0, residual_scale = 0, attention_scale = 0, logit_scale = 0;
};

const Preset *find_preset(const std::string &name);
std::string preset_names();  // "gpt2-124m qwen2.5-0.5b ...", for usage texts

// How make-model fills a tensor.
enum class Fill {
    Matrix,        // uniform in +-sqrt(3 / columns)
    NormWeight,    // 1 +- 0.2
    Bias,          // +- 0.05 (norm biases too)
    RopeFactors,   // Llama 3's frequency factors, computed
    LongRopeLong,  // the preset's LongRoPE factors (Phi-3), as its config.json has them
    LongRopeShort,
    Router,  // a MoE router: like Matrix, but always stored F32 (as llama.cpp keeps it)
};

struct TensorSpec {
    std::string name;
    std::vector<uint64_t> dims;  // innermost first
    Fill fill;
};

// Every tensor of the preset with `n_layers` blocks, in file order.
std::vector<TensorSpec> preset_tensors(const Preset &p, uint32_t n_layers);

// general.architecture, general.type, general.name and the <arch>.* hyperparameters, in the
// order llama.cpp's converters write them.
void write_hparams(const Preset &p, uint32_t n_layers, vkllm::format::GgufWriter &w);

// Llama 3's rope_freqs.weight (head_dim / 2 factors), as convert_hf_to_gguf.py computes it.
std::vector<float> llama3_rope_factors(const Preset &p);

}  // namespace vkllm_tool
