#include "models/weights.h"

#include <cstring>

#include "common/error.h"
#include "common/half.h"
#include "gpu/context.h"

namespace vkllm::models {

namespace {

// Tensors are placed back to back in a few large buffers sized from the file (arenas), so the
// device memory of a model is its tensor data, not the unused tail of generic allocation
// blocks. On failure the arenas go back with the Loader: nothing is kept.
class Loader {
  public:
    Loader(gpu::Context &ctx, const format::GgufFile &f, const LoadProgress &progress)
        : ctx_(ctx), f_(f), progress_(progress) {
        align_ = ctx.device().caps().storage_offset_align;
        for (const auto &t : f.tensors()) {
            total_ += t.n_bytes;
            // Matrices as stored (whole words); vectors widened to F32. Tensors the
            // architecture does not use make this an overestimate of at most their size.
            uint64_t bytes = t.n_dims == 1 ? t.n_elements * 4 : (t.n_bytes + 3) / 4 * 4;
            left_ += (bytes + align_ - 1) / align_ * align_;
        }
    }

    gpu::Matrix matrix(const std::string &name, uint32_t cols, uint32_t rows) {
        return matrices(name, cols, {rows})[0];
    }

    // A tensor of sum(rows) rows uploaded as consecutive row blocks of those sizes (GPT-2's
    // fused QKV as Q, K and V), each a matrix of its own.
    // The experts of a mixture-of-experts tensor [cols, rows, n_expert], uploaded as stored.
    gpu::ExpertMatrix experts(const std::string &name, uint32_t cols, uint32_t rows,
                              uint32_t n_expert) {
        tensor(name, cols, rows, n_expert);
        gpu::ExpertMatrix e;
        gpu::Matrix all = matrices(name, cols, {rows * n_expert}, n_expert)[0];
        e.data = all.data, e.type = all.type, e.rows = rows, e.cols = cols, e.n_expert = n_expert;
        return e;
    }

    std::vector<gpu::Matrix> matrices(const std::string &name, uint32_t cols,
                                      const std::vector<uint32_t> &rows, uint32_t planes = 1) {
        uint32_t total_rows = 0;
        for (uint32_t r : rows)
            total_rows += r;
        const format::TensorInfo &t = planes == 1 ? tensor(name, cols, total_rows)
                                                  : tensor(name, cols, total_rows / planes, planes);
        gpu::WeightType type;
        if (!gpu::weight_type_from_ggml(t.type->id, &type))
            fail(VKLLM_ERR_UNSUPPORTED, "%s: tensor %s has type %s, which this build cannot run",
                 f_.path().c_str(), name.c_str(), t.type->name);
        if (cols % gpu::block_weights(type))
            fail(VKLLM_ERR_FORMAT, "%s: tensor %s has rows of %u weights, not whole %s blocks",
                 f_.path().c_str(), name.c_str(), cols, t.type->name);
        uint64_t row_bytes = uint64_t(cols) / gpu::block_weights(type) * gpu::block_bytes(type);
        const uint8_t *src = f_.tensor_data(t);
        // Q8_0, Q4_0, Q5_0, Q6_K, Q4_1 and Q5_1 are regrouped so that the kernels read them with
        // aligned 16-byte loads.
        gpu::WeightType placed = gpu::grouped_form(type);
        std::vector<gpu::Matrix> out;
        for (uint32_t r : rows) {
            // Kernels bind whole words: an F16/BF16 block of an odd count is padded on the host.
            uint64_t stored = r * row_bytes, bytes = gpu::weight_bytes(placed, uint64_t(r) * cols);
            std::vector<uint8_t> padded;
            const uint8_t *p = src;
            if (placed != type) {
                padded =
                    gpu::group_blocks(type, src, uint64_t(r) * (cols / gpu::block_weights(type)));
                p = padded.data();
            } else if (bytes != stored) {
                padded.assign(src, src + stored);
                padded.resize(bytes, 0);
                p = padded.data();
            }
            out.push_back(gpu::Matrix{place(p, bytes), placed, r, cols});
            src += stored;
        }
        loaded(t.n_bytes);
        return out;
    }

    // Norm weights and biases are small: converted to F32 whatever the file stores.
    gpu::BufferRange vector(const std::string &name, uint32_t n, bool optional = false) {
        return vectors(name, {n}, optional)[0];
    }

