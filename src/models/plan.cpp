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
            // Mixture of experts: only a shared expert uses them (feed_forward_length is then
            // not a width anything has: Qwen3-30B-A3B's 6144).
            return c.moe() ? c.n_ff_shexp : c.n_ff;
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
        case Act::Hidden:
            return c.n_embd;
    }
    return 0;
}

namespace {

// What sets the architectures apart is read once from their rows (models/architectures.def)
// into the configuration: its norm (RMS, folded into the linear layers that read it where the
// kernels can; or GPT-2's LayerNorm with a bias), its positions (learned: nothing to rotate) and
// its FFN family; the builder below is otherwise one layer for all of them.

// Whether the layer's Q, K and V projections (and biases) are one stacked matrix.
bool stacked_qkv(const LayerWeights &L) {
    uint64_t bias = L.bq.size + L.bk.size + L.bv.size;
    return L.wqkv.data.size && L.bqkv.size == bias;
}

// The matrices that read the attention norm's output.
std::vector<const gpu::Matrix *> qkv_readers(const LayerWeights &L) {
    if (stacked_qkv(L)) return {&L.wqkv};
    return {&L.wq, &L.wk, &L.wv};
}

// The input of linear layers after a norm of `in` into H: in itself with an RMS norm folded
// into the layers, or H after a norm op.
struct NormedInput {
    Act in;
    gpu::BufferRange norm;
};

class Builder {
  public:
    Builder(const ModelConfig &c, const ModelWeights &w, StepShape shape, const Fusions &fusions)
        : c_(c),
          w_(w),
          shape_(shape),
          fusions_(fusions),
          rope_(c.learned_positions ? Rope::None : Rope::KAndQ) {}

    Plan build() {
        add(op::Embed{w_.token_embd, c_.embd_scale});
        if (c_.learned_positions) add(op::AddPositions{w_.position_embd});
        if (c_.encoder) add(op::LayerNorm{Act::X, Act::X, w_.embd_norm, w_.embd_norm_b});
        for (uint32_t i = 0; i < c_.n_layer; ++i) {
            attention(i);
            switch (c_.ffn) {
                case Ffn::SwiGlu:
                case Ffn::GeGlu:
                    swiglu(w_.layers[i]);
                    break;
                case Ffn::Gelu:
                    gelu_mlp(w_.layers[i], i + 1 == c_.n_layer);
                    break;
                case Ffn::Experts:
                case Ffn::SharedExperts:
                case Ffn::OaiExperts:
                    experts(w_.layers[i]);
                    break;
            }
        }
        if (shape_.logits == LogitRows::Hidden && !c_.encoder) {
            if (c_.norm == Norm::Layer)
                add(op::LayerNorm{Act::X, Act::Hidden, w_.output_norm, w_.output_norm_b});
            else
                add(op::RmsNorm{Act::X, Act::Hidden, w_.output_norm, c_.n_embd});
        } else if (shape_.logits != LogitRows::None && shape_.logits != LogitRows::Hidden) {
            head();
        }
        return std::move(p_);
    }

  private:
    void add(Op o) { p_.ops.push_back(std::move(o)); }

    // The norm (weight, and bias for a LayerNorm) of `in` that the linear layers `readers`
    // reading `rows` rows take as their input. An RMS norm is folded into them where `fusions.norm`
    // allows it for all of them.
    NormedInput normed(Act in, const gpu::BufferRange &weight, const gpu::BufferRange &bias,
                       uint32_t rows, const std::vector<const gpu::Matrix *> &readers) {
        if (!weight.size) return {in, {}};  // OLMo 2 and BERT: no pre-norm
        if (c_.norm == Norm::Layer) {
            add(op::LayerNorm{in, Act::H, weight, bias});
            return {Act::H, {}};
        }
        bool fold = bool(fusions_.norm);
        for (const gpu::Matrix *m : readers)
            fold = fold && fusions_.norm(*m, in, rows, weight);
        if (fold) return {in, weight};
        add(op::RmsNorm{in, Act::H, weight, c_.n_embd});
        return {Act::H, {}};
    }

    // X += the attention block of layer i: norm (none for OLMo 2), Q/K/V projections (one op
    // where they are stacked), QK-norm (per head, or OLMo 2's over whole rows), the cache,
    // attention, the output projection (post-normed for Gemma and OLMo 2).
    void attention(uint32_t i) {
        const LayerWeights &L = w_.layers[i];
        NormedInput h = normed(Act::X, L.attn_norm, L.attn_norm_b, shape_.n_tokens, qkv_readers(L));
        // SmolLM3's NoPE layers store K and use Q as they are.
        op::StoreKv store{i, c_.rope_layer(i) ? rope_ : Rope::None};
        bool stored = false;  // by the projection's own dispatch
        if (stacked_qkv(L)) {
            op::LinearQkv qkv{L.wqkv, h.in, L.bqkv, h.norm, std::nullopt};
            stored = !c_.qk_norm && fusions_.qkv_store &&
                     fusions_.qkv_store(L.wqkv, h.in, shape_.n_tokens, i);
            if (stored) qkv.store = store;
            add(qkv);
        } else {
            add(op::Linear{L.wq, h.in, Act::Q, L.bq, Write::Replace, h.norm});
            add(op::Linear{L.wk, h.in, Act::K, L.bk, Write::Replace, h.norm});
            add(op::Linear{L.wv, h.in, Act::V, L.bv, Write::Replace, h.norm});
        }
        if (c_.qk_norm) {
            add(op::RmsNorm{Act::Q, Act::Q, L.q_norm, c_.q_norm_dim()});
            add(op::RmsNorm{Act::K, Act::K, L.k_norm, c_.k_norm_dim()});
        }
        if (!stored) add(store);
        add(op::Attend{i, L.sinks});
        if (c_.encoder) {
            add(op::Linear{L.wo, Act::Attn, Act::X, L.bo, Write::Accumulate});
            add(op::LayerNorm{Act::X, Act::X, L.post_attn_norm, L.post_attn_norm_b});
            return;
        }
        residual(L.wo, Act::Attn, L.bo, L.post_attn_norm);
    }

