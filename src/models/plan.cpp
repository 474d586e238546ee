#include "models/plan.h"

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
            return c.n_ff;
        case Act::Logits:
            return c.n_vocab;
    }
    return 0;
}

namespace {

void gpt2_layers(const ModelConfig &c, const ModelWeights &w, Plan &p) {
    auto add = [&p](Op o) { p.ops.push_back(std::move(o)); };
    add(op::AddPositions{w.position_embd});
    for (uint32_t i = 0; i < c.n_layer; ++i) {
        const LayerWeights &L = w.layers[i];
        add(op::LayerNorm{Act::X, Act::H, L.attn_norm, L.attn_norm_b});
        add(op::Linear{L.wq, Act::H, Act::Q, L.bq});
        add(op::Linear{L.wk, Act::H, Act::K, L.bk});
        add(op::Linear{L.wv, Act::H, Act::V, L.bv});
        add(op::StoreKv{i});
        add(op::Attend{i});
        add(op::Linear{L.wo, Act::Attn, Act::H, L.bo});
        add(op::Add{Act::X, Act::H, Act::X});
        add(op::LayerNorm{Act::X, Act::H, L.ffn_norm, L.ffn_norm_b});
        add(op::Linear{L.up, Act::H, Act::Up, L.b_up});
        add(op::Gelu{Act::Up});
        add(op::Linear{L.down, Act::Up, Act::H, L.b_down});
        add(op::Add{Act::X, Act::H, Act::X});
    }
}

}  // namespace

Plan build_plan(const ModelConfig &c, const ModelWeights &w, StepShape shape) {
    Plan p;
    auto add = [&p](Op o) { p.ops.push_back(std::move(o)); };
    add(op::Embed{w.token_embd});
    if (c.arch == Arch::Gpt2) gpt2_layers(c, w, p);
    for (uint32_t i = 0; i < c.n_layer && c.arch != Arch::Gpt2; ++i) {
        const LayerWeights &L = w.layers[i];
        add(op::RmsNorm{Act::X, Act::H, L.attn_norm, c.n_embd});
        add(op::Linear{L.wq, Act::H, Act::Q, L.bq});
        add(op::Linear{L.wk, Act::H, Act::K, L.bk});
        add(op::Linear{L.wv, Act::H, Act::V, L.bv});
        if (c.qk_norm) {
            add(op::RmsNorm{Act::Q, Act::Q, L.q_norm, c.head_dim});
            add(op::RmsNorm{Act::K, Act::K, L.k_norm, c.head_dim});
        }
        add(op::Rope{Act::Q, c.n_head});
        add(op::Rope{Act::K, c.n_head_kv});  // before K is stored: slots never need re-rotation
        add(op::StoreKv{i});
        add(op::Attend{i});
        add(op::Linear{L.wo, Act::Attn, Act::H, {}});
        add(op::Add{Act::X, Act::H, Act::X});
        add(op::RmsNorm{Act::X, Act::H, L.ffn_norm, c.n_embd});
        add(op::Linear{L.gate, Act::H, Act::Gate, {}});
        add(op::Linear{L.up, Act::H, Act::Up, {}});
        add(op::SwiGlu{Act::Gate, Act::Up, Act::Gate});
        add(op::Linear{L.down, Act::Gate, Act::H, {}});
        add(op::Add{Act::X, Act::H, Act::X});
    }
    if (shape.logits == LogitRows::None) return p;
    Act from = Act::X;
    if (shape.logits == LogitRows::Last && shape.n_tokens > 1) {
        add(op::TakeLast{Act::X, Act::Last});
        from = Act::Last;
    }
    if (c.arch == Arch::Gpt2)
        add(op::LayerNorm{from, Act::H, w.output_norm, w.output_norm_b});
    else
        add(op::RmsNorm{from, Act::H, w.output_norm, c.n_embd});
    add(op::Linear{w.output, Act::H, Act::Logits, {}});
    return p;
}

}  // namespace vkllm::models
