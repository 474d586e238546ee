#include "models/plan.h"

#include <algorithm>

namespace vkllm::models {

uint32_t act_width(const ModelConfig &c, Act a) {
    switch (a) {
        case Act::X:
        case Act::H:
        case Act::Last:
            return c.n_embd;
        case Act::Q:
        case Act::Attn:
            return c.q_dim();
        case Act::K:
        case Act::V:
            return c.kv_dim();
        case Act::Gate:
        case Act::Up:
            return std::max(c.n_ff, c.n_ff_shexp);
        case Act::Logits:
            return c.n_vocab;
        case Act::Router:
            return c.n_expert;
        case Act::ExpGate:
        case Act::ExpUp:
            return c.n_expert_used * c.n_ff_exp;
        case Act::ExpOut:
            return c.n_expert_used * c.n_embd;
        case Act::Shared:
            return c.n_ff_shexp ? c.n_embd : 0;
        case Act::SharedGate:
            return c.n_ff_shexp ? 1 : 0;
    }
    return 0;
}

namespace {

// Whether the layer's Q, K and V projections (and biases) are one stacked matrix.
bool stacked_qkv(const LayerWeights &L) {
    uint64_t bias = L.bq.size + L.bk.size + L.bv.size;
    return L.wqkv.data.size && L.bqkv.size == bias;
}

// The Q, K and V projections of `in` (norm: folded in, as Linear's): one op where they are
// stacked, three otherwise.
void qkv_projections(const LayerWeights &L, Act in, const gpu::BufferRange &norm, Plan &p) {
    if (stacked_qkv(L)) {
        p.ops.push_back(op::LinearQkv{L.wqkv, in, L.bqkv, norm});
        return;
    }
    p.ops.push_back(op::Linear{L.wq, in, Act::Q, L.bq, false, norm});
    p.ops.push_back(op::Linear{L.wk, in, Act::K, L.bk, false, norm});
    p.ops.push_back(op::Linear{L.wv, in, Act::V, L.bv, false, norm});
}

// The matrices that read the attention norm's output.
std::vector<const gpu::Matrix *> qkv_readers(const LayerWeights &L) {
    if (stacked_qkv(L)) return {&L.wqkv};
    return {&L.wq, &L.wk, &L.wv};
}

void gpt2_layers(const ModelConfig &c, const ModelWeights &w, Plan &p) {
    auto add = [&p](Op o) { p.ops.push_back(std::move(o)); };
    add(op::AddPositions{w.position_embd});
    for (uint32_t i = 0; i < c.n_layer; ++i) {
        const LayerWeights &L = w.layers[i];
        add(op::LayerNorm{Act::X, Act::H, L.attn_norm, L.attn_norm_b});
        qkv_projections(L, Act::H, {}, p);
        add(op::StoreKv{i});
        add(op::Attend{i});
        add(op::Linear{L.wo, Act::Attn, Act::X, L.bo, true});
        add(op::LayerNorm{Act::X, Act::H, L.ffn_norm, L.ffn_norm_b});
        add(op::Linear{L.up, Act::H, Act::Up, L.b_up});
        add(op::Gelu{Act::Up});
        add(op::Linear{L.down, Act::Up, Act::X, L.b_down, true});
    }
}

// The input of linear layers after the RMS norm of `in` into H: in itself with the norm
// folded into the layers where `fusable` allows it for all of them, else H after a RmsNorm op.
struct NormedInput {
    Act in;
    gpu::BufferRange norm;
};

NormedInput rms_normed(const ModelConfig &c, Plan &p, const NormFusable &fusable, Act in,
                       const gpu::BufferRange &weight, uint32_t rows,
                       const std::vector<const gpu::Matrix *> &readers) {
    bool fold = bool(fusable);
    for (const gpu::Matrix *m : readers)
        fold = fold && fusable(*m, in, rows, weight);
    if (fold) return {in, weight};
    p.ops.push_back(op::RmsNorm{in, Act::H, weight, c.n_embd});
    return {Act::H, {}};
}

void moe_layers(const ModelConfig &c, const ModelWeights &w, StepShape shape,
                const NormFusable &fusable, Plan &p) {
    auto add = [&p](Op o) { p.ops.push_back(std::move(o)); };
    bool oss = c.arch == Arch::GptOss;
    for (uint32_t i = 0; i < c.n_layer; ++i) {
        const LayerWeights &L = w.layers[i];
        NormedInput h =
            rms_normed(c, p, fusable, Act::X, L.attn_norm, shape.n_tokens, qkv_readers(L));
        qkv_projections(L, h.in, h.norm, p);
        add(op::StoreKv{i, true, true});
        add(op::Attend{i, L.sinks});
        add(op::Linear{L.wo, Act::Attn, Act::X, L.bo, true});
        add(op::RmsNorm{Act::X, Act::H, L.ffn_norm, c.n_embd});
        add(op::Linear{L.gate_inp, Act::H, Act::Router, L.gate_inp_b});
        add(op::MoeRoute{oss ? gpu::Gating::TopKSoftmax : gpu::Gating::SoftmaxTopK, c.norm_topk});
        add(op::MoeSwiGlu{L.gate_exps, L.up_exps, Act::H, Act::ExpGate, Act::ExpUp, L.gate_exps_b,
                          L.up_exps_b, oss});
        add(op::MoeLinear{L.down_exps, Act::ExpGate, Act::ExpOut, L.down_exps_b, true});
        if (c.n_ff_shexp) {
            add(op::LinearSwiGlu{L.gate, L.up, Act::H, Act::Gate, Act::Up});
            add(op::Linear{L.down, Act::Gate, Act::Shared, {}});
            add(op::Linear{L.gate_inp_shexp, Act::H, Act::SharedGate, {}});
        }
        add(op::MoeCombine{c.n_ff_shexp > 0});
        add(op::Add{Act::X, Act::H, Act::X});
    }
}

}  // namespace

Plan build_plan(const ModelConfig &c, const ModelWeights &w, StepShape shape,
                const NormFusable &fusable) {
    Plan p;
    auto add = [&p](Op o) { p.ops.push_back(std::move(o)); };
    add(op::Embed{w.token_embd});
    if (c.arch == Arch::Gpt2) gpt2_layers(c, w, p);
    if (c.moe()) moe_layers(c, w, shape, fusable, p);
    uint32_t rows = shape.n_tokens;
    for (uint32_t i = 0; i < c.n_layer && c.arch != Arch::Gpt2 && !c.moe(); ++i) {
        const LayerWeights &L = w.layers[i];
        NormedInput h = rms_normed(c, p, fusable, Act::X, L.attn_norm, rows, qkv_readers(L));
        qkv_projections(L, h.in, h.norm, p);
        if (c.qk_norm) {
            add(op::RmsNorm{Act::Q, Act::Q, L.q_norm, c.head_dim});
            add(op::RmsNorm{Act::K, Act::K, L.k_norm, c.head_dim});
        }
        // K rotated as it is stored (slots never need re-rotation), Q in the same dispatch.
        add(op::StoreKv{i, true, true});
        add(op::Attend{i});
        add(op::Linear{L.wo, Act::Attn, Act::X, {}, true});
        NormedInput f = rms_normed(c, p, fusable, Act::X, L.ffn_norm, rows, {&L.gate, &L.up});
        add(op::LinearSwiGlu{L.gate, L.up, f.in, Act::Gate, Act::Up, f.norm});
        add(op::Linear{L.down, Act::Gate, Act::X, {}, true});
    }
    if (shape.logits == LogitRows::None) return p;
    Act from = Act::X;
    if (shape.logits == LogitRows::Last && shape.n_tokens > 1) {
        add(op::TakeLast{Act::X, Act::Last});
        from = Act::Last;
    }
    if (from == Act::Last) rows = 1;
    if (c.arch == Arch::Gpt2) {
        add(op::LayerNorm{from, Act::H, w.output_norm, w.output_norm_b});
        add(op::Linear{w.output, Act::H, Act::Logits, {}});
        return p;
    }
    NormedInput o = rms_normed(c, p, fusable, from, w.output_norm, rows, {&w.output});
    add(op::Linear{w.output, o.in, Act::Logits, {}, false, o.norm});
    return p;
}

}  // namespace vkllm::models
