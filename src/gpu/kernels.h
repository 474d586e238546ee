// The compute kernels, as operations on buffer ranges. Each call records its dispatches and a
// barrier into a Recording; it picks the shader variant for the device and splits tensors that
// a single binding could not cover (maxStorageBufferRange).
#pragma once

#include <cstdint>
#include <vector>

#include "gpu/pipeline.h"
#include "gpu/recording.h"

namespace vkllm::gpu {

// How a matrix stores its weights. The block-quantized types are GGUF's blocks read as stored
// (layouts in shaders/weights.glsl); a row of them is whole blocks (32 weights, 256 for the
// K-quants). The values are the shaders' WTYPE.
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
    F32 = 0,
    F16 = 1,
    BF16 = 2,
    Q8_0 = 3,
    Q4_0 = 4,
    Q4_1 = 5,
    Q5_0 = 6,
    Q5_1 = 7,
    Q4_K = 8,
    Q5_K = 9,
    Q6_K = 10,
    MXFP4 = 11,
    Q8_0_G8 = 12,
    Q4_0_G8 = 13,
    Q5_0_G8 = 14,
    Q6_K_G8 = 15,
    Q4_1_G8 = 16,
    Q5_1_G8 = 17,
    MXFP4_G16 = 18,
};

// The grouped layout the loader stores `type` in (itself when it has none).
WeightType grouped_form(WeightType type);
// `count` blocks of Q8_0, Q4_0, Q5_0, Q6_K, Q4_1, Q5_1 or MXFP4 (GGUF's layout) in the grouped
// layout of grouped_form(): weight_bytes(grouped, count * block_weights(type)) bytes.
std::vector<uint8_t> group_blocks(WeightType type, const uint8_t *blocks, uint64_t count);

// The WeightType of GGUF tensor type `ggml_id`; false when the kernels cannot read it.
bool weight_type_from_ggml(uint32_t ggml_id, WeightType *type);
// Weights per block (1 for F32/F16/BF16) and bytes per block.
uint32_t block_weights(WeightType type);
uint32_t block_bytes(WeightType type);

// A row-major matrix of `rows` x `cols` weights: row r is output feature r (GGUF's [cols, rows]).
// Kernels read F16 and BF16 data as 32-bit words, so its binding covers weight_bytes() (rounded
// up to 4 bytes), as GGUF's aligned tensor data always does.
struct Matrix {
    BufferRange data;
    WeightType type = WeightType::F32;
    uint32_t rows = 0;
    uint32_t cols = 0;
};

// Bytes a binding of `count` weights (whole blocks) must cover: the data rounded up to whole
// words (whole groups for the grouped types).
uint64_t weight_bytes(WeightType type, uint64_t count);
// Byte offset of the first weight of row `row` of a matrix with rows of `cols` weights, or
// UINT64_MAX when a grouped type's row starts inside a group (no binding can start there).
uint64_t row_offset(WeightType type, uint32_t cols, uint64_t row);

// The matrix whose rows are those of `parts` in order (Q, K and V), where they have one type
// and width and their data lie back to back as one binding reads such a matrix; an empty
// matrix (no data) otherwise. No data moves: the parts stay valid on their own.
Matrix stack_rows(const std::vector<Matrix> &parts);
// Rows [row0, row0 + rows) of m as a matrix of their own, where row_offset() allows it (a part
// of stack_rows() always does); an empty matrix otherwise.
Matrix row_block(const Matrix &m, uint32_t row0, uint32_t rows);
// The range covering `parts` where each starts where the one before ends; empty otherwise.
BufferRange stack_ranges(const std::vector<BufferRange> &parts);

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
uint64_t kv_row_bytes(KvType type, uint32_t head_dim);

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
};
// Where position p lives: p < n_sink ? p : n_sink + (p - n_sink) % (capacity - n_sink).
// (n_sink = 0 gives the plain ring slot p % capacity.)
//
// KV cache layout per layer: k_cache and v_cache are [n_seq][capacity][n_kv_heads] rows of
// kv_row_bytes(); n_seq is the binding size over the size of one sequence.
// head_dim must be 32, 64, 80, 96 or 128, and a cache binding must fit in
// maxStorageBufferRange (VKLLM_ERR_UNSUPPORTED otherwise).

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

