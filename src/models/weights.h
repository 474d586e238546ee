// A model's tensors on the device, checked against its configuration. The ranges only: the
// device memory holding them is the loader's caller's (engine::Model), so this header needs
// none of the gpu layer's Vulkan objects.
#pragma once

#include <functional>
#include <vector>

#include "format/gguf.h"
#include "gpu/tensor.h"
#include "models/config.h"

namespace vkllm::gpu {
class Buffer;
class Context;
}  // namespace vkllm::gpu

namespace vkllm::models {

struct LayerWeights {
    gpu::BufferRange attn_norm, ffn_norm;  // F32 vectors
    gpu::Matrix wq, wk, wv, wo;   // GPT-2's fused attn_qkv is uploaded as its three row blocks
    gpu::BufferRange bq, bk, bv;  // size 0 when the model has no biases
    // wq, wk and wv as one matrix (gpu::stack_rows), and their biases likewise, where the loader
    // placed them back to back (it always tries); no data where it could not.
    gpu::Matrix wqkv;
    gpu::BufferRange bqkv;
    gpu::BufferRange q_norm, k_norm;  // size 0 unless Qwen3, Qwen3-MoE, Gemma 3 (per head) or
                                      // OLMo 2 (rows)
    // Gemma 2 and 3, OLMo 2: norms of the attention's and the FFN's output (size 0 otherwise).
    // OLMo 2 has no attn_norm or ffn_norm (size 0). BERT: the LayerNorms of the residual stream
    // after the attention's add and after the FFN's (attn_output_norm, layer_output_norm), with
    // their biases.
    gpu::BufferRange post_attn_norm, post_ffn_norm;
    gpu::BufferRange post_attn_norm_b, post_ffn_norm_b;
    gpu::Matrix gate, up, down;  // no gate for GPT-2
    // GPT-2 only (size 0 otherwise): LayerNorm biases, output projection and MLP biases (GPT-OSS
    // has bo too).
    gpu::BufferRange attn_norm_b, ffn_norm_b, bo, b_up, b_down;
    // Mixture of experts: the router (bias: GPT-OSS), the experts and their biases (GPT-OSS,
    // [n_expert][rows] F32); Qwen2-MoE's shared expert is gate/up/down above, gated by the
    // single row gate_inp_shexp. GPT-OSS's attention sinks, one logit per query head.
    gpu::Matrix gate_inp, gate_inp_shexp;
    gpu::BufferRange gate_inp_b;
    gpu::ExpertMatrix gate_exps, up_exps, down_exps;
    gpu::BufferRange gate_exps_b, up_exps_b, down_exps_b;
    gpu::BufferRange sinks;
};

struct ModelWeights {
    gpu::Matrix token_embd;
    // Learned positions, n_ctx_train rows: GPT-2's; BERT's with the first token type's row added
    gpu::Matrix position_embd;
    gpu::BufferRange embd_norm, embd_norm_b;  // BERT: the LayerNorm of the embeddings
    gpu::BufferRange output_norm_b;
    gpu::Matrix output;  // the embedding again when tied
    gpu::BufferRange output_norm;
    std::vector<LayerWeights> layers;
    uint64_t device_bytes = 0;  // bytes of the tensors placed in the arenas
};

// Called after each tensor with the bytes uploaded so far and in all; returning false stops
// the load (VKLLM_ERR_CANCELLED, nothing kept).
using LoadProgress = std::function<bool(uint64_t done, uint64_t total)>;

// Uploads every tensor the architecture uses into a few large buffers, appended to `arenas`,
// which must outlive the weights. VKLLM_ERR_FORMAT names a missing tensor or one of the wrong
// shape; VKLLM_ERR_UNSUPPORTED names a tensor whose type this build cannot run. On failure
// nothing is appended.
ModelWeights load_weights(gpu::Context &ctx, const format::GgufFile &file,
                          const ModelConfig &config, const LoadProgress &progress,
                          std::vector<gpu::Buffer> &arenas);

}  // namespace vkllm::models