    // X += W in (+ bias) (Granite: times residual_scale), or with a post-norm (Gemma, OLMo 2)
    // X += rmsnorm(W in) * post_norm.
    void residual(const gpu::Matrix &w, Act in, const gpu::BufferRange &bias,
                  const gpu::BufferRange &post_norm) {
        if (!post_norm.size) {
            add(op::Linear{w, in, Act::X, bias, Write::Accumulate, {}, c_.residual_scale});
            return;
        }
        add(op::Linear{w, in, Act::H, bias});
        add(op::RmsNorm{Act::H, Act::H, post_norm, c_.n_embd});
        add(op::Add{Act::X, Act::H, Act::X});
    }

    // X += down(silu(gate(norm(X))) * up(norm(X))) (Gemma 3: gelu for silu, and the result
    // post-normed).
    void swiglu(const LayerWeights &L) {
        NormedInput f = normed(Act::X, L.ffn_norm, {}, shape_.n_tokens, {&L.gate, &L.up});
        add(op::LinearSwiGlu{L.gate, L.up, f.in, Act::Gate, Act::Up, f.norm,
                             c_.ffn == Ffn::GeGlu ? Glu::GeGlu : Glu::SwiGlu});
        residual(L.down, Act::Gate, {}, L.post_ffn_norm);
    }

    // X += down(gelu(up(layernorm(X)))), each with its bias; BERT: X = layernorm(X +
    // down(gelu(up(X)))), the last layer's norm writing the step's output where it makes
    // embeddings.
    void gelu_mlp(const LayerWeights &L, bool last) {
        NormedInput f = normed(Act::X, L.ffn_norm, L.ffn_norm_b, shape_.n_tokens, {&L.up});
        add(op::Linear{L.up, f.in, Act::Up, L.b_up});
        add(op::Gelu{Act::Up});
        add(op::Linear{L.down, Act::Up, Act::X, L.b_down, Write::Accumulate});
        if (!c_.encoder) return;
        Act out = last && shape_.logits == LogitRows::Hidden ? Act::Hidden : Act::X;
        add(op::LayerNorm{Act::X, out, L.post_ffn_norm, L.post_ffn_norm_b});
    }

    // X += the routed experts of each token (and Qwen2-MoE's gated shared expert). The experts
    // read the norm's output H as well as linear layers: never folded.
    void experts(const LayerWeights &L) {
        bool oss = c_.ffn == Ffn::OaiExperts;
        add(op::RmsNorm{Act::X, Act::H, L.ffn_norm, c_.n_embd});
        add(op::Linear{L.gate_inp, Act::H, Act::Router, L.gate_inp_b});
        add(op::MoeRoute{oss ? gpu::Gating::TopKSoftmax : gpu::Gating::SoftmaxTopK,
                         c_.norm_topk ? ExpertWeights::Renormalized : ExpertWeights::AsRouted});
        add(op::MoeSwiGlu{L.gate_exps, L.up_exps, Act::H, Act::ExpGate, Act::ExpUp, L.gate_exps_b,
                          L.up_exps_b, oss ? Glu::SwiGluOai : Glu::SwiGlu});
        add(op::MoeLinear{L.down_exps, Act::ExpGate, Act::ExpOut, L.down_exps_b,
                          ExpertInput::PerEntry});
        if (c_.n_ff_shexp) {
            add(op::LinearSwiGlu{L.gate, L.up, Act::H, Act::Gate, Act::Up});
            add(op::Linear{L.down, Act::Gate, Act::Shared, {}});
            add(op::Linear{L.gate_inp_shexp, Act::H, Act::SharedGate, {}});
        }
        add(op::MoeCombine{c_.n_ff_shexp ? SharedExpert::Gated : SharedExpert::None});
        add(op::Add{Act::X, Act::H, Act::X});
    }

    // The logits of the rows the step asks for (of the last token only at the end of a
    // prefill), and their argmax.
    void head() {
        Act from = Act::X;
        uint32_t rows = shape_.n_tokens;
        if (shape_.logits == LogitRows::Last && shape_.n_tokens > 1) {
            add(op::TakeLast{Act::X, Act::Last});
            from = Act::Last;
            rows = 1;
        }
        NormedInput o = normed(from, w_.output_norm, w_.output_norm_b, rows, {&w_.output});
        add(op::Linear{
            w_.output, o.in, Act::Logits, {}, Write::Replace, o.norm, 1.0f / c_.logit_scale});
        if (c_.final_softcap > 0) add(op::SoftCap{Act::Logits, c_.final_softcap});
        add(op::Argmax{Act::Logits});
        if (shape_.logprobs >= 0) add(op::Logprobs{Act::Logits, uint32_t(shape_.logprobs)});
    }

    const ModelConfig &c_;
    const ModelWeights &w_;
    StepShape shape_;
    const Fusions &fusions_;
    Rope rope_;  // what StoreKv rotates on a layer with RoPE
    Plan p_;
};

}  // namespace

Plan build_plan(const ModelConfig &c, const ModelWeights &w, StepShape shape,
                const Fusions &fusions) {
    return Builder(c, w, shape, fusions).build();
}

}  // namespace vkllm::models