// SwiGLUOai: GPT-OSS's clamped form, (clamp(b, -7, 7) + 1) * g * sigmoid(1.702 g), g = min(a, 7).
enum class Binary : uint32_t { Add = 0, Mul = 1, SwiGLU = 4, SwiGLUOai = 5 };

// The experts of one mixture-of-experts tensor (GGUF [cols, rows, n_expert]): n_expert matrices
// of rows x cols one after the other, each stored like a Matrix; cols is whole units of 32.
struct ExpertMatrix {
    BufferRange data;
    WeightType type = WeightType::F32;
    uint32_t rows = 0, cols = 0, n_expert = 0;
};

// How a router's logits choose k experts: Qwen2-MoE takes the softmax over all experts then the
// k largest (optionally renormalised); GPT-OSS the k largest logits then a softmax over them.
enum class Gating : uint32_t { SoftmaxTopK = 0, TopKSoftmax = 1 };

// Words (int32) of a route buffer for n_tokens tokens of k experts among n_expert (layout in
// shaders/moe_route.comp).
uint64_t moe_route_words(uint32_t n_tokens, uint32_t k, uint32_t n_expert);

enum class Unary : uint32_t { SiLU = 2, GELU = 3 };

// How a model scales its rotary angles: YaRN context extension (GPT-OSS; factor 0 means none)
// and per-pair frequency factors (Llama 3.1+'s rope_freqs: pair i's angle is divided by
// freq_factors[i]; empty means none).
struct RopeScaling {
    double factor = 0;      // YaRN context extension factor (freq_scale = 1 / factor)
    uint32_t orig_ctx = 0;  // the training context before extension
    double ext_factor = 1;  // how much of the ramp applies (ggml's ext_factor)
    double beta_fast = 32, beta_slow = 1;
    double attn_factor = 1;  // times 1 + 0.1 ln(factor): the magnitude of cos and sin
    std::vector<float> freq_factors;
};

// cos/sin pairs for positions [0, n_pos) and pairs [0, rot_dim/2), angle = pos *
// base^(-2i/rot_dim) / freq_factors[i] (with YaRN, ggml's blend of that and the angle / factor
// by a ramp over the pairs, and the magnitude scale), computed in double once per model:
// [n_pos][rot_dim/2][2] floats.
std::vector<float> rope_table(uint32_t n_pos, uint32_t rot_dim, double base,
                              const RopeScaling &scaling = {});

// Which kernel shapes to use: lavapipe runs a workgroup as one 8-wide SIMD program and wants
// few lanes owning many rows (LAVAPIPE.md); GPUs want wide workgroups.
enum class DeviceClass { Cpu, Gpu };
DeviceClass device_class(const Device &device);

// The optional end of a linear layer, done as its outputs are stored: `bias` (rows F32 values;
// size 0: none) is added to every output vector, and with `accumulate` the result is added to
// what y holds (a residual connection, in place).
struct Epilogue {
    BufferRange bias;
    bool accumulate = false;
};

// The optional start of a linear layer: x holds the un-normalised input and the kernel applies
// rms_norm(x) * weight to it (weight: cols F32 values, eps as rms_norm's; size 0: none) as it
// reads it, so the norm needs no dispatch of its own and no normalised copy is written. Only
// where Kernels::norm_fusable says so.
struct InputNorm {
    BufferRange weight;
    float eps = 0;
};

class Kernels {
  public:
    Kernels(Device &device, Pipelines &pipelines, DeviceClass cls);