    // A vector of sum(sizes) values uploaded as consecutive pieces of those sizes.
    std::vector<gpu::BufferRange> vectors(const std::string &name,
                                          const std::vector<uint32_t> &sizes, bool optional = false,
                                          uint32_t planes = 1) {
        const format::TensorInfo *t = f_.find_tensor(name);
        if (!t && optional) return std::vector<gpu::BufferRange>(sizes.size());
        uint32_t n = 0;
        for (uint32_t k : sizes)
            n += k;
        tensor(name, n / planes, planes);
        std::vector<float> v = floats(name, *t, n);
        std::vector<gpu::BufferRange> out;
        uint32_t at = 0;
        for (uint32_t k : sizes) {
            out.push_back(place(v.data() + at, uint64_t(k) * 4));
            at += k;
        }
        loaded(t->n_bytes);
        return out;
    }

    // BERT's learned positions with the first token type's row added to each: llama.cpp's graph
    // adds token_types' row 0 to every token (it takes no token types as input), so the sum is
    // one table, F32 whatever the file stores.
    gpu::Matrix positions_with_type0(uint32_t cols, uint32_t rows) {
        const format::TensorInfo &pt = tensor("position_embd.weight", cols, rows);
        const format::TensorInfo *tt = f_.find_tensor("token_types.weight");
        if (!tt || tt->n_dims != 2 || tt->dims[0] != cols || tt->dims[1] < 1)
            fail(VKLLM_ERR_FORMAT, "%s: token_types.weight is missing or not [%u, n_types]",
                 f_.path().c_str(), cols);
        std::vector<float> table = floats("position_embd.weight", pt, uint64_t(cols) * rows);
        std::vector<float> type0 = floats("token_types.weight", *tt, cols);
        for (uint64_t i = 0; i < table.size(); ++i)
            table[i] += type0[i % cols];
        loaded(pt.n_bytes + tt->n_bytes);
        return gpu::Matrix{place(table.data(), table.size() * 4), gpu::WeightType::F32, rows, cols};
    }

    // A [n, planes] tensor (one vector per expert) as planes x n F32 values.
    gpu::BufferRange planes(const std::string &name, uint32_t n, uint32_t planes) {
        return vectors(name, {n * planes}, false, planes)[0];
    }

    // The weights, their arenas appended to `arenas`.
    ModelWeights take(std::vector<gpu::Buffer> &arenas) {
        for (gpu::Buffer &b : arenas_)
            arenas.push_back(std::move(b));
        arenas_.clear();
        return std::move(w_);
    }
    ModelWeights &weights() { return w_; }

  private:
    // The first n values of an F32, F16 or BF16 tensor, as floats.
    std::vector<float> floats(const std::string &name, const format::TensorInfo &t, uint64_t n) {
        std::vector<float> v(n);
        const uint8_t *d = f_.tensor_data(t);
        for (uint64_t i = 0; i < n; ++i) {
            if (t.type->id == 0) {
                std::memcpy(&v[i], d + 4 * i, 4);
            } else if (t.type->id == 1 || t.type->id == 30) {
                uint16_t h;
                std::memcpy(&h, d + 2 * i, 2);
                if (t.type->id == 1) {
                    v[i] = half_to_float(h);
                } else {
                    uint32_t bits = uint32_t(h) << 16;
                    std::memcpy(&v[i], &bits, 4);
                }
            } else {
                fail(VKLLM_ERR_UNSUPPORTED, "%s: tensor %s has type %s, expected F32/F16/BF16",
                     f_.path().c_str(), name.c_str(), t.type->name);
            }
        }
        return v;
    }

    const format::TensorInfo &tensor(const std::string &name, uint64_t cols, uint64_t rows,
                                     uint64_t planes = 1) {
        const format::TensorInfo *t = f_.find_tensor(name);
        if (!t) fail(VKLLM_ERR_FORMAT, "%s: tensor %s is missing", f_.path().c_str(), name.c_str());
        bool ok =
            t->dims[0] == cols && t->dims[1] == rows && t->dims[2] == planes && t->dims[3] == 1;
        if (!ok)
            fail(VKLLM_ERR_FORMAT,
                 "%s: tensor %s has shape [%llu, %llu, %llu, %llu], expected [%llu, %llu, %llu]",
                 f_.path().c_str(), name.c_str(), (unsigned long long)t->dims[0],
                 (unsigned long long)t->dims[1], (unsigned long long)t->dims[2],
                 (unsigned long long)t->dims[3], (unsigned long long)cols, (unsigned long long)rows,
                 (unsigned long long)planes);
        return *t;
    }

