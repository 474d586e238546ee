// A step of a model as data: the ordered operations with their weights, the activations they
// read and write, and their constants. An architecture builds a plan; the engine records it
// into a command buffer once and replays it. Nothing here knows Vulkan.
#pragma once

#include <functional>
#include <optional>
#include <variant>
#include <vector>

#include "models/config.h"
#include "models/weights.h"

namespace vkllm::models {

// The activations of a step, each [rows][width] F32, owned by the session.
// Mixture of experts adds the router logits, the per-entry (token x chosen expert) expert
// activations and outputs, and Qwen2-MoE's shared expert output and gate. Hidden: the final
// hidden states of a step that makes embeddings (LogitRows::Hidden), read by the host.
enum class Act {
    X,
    H,
    Q,
    K,
    V,
    Attn,
    Gate,
    Up,
    Last,
    Logits,
    Router,
    ExpGate,
    ExpUp,
    ExpOut,
    Shared,
    SharedGate,
    Hidden
};
constexpr int kActCount = 17;

// How many rows of logits (and their argmax) a step produces.
enum class LogitRows {
    None,  // a prefill chunk that is not the last
    Last,  // the last token only (end of a prefill)
    All,   // every row (decode of several sequences)
    // No logits: every row's final hidden state (after the model's last norm, before the output
    // head) into Act::Hidden, for embeddings (engine/embed.h).
    Hidden,
};

struct StepShape {
    uint32_t n_tokens;
    LogitRows logits;
    // -1: no log-probabilities; k >= 0: each logits row's log-sum-exp and k most likely ids
    // (op::Logprobs).
    int32_t logprobs = -1;
};

// The named options of the ops below, so a plan reads without positional booleans.

// Where a linear layer's product goes.
enum class Write {
    Replace,     // out = W in (+ bias)
    Accumulate,  // out += W in (+ bias): a residual connection
};

// What a StoreKv rotates on the way into the cache (K rotated as it is stored: slots never
// need re-rotation; Q in the same dispatch: no Rope op of its own).
enum class Rope {
    None,  // learned positions, or a layer without RoPE (SmolLM3's NoPE): nothing to rotate
    KAndQ,
};

// The chosen experts' weights, as MoeRoute hands them to MoeCombine.
enum class ExpertWeights {
    AsRouted,
    Renormalized,  // rescaled to sum to 1 (Qwen2-MoE's norm_topk_prob)
};

// What a MoeLinear reads: a row per token, or a row per (token, chosen expert) entry.
enum class ExpertInput { PerToken, PerEntry };

// A gated unit (LinearSwiGlu, MoeSwiGlu).
enum class Glu {
    SwiGlu,     // silu(gate) * up
    SwiGluOai,  // GPT-OSS's clamped form (experts only)
    GeGlu,      // gelu(gate) * up, GELU's tanh form (Gemma; dense only)
};

// Whether MoeCombine adds a shared expert (Qwen2-MoE) to the routed ones.
enum class SharedExpert { None, Gated };

namespace op {
struct Embed {  // X[t] = embedding row of the step's token t, times scale
    gpu::Matrix table;
    float scale = 1;  // Gemma: sqrt(n_embd)
};
struct RmsNorm {  // out = rmsnorm(in) * weight, over rows of `cols` (per head: cols = head_dim)
    Act in, out;
    gpu::BufferRange weight;
    uint32_t cols;
};
struct LayerNorm {  // out = layernorm(in) * weight + bias, over rows of n_embd
    Act in, out;
    gpu::BufferRange weight, bias;
};
struct AddPositions {  // X[t] += table row of the position of token t (learned positions)
    gpu::Matrix table;
};
struct Gelu {  // in place
    Act io;
};
struct SoftCap {  // in place: x = cap * tanh(x / cap) (Gemma 2's final logits)
    Act io;
    float cap;
};
struct Linear {  // out = scale (W in (+ bias)), or out += that (Write::Accumulate)
    gpu::Matrix w;
    Act in, out;
    gpu::BufferRange bias;  // size 0: none
    Write write = Write::Replace;
    gpu::BufferRange norm;  // size 0: none; else in is RMS-normalised by this weight on the way
    // Granite's residual scale (on the blocks' outputs) and 1 / logit_scale (on the logits):
    // applied in the kernel's epilogue, no pass of its own.
    float scale = 1;
};
struct Add {  // out = a + b
    Act a, b, out;
};
struct StoreKv {  // K, V rows into the layer's cache ring
    uint32_t layer;
    Rope rope = Rope::None;
};
struct Attend {  // Attn = attention of Q over the layer's cache
    uint32_t layer;
    gpu::BufferRange sinks;  // GPT-OSS: a logit per head; size 0: none
};
struct LinearQkv {  // Q, K, V = the stacked projections of in (+ their stacked biases)
    gpu::Matrix w;
    Act in;
    gpu::BufferRange bias;  // size 0: none
    gpu::BufferRange norm;  // as Linear's
    // Set where the kernels store K and V (and rotate Q) in the projection's own dispatch: the
    // layer's StoreKv, which then has no op of its own.
    std::optional<StoreKv> store;
};
struct LinearSwiGlu {  // out = silu(W_gate in) * (W_up in), fused where the kernels can
    gpu::Matrix gate, up;
    Act in, out, up_out;    // up_out: the up projection, where it is not fused
    gpu::BufferRange norm;  // as Linear's
    Glu glu = Glu::SwiGlu;  // or GeGlu: gelu(W_gate in) * (W_up in)
};
struct MoeRoute {  // Router logits -> each token's experts and weights, grouped by expert
    gpu::Gating gating;
    ExpertWeights weights;
};
struct MoeLinear {  // out[entry] = W_expert in (+ bias_expert), for every (token, chosen expert)
    gpu::ExpertMatrix w;
    Act in, out;
    gpu::BufferRange bias;
    ExpertInput input;
};
// out[entry] = silu(gate_e in + gate_bias_e) * (up_e in + up_bias_e), or GPT-OSS's clamped form,
// for every (token, chosen expert e): one pass where the kernels can fuse it.
struct MoeSwiGlu {
    gpu::ExpertMatrix gate, up;
    Act in, out, up_out;  // up_out: the up products, where it is not fused
    gpu::BufferRange gate_bias, up_bias;
    Glu glu;
};
struct MoeCombine {  // H = router-weighted sum of ExpOut (+ sigmoid(SharedGate) * Shared)
    SharedExpert shared;
};
struct TakeLast {  // out row 0 = in's last row; the ops after it work on that one row
    Act in, out;
};
// The session's token ids (one per row of in) = the argmax of each row over the vocabulary's
// tokens (the columns past them, padding of the output head, never win): what greedy decoding
// and chained steps read.
struct Argmax {
    Act in;
};
// Each row of `in` summarised over the vocabulary's tokens: its log-sum-exp and its `top` most
// likely ids with their log-probabilities, into the session's log-probability rows (of a
// chained step, its slice): what log-softmax outputs and generation's logprobs read.
struct Logprobs {
    Act in;
    uint32_t top;
};
}  // namespace op

// Every op a plan may hold. The engine interprets it with std::visit and one handler per op, so
// an op added here and not there does not compile.
using Op = std::variant<op::Embed, op::RmsNorm, op::LayerNorm, op::AddPositions, op::Gelu,
                        op::Linear, op::LinearQkv, op::Add, op::StoreKv, op::Attend,
                        op::LinearSwiGlu, op::TakeLast, op::MoeRoute, op::MoeSwiGlu, op::MoeLinear,
                        op::MoeCombine, op::SoftCap, op::Argmax, op::Logprobs>;

struct Plan {
    std::vector<Op> ops;
};

// Width of each activation for this model.
uint32_t act_width(const ModelConfig &c, Act a);

// Whether the kernels can apply the RMS norm of weight `norm` to the input of a linear layer of
// w reading `rows` rows of `in` themselves (gpu::Kernels::norm_fusable).
using NormFusable =
    std::function<bool(const gpu::Matrix &w, Act in, uint32_t rows, const gpu::BufferRange &norm)>;
// Whether the kernels can store layer `layer`'s K and V in the dispatch of its stacked QKV
// projection w over `rows` rows of `in` (gpu::Kernels::qkv_store_fusable).
using QkvStoreFusable =
    std::function<bool(const gpu::Matrix &w, Act in, uint32_t rows, uint32_t layer)>;
// The fusions the kernels offer; an empty one is never taken.
struct Fusions {
    NormFusable norm;
    QkvStoreFusable qkv_store;
};

// The decoder-only transformer of llama, qwen2 and qwen3 (pre-norm, RoPE, GQA, SwiGLU) and of
// gpt2 (pre-LayerNorm, learned positions, GELU MLP, biases), and the mixture-of-experts
// qwen2moe and gpt-oss (routed experts grouped by expert; sinks and sliding windows),
// gemma3 (scaled embeddings, QK-norm, the attention's and the FFN's outputs RMS-normed before
// the residual add, a GELU gate; its local layers' RoPE base is the engine's table choice),
// gemma2 (gemma3's layer without QK-norm, its attention scores soft-capped by the Attend op's
// shape, its final logits by a SoftCap op) and olmo2 (no pre-norms, post-norms, QK-norm over
// whole rows), qwen3moe (qwen2moe's experts with QK-norm, renormalised weights, no shared
// expert), smollm3 (llama with no RoPE on every fourth layer) and granite (llama with its
// embedding, residual, attention and logit scales). A step that produces logits ends with
// their Argmax, and their Logprobs where the shape asks for them.
//
// An RMS norm whose every reader is a linear layer the kernels can normalise for is folded
// into them (their `norm`) where `fusions.norm` says so: no RmsNorm op, and they read its input.
// A layer's StoreKv joins its stacked QKV projection where `fusions.qkv_store` says so and no
// QK-norm comes between them.
Plan build_plan(const ModelConfig &c, const ModelWeights &w, StepShape shape,
                const Fusions &fusions = {});

}  // namespace vkllm::models
