#include "models/weights.h"

#include <cstring>

#include "common/error.h"
#include "common/half.h"

namespace vkllm::models {

namespace {

class Loader {
  public:
    Loader(gpu::Context &ctx, const format::GgufFile &f, const LoadProgress &progress)
        : ctx_(ctx), f_(f), progress_(progress) {
        for (const auto &t : f.tensors())
            total_ += t.n_bytes;
    }

    gpu::Matrix matrix(const std::string &name, uint32_t cols, uint32_t rows) {
        const format::TensorInfo &t = tensor(name, cols, rows);
        gpu::WeightType type;
        if (!gpu::weight_type_from_ggml(t.type->id, &type))
            fail(VKLLM_ERR_UNSUPPORTED, "%s: tensor %s has type %s, which this build cannot run",
                 f_.path().c_str(), name.c_str(), t.type->name);
        if (cols % gpu::block_weights(type))
            fail(VKLLM_ERR_FORMAT, "%s: tensor %s has rows of %u weights, not whole %s blocks",
                 f_.path().c_str(), name.c_str(), cols, t.type->name);
        // F16/BF16 data is bound in whole words; GGUF's tensor alignment always leaves room.
        uint64_t bytes = gpu::weight_bytes(type, t.n_elements);
        gpu::Buffer b = ctx_.allocator().allocate(bytes, gpu::MemoryKind::Device);
        std::vector<uint8_t> padded;
        const uint8_t *src = f_.tensor_data(t);
        if (bytes != t.n_bytes) {  // the last element of an odd count: pad on the host
            padded.assign(src, src + t.n_bytes);
            padded.resize(bytes, 0);
            src = padded.data();
        }
        ctx_.transfer().upload(b, src, bytes);
        gpu::Matrix m{b.range(), type, rows, cols};
        keep(std::move(b), t.n_bytes);
        return m;
    }

    // Norm weights and biases are small: converted to F32 whatever the file stores.
    gpu::BufferRange vector(const std::string &name, uint32_t n, bool optional = false) {
        const format::TensorInfo *t = f_.find_tensor(name);
        if (!t && optional) return gpu::BufferRange{};
        tensor(name, n, 1);
        std::vector<float> v(n);
        const uint8_t *d = f_.tensor_data(*t);
        for (uint32_t i = 0; i < n; ++i) {
            if (t->type->id == 0) {
                std::memcpy(&v[i], d + 4 * i, 4);
            } else if (t->type->id == 1 || t->type->id == 30) {
                uint16_t h;
                std::memcpy(&h, d + 2 * i, 2);
                if (t->type->id == 1) {
                    v[i] = half_to_float(h);
                } else {
                    uint32_t bits = uint32_t(h) << 16;
                    std::memcpy(&v[i], &bits, 4);
                }
            } else {
                fail(VKLLM_ERR_UNSUPPORTED, "%s: tensor %s has type %s, expected F32/F16/BF16",
                     f_.path().c_str(), name.c_str(), t->type->name);
            }
        }
        gpu::Buffer b = ctx_.allocator().allocate(uint64_t(n) * 4, gpu::MemoryKind::Device);
        ctx_.transfer().upload(b, v.data(), v.size() * 4);
        gpu::BufferRange r = b.range();
        keep(std::move(b), t->n_bytes);
        return r;
    }

    ModelWeights take() { return std::move(w_); }
    ModelWeights &weights() { return w_; }

  private:
    const format::TensorInfo &tensor(const std::string &name, uint64_t cols, uint64_t rows) {
        const format::TensorInfo *t = f_.find_tensor(name);
        if (!t) fail(VKLLM_ERR_FORMAT, "%s: tensor %s is missing", f_.path().c_str(), name.c_str());
        bool ok = t->dims[0] == cols && t->dims[1] == rows && t->dims[2] == 1 && t->dims[3] == 1;
        if (!ok)
            fail(VKLLM_ERR_FORMAT,
                 "%s: tensor %s has shape [%llu, %llu, %llu, %llu], expected [%llu, %llu]",
                 f_.path().c_str(), name.c_str(), (unsigned long long)t->dims[0],
                 (unsigned long long)t->dims[1], (unsigned long long)t->dims[2],
                 (unsigned long long)t->dims[3], (unsigned long long)cols,
                 (unsigned long long)rows);
        return *t;
    }

    void keep(gpu::Buffer b, uint64_t file_bytes) {
        w_.device_bytes += b.size();
        w_.storage.push_back(std::move(b));
        done_ += file_bytes;
        if (progress_ && !progress_(done_, total_))
            fail(VKLLM_ERR_CANCELLED, "model load cancelled by the progress callback");
    }

    gpu::Context &ctx_;
    const format::GgufFile &f_;
    const LoadProgress &progress_;
    ModelWeights w_;
    uint64_t done_ = 0, total_ = 0;
};

}  // namespace

ModelWeights load_weights(gpu::Context &ctx, const format::GgufFile &f, const ModelConfig &c,
                          const LoadProgress &progress) {
    Loader l(ctx, f, progress);
    ModelWeights &w = l.weights();
    w.token_embd = l.matrix("token_embd.weight", c.n_embd, c.n_vocab);
    for (uint32_t i = 0; i < c.n_layer; ++i) {
        std::string b = "blk." + std::to_string(i) + ".";
        LayerWeights L;
        L.attn_norm = l.vector(b + "attn_norm.weight", c.n_embd);
        L.wq = l.matrix(b + "attn_q.weight", c.n_embd, c.q_dim());
        L.wk = l.matrix(b + "attn_k.weight", c.n_embd, c.kv_dim());
        L.wv = l.matrix(b + "attn_v.weight", c.n_embd, c.kv_dim());
        L.bq = l.vector(b + "attn_q.bias", c.q_dim(), true);
        L.bk = l.vector(b + "attn_k.bias", c.kv_dim(), true);
        L.bv = l.vector(b + "attn_v.bias", c.kv_dim(), true);
        if (c.qk_norm) {
            L.q_norm = l.vector(b + "attn_q_norm.weight", c.head_dim);
            L.k_norm = l.vector(b + "attn_k_norm.weight", c.head_dim);
        }
        L.wo = l.matrix(b + "attn_output.weight", c.q_dim(), c.n_embd);
        L.ffn_norm = l.vector(b + "ffn_norm.weight", c.n_embd);
        L.gate = l.matrix(b + "ffn_gate.weight", c.n_embd, c.n_ff);
        L.up = l.matrix(b + "ffn_up.weight", c.n_embd, c.n_ff);
        L.down = l.matrix(b + "ffn_down.weight", c.n_ff, c.n_embd);
        w.layers.push_back(L);
    }
    w.output_norm = l.vector("output_norm.weight", c.n_embd);
    w.output = c.tied_output ? w.token_embd : l.matrix("output.weight", c.n_embd, c.n_vocab);
    return l.take();
}

}  // namespace vkllm::models