    // Copies `bytes` to the device, into the current arena or a new one.
    gpu::BufferRange place(const void *src, uint64_t bytes) {
        uint64_t reserved = (bytes + align_ - 1) / align_ * align_;
        if (arenas_.empty() || used_ + reserved > arenas_.back().size()) {
            // At most 1 GiB per arena (drivers cap single allocations); the rest of the
            // estimate if that is less, but never less than this tensor.
            uint64_t size = std::max(reserved, std::min(left_, uint64_t(1) << 30));
            arenas_.push_back(ctx_.allocator().allocate(size, gpu::MemoryKind::Device, true));
            used_ = 0;
        }
        gpu::Buffer &arena = arenas_.back();
        ctx_.transfer().upload(arena, src, bytes, used_);
        gpu::BufferRange r = arena.range(used_, bytes);
        used_ += reserved;
        left_ -= std::min(left_, reserved);
        w_.device_bytes += bytes;
        return r;
    }

    void loaded(uint64_t file_bytes) {
        done_ += file_bytes;
        if (progress_ && !progress_(done_, total_))
            fail(VKLLM_ERR_CANCELLED, "model load cancelled by the progress callback");
    }

    gpu::Context &ctx_;
    const format::GgufFile &f_;
    const LoadProgress &progress_;
    ModelWeights w_;
    std::vector<gpu::Buffer> arenas_;  // holding every range of w_
    uint64_t done_ = 0, total_ = 0;
    uint64_t align_ = 256;
    uint64_t left_ = 0;  // estimated bytes still to place
    uint64_t used_ = 0;  // bytes used in the last arena
};

// Qwen2-MoE, GPT-OSS and Qwen3-MoE: attention as qwen2 (GPT-OSS adds an output bias and sinks;
// Qwen3-MoE per-head q/k norms), then a router over n_expert experts (Qwen2-MoE also a shared
// expert; GPT-OSS expert biases).
void load_moe_layer(Loader &l, const ModelConfig &c, const std::string &b, LayerWeights &L) {
    uint32_t d = c.n_embd;
    bool oss = c.ffn == Ffn::OaiExperts;
    L.attn_norm = l.vector(b + "attn_norm.weight", d);
    L.wq = l.matrix(b + "attn_q.weight", d, c.q_dim());
    L.wk = l.matrix(b + "attn_k.weight", d, c.kv_dim());
    L.wv = l.matrix(b + "attn_v.weight", d, c.kv_dim());
    L.bq = l.vector(b + "attn_q.bias", c.q_dim(), true);
    L.bk = l.vector(b + "attn_k.bias", c.kv_dim(), true);
    L.bv = l.vector(b + "attn_v.bias", c.kv_dim(), true);
    if (c.qk_norm) {
        L.q_norm = l.vector(b + "attn_q_norm.weight", c.head_dim);
        L.k_norm = l.vector(b + "attn_k_norm.weight", c.head_dim);
    }
    L.wo = l.matrix(b + "attn_output.weight", c.q_dim(), d);
    L.bo = l.vector(b + "attn_output.bias", d, true);
    if (c.attn_sinks) L.sinks = l.vector(b + "attn_sinks.weight", c.n_head);
    L.ffn_norm = l.vector(b + (oss ? "post_attention_norm.weight" : "ffn_norm.weight"), d);
    L.gate_inp = l.matrix(b + "ffn_gate_inp.weight", d, c.n_expert);
    L.gate_inp_b = l.vector(b + "ffn_gate_inp.bias", c.n_expert, true);
    L.gate_exps = l.experts(b + "ffn_gate_exps.weight", d, c.n_ff_exp, c.n_expert);
    L.up_exps = l.experts(b + "ffn_up_exps.weight", d, c.n_ff_exp, c.n_expert);
    L.down_exps = l.experts(b + "ffn_down_exps.weight", c.n_ff_exp, d, c.n_expert);
    if (oss) {
        L.gate_exps_b = l.planes(b + "ffn_gate_exps.bias", c.n_ff_exp, c.n_expert);
        L.up_exps_b = l.planes(b + "ffn_up_exps.bias", c.n_ff_exp, c.n_expert);
        L.down_exps_b = l.planes(b + "ffn_down_exps.bias", d, c.n_expert);
    }
    if (c.n_ff_shexp) {
        L.gate_inp_shexp = l.matrix(b + "ffn_gate_inp_shexp.weight", d, 1);
        L.gate = l.matrix(b + "ffn_gate_shexp.weight", d, c.n_ff_shexp);
        L.up = l.matrix(b + "ffn_up_shexp.weight", d, c.n_ff_shexp);
        L.down = l.matrix(b + "ffn_down_shexp.weight", c.n_ff_shexp, d);
    }
}

// Granite's optional output bias is served; its optional FFN biases are not. The special case
// of architectures.def's granite row on the loader's side: which optional tensors a file may
// have, not a value read_config could hold.
void load_granite_biases(Loader &l, const format::GgufFile &f, const ModelConfig &c,
                         const std::string &b, LayerWeights &L) {
    L.bo = l.vector(b + "attn_output.bias", c.n_embd, true);
    for (const char *t : {"ffn_gate.bias", "ffn_up.bias", "ffn_down.bias"})
        if (f.find_tensor(b + t))
            fail(VKLLM_ERR_UNSUPPORTED, "%s: tensor %s%s (an FFN bias) is not supported",
                 f.path().c_str(), b.c_str(), t);
}

void load_gpt2_layer(Loader &l, const ModelConfig &c, const std::string &b, LayerWeights &L) {
    uint32_t d = c.n_embd;
    L.attn_norm = l.vector(b + "attn_norm.weight", d);
    L.attn_norm_b = l.vector(b + "attn_norm.bias", d);
    std::vector<gpu::Matrix> qkv =
        l.matrices(b + "attn_qkv.weight", d, {c.q_dim(), c.kv_dim(), c.kv_dim()});
    L.wq = qkv[0], L.wk = qkv[1], L.wv = qkv[2];
    std::vector<gpu::BufferRange> bqkv =
        l.vectors(b + "attn_qkv.bias", {c.q_dim(), c.kv_dim(), c.kv_dim()});
    L.bq = bqkv[0], L.bk = bqkv[1], L.bv = bqkv[2];
    L.wo = l.matrix(b + "attn_output.weight", c.q_dim(), d);
    L.bo = l.vector(b + "attn_output.bias", d);
    L.ffn_norm = l.vector(b + "ffn_norm.weight", d);
    L.ffn_norm_b = l.vector(b + "ffn_norm.bias", d);
    L.up = l.matrix(b + "ffn_up.weight", d, c.n_ff);
    L.b_up = l.vector(b + "ffn_up.bias", c.n_ff);
    L.down = l.matrix(b + "ffn_down.weight", c.n_ff, d);
    L.b_down = l.vector(b + "ffn_down.bias", d);
}

// BERT: separate Q, K and V with biases, the attention's output with its bias, then the
// LayerNorm of the residual stream after the add (attn_output_norm), a GELU MLP with biases and
// the LayerNorm after its add (layer_output_norm).
void load_bert_layer(Loader &l, const ModelConfig &c, const std::string &b, LayerWeights &L) {
    uint32_t d = c.n_embd;
    L.wq = l.matrix(b + "attn_q.weight", d, c.q_dim());
    L.wk = l.matrix(b + "attn_k.weight", d, c.kv_dim());
    L.wv = l.matrix(b + "attn_v.weight", d, c.kv_dim());
    L.bq = l.vector(b + "attn_q.bias", c.q_dim());
    L.bk = l.vector(b + "attn_k.bias", c.kv_dim());
    L.bv = l.vector(b + "attn_v.bias", c.kv_dim());
    L.wo = l.matrix(b + "attn_output.weight", c.q_dim(), d);
    L.bo = l.vector(b + "attn_output.bias", d, true);
    L.post_attn_norm = l.vector(b + "attn_output_norm.weight", d);
    L.post_attn_norm_b = l.vector(b + "attn_output_norm.bias", d);
    L.up = l.matrix(b + "ffn_up.weight", d, c.n_ff);
    L.b_up = l.vector(b + "ffn_up.bias", c.n_ff, true);
    L.down = l.matrix(b + "ffn_down.weight", c.n_ff, d);
    L.b_down = l.vector(b + "ffn_down.bias", d, true);
    L.post_ffn_norm = l.vector(b + "layer_output_norm.weight", d);
    L.post_ffn_norm_b = l.vector(b + "layer_output_norm.bias", d);
}

}  // namespace

ModelWeights load_weights(gpu::Context &ctx, const format::GgufFile &f, const ModelConfig &c,
                          const LoadProgress &progress, std::vector<gpu::Buffer> &arenas) {
    Loader l(ctx, f, progress);
    ModelWeights &w = l.weights();
    w.token_embd = l.matrix("token_embd.weight", c.n_embd, c.n_vocab);
    if (c.encoder) {
        w.position_embd = l.positions_with_type0(c.n_embd, c.n_ctx_train);
        w.embd_norm = l.vector("token_embd_norm.weight", c.n_embd);
        w.embd_norm_b = l.vector("token_embd_norm.bias", c.n_embd);
    } else if (c.learned_positions) {
        w.position_embd = l.matrix("position_embd.weight", c.n_embd, c.n_ctx_train);
    }
    for (uint32_t i = 0; i < c.n_layer; ++i) {
        std::string b = "blk." + std::to_string(i) + ".";
        LayerWeights L;
        if (c.encoder) {
            load_bert_layer(l, c, b, L);
            w.layers.push_back(L);
            continue;
        }
        if (c.ffn == Ffn::Gelu || c.moe()) {
            if (c.moe())
                load_moe_layer(l, c, b, L);
            else
                load_gpt2_layer(l, c, b, L);
            w.layers.push_back(L);
            continue;
        }
        if (c.pre_norms) L.attn_norm = l.vector(b + "attn_norm.weight", c.n_embd);
        if (c.fused_projections && f.find_tensor(b + "attn_qkv.weight")) {
            // Phi-3's qkv_proj (no bias): Q's rows, then K's, then V's, uploaded as three row
            // blocks back to back, so the stacked projection below reads them in one pass.
            std::vector<gpu::Matrix> qkv =
                l.matrices(b + "attn_qkv.weight", c.n_embd, {c.q_dim(), c.kv_dim(), c.kv_dim()});
            L.wq = qkv[0], L.wk = qkv[1], L.wv = qkv[2];
        } else {
            L.wq = l.matrix(b + "attn_q.weight", c.n_embd, c.q_dim());
            L.wk = l.matrix(b + "attn_k.weight", c.n_embd, c.kv_dim());
            L.wv = l.matrix(b + "attn_v.weight", c.n_embd, c.kv_dim());
            L.bq = l.vector(b + "attn_q.bias", c.q_dim(), true);
            L.bk = l.vector(b + "attn_k.bias", c.kv_dim(), true);
            L.bv = l.vector(b + "attn_v.bias", c.kv_dim(), true);
        }
        if (c.qk_norm) {
            L.q_norm = l.vector(b + "attn_q_norm.weight", c.q_norm_dim());
            L.k_norm = l.vector(b + "attn_k_norm.weight", c.k_norm_dim());
        }
        L.wo = l.matrix(b + "attn_output.weight", c.q_dim(), c.n_embd);
        if (c.arch == Arch::Granite) load_granite_biases(l, f, c, b, L);
        if (c.pre_norms) L.ffn_norm = l.vector(b + "ffn_norm.weight", c.n_embd);
        if (c.post_norms) {
            L.post_attn_norm = l.vector(b + "post_attention_norm.weight", c.n_embd);
            L.post_ffn_norm = l.vector(b + "post_ffw_norm.weight", c.n_embd);
        }
        if (c.fused_projections) {
            // Phi-3's gate_up_proj: ffn_up of 2 n_ff rows, the gate's first (Phi3MLP's chunk(2),
            // llama.cpp's swiglu of the split row), uploaded as two row blocks: the fused SwiGLU
            // reads them as it reads separate gate and up tensors, for every weight type, and
            // splits each by rows where it exceeds a binding.
            std::vector<gpu::Matrix> gate_up =
                l.matrices(b + "ffn_up.weight", c.n_embd, {c.n_ff, c.n_ff});
            L.gate = gate_up[0], L.up = gate_up[1];
        } else {
            L.gate = l.matrix(b + "ffn_gate.weight", c.n_embd, c.n_ff);
            L.up = l.matrix(b + "ffn_up.weight", c.n_embd, c.n_ff);
        }
        L.down = l.matrix(b + "ffn_down.weight", c.n_ff, c.n_embd);
        w.layers.push_back(L);
    }
    // Q, K and V were placed one after another: one matrix for a projection in one pass.
    for (LayerWeights &L : w.layers) {
        L.wqkv = gpu::stack_rows({L.wq, L.wk, L.wv});
        L.bqkv = gpu::stack_ranges({L.bq, L.bk, L.bv});
    }
    // An encoder's last norm is its last layer's: it has no output head.
    if (c.encoder) return l.take(arenas);
    w.output_norm = l.vector("output_norm.weight", c.n_embd);
    if (c.norm == Norm::Layer) w.output_norm_b = l.vector("output_norm.bias", c.n_embd);
    w.output = c.tied_output ? w.token_embd : l.matrix("output.weight", c.n_embd, c.n_vocab);
    return l.take(arenas);
}

}  // namespace vkllm::models
