// The plain data the kernels take: buffer ranges (BufferRange, declared with the shader
// interfaces that bind them in shaders/include/buffer_range.h), matrices and their weight types,
// the step's per-token values, attention shapes and the small enums of the element-wise ops. No
// Vulkan header is reached from here, so the layers above the GPU (models/) can describe tensors
// without it; the functions over these types live in gpu/kernels/weight_layout.h (also free of
// Vulkan) and the dispatches in gpu/kernels/*.h.
#pragma once

#include <cstdint>
#include <vector>

#include "buffer_range.h"

namespace vkllm::gpu {

// How a matrix stores its weights, one value per line of common/weight_types.def (which says
// each type's block size, ggml id and grouped layout). The block-quantized types are GGUF's
// blocks read as stored (layouts in shaders/include/weights.glsl); a row of them is whole blocks
// (32 weights, 256 for the K-quants). The values are the shaders' WTYPE (WT_<NAME> there).
//
// Q8_0_G8, Q4_0_G8, Q5_0_G8, Q6_K_G8, Q4_1_G8, Q5_1_G8 and MXFP4_G16 are Q8_0, Q4_0, Q5_0, Q6_K,
// Q4_1, Q5_1 and MXFP4 regrouped at load (group_blocks) so that every load is 16-byte aligned,
// which is what lets the fast kernels read them as texels: the blocks of a tensor, in order, in
// groups of 8 (MXFP4: 16, whose 16 exponent bytes make a whole texel), each group their scales
// (8 F16: 16 bytes; Q4_1, Q5_1: 8 F16 scale and min pairs, 32 bytes; MXFP4: 16 exponent bytes)
// then, field by field, the blocks' other fields (Q8_0: 8 x 32 quant bytes; Q4_0, Q4_1: 8 x
// 16; Q5_0, Q5_1: 8 x 4 bytes of 5th bits, then 8 x 16; Q6_K: 8 x its first 208 bytes; MXFP4:
// 16 x 16, the code of -0 stored as +0). A group is as large as its blocks. The last group is
// padded with zero blocks. Any block index u is found without knowing the tensor's size: group u /
// G, slot u % G.
enum class WeightType : uint32_t {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    NAME = WTYPE,
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL) NAME = WTYPE,
#define VKLLM_FILE_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES)
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_GROUPED_TYPE
#undef VKLLM_FILE_TYPE
};

// A row-major matrix of `rows` x `cols` weights: row r is output feature r (GGUF's [cols, rows]).
// Kernels read F16 and BF16 data as 32-bit words, so its binding covers weight_bytes() (rounded
// up to 4 bytes), as GGUF's aligned tensor data always does.
struct Matrix {
    BufferRange data;
    WeightType type = WeightType::F32;
    uint32_t rows = 0;
    uint32_t cols = 0;
};

// The experts of one mixture-of-experts tensor (GGUF [cols, rows, n_expert]): n_expert matrices
// of rows x cols one after the other, each stored like a Matrix; cols is whole units of 32.
struct ExpertMatrix {
    BufferRange data;
    WeightType type = WeightType::F32;
    uint32_t rows = 0, cols = 0, n_expert = 0;
};

// Per-token values of a step, each an int32 array with one entry per token of the step.
struct StepView {
    BufferRange positions;  // position of each token in its sequence
    BufferRange seq_ids;    // which sequence (KV cache) each token belongs to
    BufferRange kv_begin;   // first position (>= n_sink) that token may attend to
};

// How the KV cache stores K and V rows (one row: one KV head of one slot, head_dim values).
//   F32, F16: head_dim values (F16 two per word, low half first).
//   Q8_0: head_dim int8 quants then a 16-byte tail holding one F16 scale per 32 values
//         (value = scale * quant, blocks of 32 as GGUF's Q8_0; head_dim a multiple of 32, at
//         most 256), so a row is whole uvec4 and its quants load 16 at a time.
enum class KvType : uint32_t { F32 = 0, F16 = 1, Q8_0 = 2 };

// Bytes of one K or V row of `head_dim` values.
inline uint64_t kv_row_bytes(KvType type, uint32_t head_dim) {
    switch (type) {
        case KvType::F32:
            return uint64_t(head_dim) * 4;
        case KvType::F16:
            return uint64_t(head_dim) * 2;
        default:
            return uint64_t(head_dim) + 16;
    }
}