    // y[b][rows] = W x[b][cols] for b < n (decode of n sequences at once; n = 1: y = W x).
    void matvec(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                uint32_t n = 1, const Epilogue &end = Epilogue{}, const InputNorm &norm = {});
    // Y[n][rows] = X[n][cols] W^T with the kernel that suits n and the device: the batched
    // matrix-vector kernel for a few rows; for many rows the tiled matrix-matrix kernel on GPUs,
    // but on lavapipe (where that kernel is slow) the batched one over groups of 8 rows.
    void linear(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                uint32_t n, const Epilogue &end = Epilogue{}, const InputNorm &norm = {});
    // Whether linear() of w over n rows of x can apply an InputNorm of `weight` itself: where
    // it takes the texel matrix-vector kernel (decode, and lavapipe's prefill).
    bool norm_fusable(const Matrix &w, const BufferRange &x, const BufferRange &weight,
                      uint32_t n) const;
    // Y[n][rows] = silu(X gate^T) * (X up^T) (a SwiGLU feed-forward's first half). Where the
    // texel matrix-vector kernel takes both (same type and shape: decode, and lavapipe's
    // prefill), one pass over x computes both projections and the product per row; otherwise
    // two linear() and the element-wise SwiGLU, with `up_out` holding the up projection.
    // An InputNorm needs norm_fusable for both matrices.
    void linear_swiglu(Recording &rec, const Matrix &gate, const Matrix &up, const BufferRange &x,
                       const BufferRange &y, const BufferRange &up_out, uint32_t n,
                       const InputNorm &norm = {});
    // Whether linear_swiglu can fuse for these matrices and input.
    bool fusable_swiglu(const Matrix &gate, const Matrix &up, const BufferRange &x) const;
    // The attention projections from a matrix stacking them (stack_rows of wq, wk, wv, with the
    // biases stacked likewise; size 0: none): q[n][rows - 2 kv_rows], k[n][kv_rows],
    // v[n][kv_rows]. Where the texel kernel can take it (qkv_fusable) one pass over x and one
    // dispatch compute all three, each output row stored where it belongs; otherwise a
    // linear() per projection on the matrix's row blocks. An InputNorm needs norm_fusable.
    void linear_qkv(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &q,
                    const BufferRange &k, const BufferRange &v, uint32_t kv_rows, uint32_t n,
                    const BufferRange &bias = {}, const InputNorm &norm = {});
    bool qkv_fusable(const Matrix &w, const BufferRange &x, uint32_t kv_rows, uint32_t n) const;
    // Y[n][rows] = X[n][cols] W^T, for n activation rows (prefill).
    void matmul(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                uint32_t n, const Epilogue &end = Epilogue{});
    void rms_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                  const BufferRange &y, uint32_t rows, uint32_t cols, float eps);
    void layer_norm(Recording &rec, const BufferRange &x, const BufferRange &weight,
                    const BufferRange &bias, const BufferRange &y, uint32_t rows, uint32_t cols,
                    float eps);
    void softmax(Recording &rec, const BufferRange &x, const BufferRange &y, uint32_t rows,
                 uint32_t cols, float scale);
    // In place on x[n_tokens][n_heads][head_dim], positions int32[n_tokens], table from
    // rope_table() with n_pos rows.
    void rope(Recording &rec, RopeLayout layout, const BufferRange &x, const BufferRange &table,
              const BufferRange &positions, uint32_t n_tokens, uint32_t n_heads, uint32_t head_dim,
              uint32_t rot_dim, uint32_t n_pos);
    // y[i] = a[i] op b[i % nb].
    void binary(Recording &rec, Binary op, const BufferRange &a, const BufferRange &b,
                const BufferRange &y, uint32_t n, uint32_t nb);
    void unary(Recording &rec, Unary op, const BufferRange &x, const BufferRange &y, uint32_t n);
    // out[t][:] = table[ids[t]][:] (rows of ids outside the table are zero).
    void get_rows(Recording &rec, const Matrix &table, const BufferRange &ids,
                  const BufferRange &out, uint32_t n_ids);
    // Writes k[t] and v[t] (F32, [n_tokens][n_kv_heads * head_dim]) into the slot of
    // positions[t] of sequence seq_ids[t] (tokens with a negative position or a sequence
    // outside the cache are skipped), rotating k by `rope` first (k itself is left as it is).
    void kv_store(Recording &rec, const BufferRange &k, const BufferRange &v,
                  const BufferRange &k_cache, const BufferRange &v_cache, const StepView &step,
                  const AttentionShape &shape, const KvRope &rope = {});
    // out[t][h][:] = softmax over visible keys of (q[t][h] . k) * scale, times v, where the
    // visible keys of token t are the positions [0, min(n_sink, positions[t]+1)) and
    // [kv_begin[t], positions[t]] of sequence seq_ids[t], read from their slots; query head h
    // reads KV head h / (n_heads / n_kv_heads). q and out are F32 [n_tokens][n_heads][head_dim].
    // A token with no visible key (a sequence outside the cache) gets zeros. `sinks` (F32 per
    // query head, GPT-OSS) adds a logit without a value to each head's softmax.
    //
    // Where a step has too few workgroups to fill the device (a decode on a GPU), the keys are
    // split into slices, each a workgroup, merged by a second pass (split-K, "flash
    // decoding"); `scratch` (attention_scratch_bytes(shape) bytes) holds the slices' results.
    void attention(Recording &rec, const BufferRange &q, const BufferRange &k_cache,
                   const BufferRange &v_cache, const BufferRange &out, const StepView &step,
                   const AttentionShape &shape, const BufferRange &sinks = {},
                   const BufferRange &scratch = {});
    // Whether attention() takes the tiled kernel for `shape`: GPUs, prefill steps of more than
    // 8 tokens, where it fits (shared memory, llvmpipe's loop limit).
    bool attention_tiled(const AttentionShape &shape) const;
    // The key slices attention() uses for `shape` (1: no split) and the scratch it needs.
    uint32_t attention_splits(const AttentionShape &shape) const;
    uint64_t attention_scratch_bytes(const AttentionShape &shape) const;
    // Mixture of experts. moe_route: from router logits [n_tokens][n_expert] (F32), each token's
    // k experts and weights, then the entries (token t's j-th expert is entry t k + j) grouped
    // by expert, into `route`. k <= 8, n_expert <= 256.
    void moe_route(Recording &rec, const BufferRange &logits, const BufferRange &route,
                   uint32_t n_tokens, uint32_t n_expert, uint32_t k, Gating gating, bool norm);
    // y[e][:] = W_x in_e (+ bias_x) for every entry e routed to expert x, each expert's weights
    // read once for its group. in_e is x[e / k] (x_per_entry false: [n_tokens][cols]) or x[e]
    // (true: [n_tokens k][cols]); y is [n_tokens k][rows]; bias [n_expert][rows] F32 or empty.
    void moe_matvec(Recording &rec, const ExpertMatrix &w, const BufferRange &x,
                    const BufferRange &y, const BufferRange &route, const BufferRange &bias,
                    uint32_t n_tokens, uint32_t k, bool x_per_entry);
    // y[e][:] = act(gate_x in_e + gate_bias_x, up_x in_e + up_bias_x) for every entry e routed
    // to expert x, in_e = x[e / k] (a feed-forward's first half; act SwiGLU or SwiGLUOai, as
    // binary()'s; the biases both present or both empty). Where the texel kernel takes both
    // tensors (moe_swiglu_fusable) one pass over x computes both products and the activation;
    // otherwise two moe_matvec and the element-wise op, with `up_out` holding the up products.
    void moe_swiglu(Recording &rec, const ExpertMatrix &gate, const ExpertMatrix &up,
                    const BufferRange &x, const BufferRange &y, const BufferRange &up_out,
                    const BufferRange &route, const BufferRange &gate_bias,
                    const BufferRange &up_bias, uint32_t n_tokens, uint32_t k, Binary act);
    bool moe_swiglu_fusable(const ExpertMatrix &gate, const ExpertMatrix &up, const BufferRange &x,
                            const BufferRange &gate_bias, const BufferRange &up_bias) const;
    // out[t][:] = sum_j weight(t k + j) y[t k + j][:] (+ sigmoid(shared_gate[t]) shared[t][:]
    // when shared is not empty); out is [n_tokens][n].
    void moe_combine(Recording &rec, const BufferRange &y, const BufferRange &route,
                     const BufferRange &shared, const BufferRange &shared_gate,
                     const BufferRange &out, uint32_t n_tokens, uint32_t n, uint32_t k);
    // ids[r] (int32) = index of the largest of the first `n` values of row r of x ([rows][cols]
    // F32, 1 <= n <= cols), lowest index on ties (NaNs are never chosen over a number). Logits
    // rows of a padded embedding pass the tokenizer's size as `n`.
    void argmax(Recording &rec, const BufferRange &x, const BufferRange &ids, uint32_t rows,
                uint32_t cols, uint32_t n);

    // Between chained decode steps of `n` sequences: tokens[r] = ids[r], out[step * n + r] =
    // ids[r], and each sequence one position on (the step's positions and kv_begin, whose
    // visible window is the sinks and the most recent `window` positions).
    void chain_advance(Recording &rec, const BufferRange &ids, const BufferRange &tokens,
                       const StepView &step_view, const BufferRange &out, uint32_t n, uint32_t step,
                       uint32_t window, uint32_t n_sink);

    // Whether matvec may read weights and inputs as texels where their layout allows (the
    // default); tests turn it off to check the storage-buffer path on the same device.
    void set_texel_loads(bool on) { texel_loads_ = on; }
    // Whether these kernels take lavapipe's shapes (DeviceClass::Cpu) rather than GPUs'.
    bool cpu_shapes() const { return cpu_class_; }
    // Forces attention() to split the keys of every step into `n` slices (0: the device's
    // choice); tests check the split-K path on any device with it.
    void set_attention_splits(uint32_t n) { attention_splits_ = n; }
    // Forces attention() to take the tiled kernel for every step it fits (false: the device's
    // choice); tests check it on any device with it.
    void set_attention_tiled(bool on) { attention_tiled_forced_ = on; }

  private:
    // linear_qkv's K and V outputs, for the fused dispatch: rows from q_rows on go to k, from
    // q_rows + kv_rows on to v.
    struct StackedOutputs {
        BufferRange k, v;
        uint32_t q_rows, kv_rows;
    };
    bool texel_matvec(const Matrix &w, const BufferRange &x) const;
    // Whether every group of n rows takes the texel kernel (matvec_row_groups' x slices too).
    bool texel_groups(const Matrix &w, const BufferRange &x, uint32_t n) const;
    // matvec, and with `up` the fused SwiGLU of linear_swiglu.
    void matvec(Recording &rec, const Matrix &w, const Matrix *up, const BufferRange &x,
                const BufferRange &y, uint32_t n, const Epilogue &end, const InputNorm &norm,
                const StackedOutputs *qkv = nullptr);
    // Whether n rows of x may go through matvec in groups of 8 (always for up to 8), and doing so.
    bool row_groups_fit(const Matrix &w, uint32_t n) const;
    void matvec_row_groups(Recording &rec, const Matrix &w, const Matrix *up, const BufferRange &x,
                           const BufferRange &y, uint32_t n, const Epilogue &end,
                           const InputNorm &norm, const StackedOutputs *qkv = nullptr);
    // moe_matvec, and with `up` the fused activation `act` of moe_swiglu.
    void moe_matvec(Recording &rec, const ExpertMatrix &w, const ExpertMatrix *up,
                    const BufferRange &x, const BufferRange &y, const BufferRange &route,
                    const BufferRange &bias, const BufferRange &up_bias, uint32_t n_tokens,
                    uint32_t k, bool x_per_entry, Binary act);
    void attention_small_head(Recording &rec, const BufferRange &q, const BufferRange &k_cache,
                              const BufferRange &v_cache, const BufferRange &out,
                              const StepView &step, const AttentionShape &shape,
                              const BufferRange &sinks);
    struct Chunk {
        uint32_t row0;
        uint32_t rows;
        BufferRange data;
    };
    // Row chunks of `m` whose bindings each fit in max_range bytes (0: maxStorageBufferRange).
    std::vector<Chunk> split_rows(const Matrix &m, uint64_t max_range = 0) const;
    // `groups` workgroups in x (and y beyond maxComputeWorkGroupCount[0]), times `groups_z`.
    void dispatch_1d(Recording &rec, const Pipeline &p, const std::vector<BufferRange> &bindings,
                     const void *push, uint32_t push_bytes, uint64_t groups, uint32_t groups_z = 1);
    // Checks an attention shape and the cache bindings; returns the sequences they hold.
    uint32_t check_attention(const BufferRange &k_cache, const BufferRange &v_cache,
                             const StepView &step, const AttentionShape &shape,
                             const char *kernel) const;

    Device &device_;
    Pipelines &pipelines_;
    bool cpu_class_;
    bool matvec_subgroup_ = false;  // matvec and matvec_texel reduce with subgroupAdd
    bool texel_loads_ = true;
    uint32_t attention_splits_ = 0;  // 0: automatic
    bool attention_tiled_forced_ = false;
    uint32_t matvec_wg_;
    uint32_t matvec_rows_;
    uint32_t norm_wg_;
    uint32_t attention_wg_;
    uint32_t argmax_wg_;
    // Attention: query heads x head_dim a workgroup may serve at once (their queries and
    // accumulators are each lane's state).
    uint32_t max_group_dims_;
};

}  // namespace vkllm::gpu