struct AttentionShape {
    uint32_t n_tokens;  // tokens in this step
    uint32_t n_heads, n_kv_heads, head_dim;
    uint32_t capacity;  // KV slots per sequence
    uint32_t n_sink;    // positions [0, n_sink) are kept in slots [0, n_sink) forever
    KvType kv_type;
    float scale;          // score scale, normally 1/sqrt(head_dim)
    uint32_t window = 0;  // sliding-window layers: only positions [pos - window + 1, pos]
    // The step's tokens come in runs of one sequence (prompt processing) rather than a token
    // or two per sequence (decoding): attention() may then tile them (attention_tiled).
    bool prefill = false;
    // > 0: each score (after the scale) becomes softcap * tanh(score / softcap) (Gemma 2).
    float softcap = 0;
};
// Where position p lives: p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink).
// (n_sink = 0 gives the plain ring slot p % capacity.)
//
// KV cache layout per layer: k_cache and v_cache are [n_seq][capacity][n_kv_heads] rows of
// kv_row_bytes(); n_seq is the binding size over the size of one sequence.
// head_dim goes up to 256 (multiples of 8 take the fast kernels), and a cache binding must
// fit in maxStorageBufferRange (VKLLM_ERR_UNSUPPORTED otherwise).

enum class RopeLayout : uint32_t {
    Interleaved = 0,  // rotate (2i, 2i+1): GGUF llama
    Neox = 1,         // rotate (i, i + rot_dim/2): Qwen2, GPT-OSS
};

// RoPE for kv_store to apply to K on its way into the cache (rot_dim 0: none): the table and
// its rows as Kernels::rope takes them, positions from the step. With `q` (size 0: none) the
// same dispatch also rotates q ([n_tokens][q_heads][head_dim]) in place, as rope() would.
struct KvRope {
    RopeLayout layout = RopeLayout::Interleaved;
    BufferRange table;
    uint32_t rot_dim = 0;
    uint32_t n_pos = 0;
    BufferRange q;
    uint32_t q_heads = 0;
};

// Where LinearKernels::linear_qkv_store puts K and V: the layer's caches, the step, the shape of
// its attention, and the RoPE to apply (its q and q_heads unused: Q is the projection's own
// output, rotated in place). `arrivals` (LinearKernels::qkv_arrivals_bytes) counts each head's
// rows stored so far; it must be zero before its first use, and each use leaves it zero.
struct KvStoreTarget {
    BufferRange k_cache, v_cache;
    StepView step;
    AttentionShape shape;
    KvRope rope;
    BufferRange arrivals;
};

// How a model scales its rotary angles: YaRN context extension (GPT-OSS; factor 0 means none)
// and per-pair frequency factors (Llama 3.1+'s rope_freqs: pair i's angle is divided by
// freq_factors[i]; empty means none).
struct RopeScaling {
    double factor = 0;      // YaRN context extension factor (freq_scale = 1 / factor)
    uint32_t orig_ctx = 0;  // the training context before extension
    double ext_factor = 1;  // how much of the ramp applies (ggml's ext_factor)
    double beta_fast = 32, beta_slow = 1;
    // The magnitude of cos and sin (ggml's attn_factor: Phi-3's LongRoPE attention factor), times
    // 1 + 0.1 ln(factor) with YaRN.
    double attn_factor = 1;
    std::vector<float> freq_factors;
};

// SwiGLUOai: GPT-OSS's clamped form, (clamp(b, -7, 7) + 1) * g * sigmoid(1.702 g), g = min(a, 7).
// GeGLU (Gemma): gelu(a) * b, GELU's tanh form.
enum class Binary : uint32_t { Add = 0, Mul = 1, SwiGLU = 4, SwiGLUOai = 5, GeGLU = 6 };
// SoftCap: y = param * tanh(x / param) (Gemma 2's final logits; param > 0).
enum class Unary : uint32_t { SiLU = 2, GELU = 3, SoftCap = 7 };

// How a router's logits choose k experts: Qwen2-MoE takes the softmax over all experts then the
// k largest (optionally renormalised); GPT-OSS the k largest logits then a softmax over them.
enum class Gating : uint32_t { SoftmaxTopK = 0, TopKSoftmax = 1 };

// Words (int32) of a route buffer for n_tokens tokens of k experts among n_expert (layout in
// shaders/moe/moe_route.comp).
inline uint64_t moe_route_words(uint32_t n_tokens, uint32_t k, uint32_t n_expert) {
    return 3 * uint64_t(n_tokens) * k + n_expert + 1;
}

// The optional end of a linear layer, done as its outputs are stored: `bias` (rows F32 values;
// size 0: none) is added to every output vector, and with `accumulate` the result is added to
// what y holds (a residual connection, in place).
struct Epilogue {
    BufferRange bias;
    bool accumulate = false;
    float scale = 1;  // the product (and its bias) times this before it is stored or added
};

// The optional start of a linear layer: x holds the un-normalised input and the kernel applies
// rms_norm(x) * weight to it (weight: cols F32 values, eps as rms_norm's; size 0: none) as it
// reads it, so the norm needs no dispatch of its own and no normalised copy is written. Only
// where Kernels::norm_fusable says so.
struct InputNorm {
    BufferRange weight;
    float eps = 0;
};

}  // namespace vkllm::gpu
