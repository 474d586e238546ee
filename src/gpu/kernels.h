// The compute kernels, as operations on buffer ranges. Each call records its dispatches and a
// barrier into a Recording; it picks the shader variant for the device and splits tensors that
// a single binding could not cover (maxStorageBufferRange).
#pragma once

#include <vector>

#include "gpu/pipeline.h"
#include "gpu/recording.h"

namespace vkllm::gpu {

enum class WeightType : uint32_t { F32 = 0, F16 = 1 };

// A row-major matrix of `rows` x `cols` weights: row r is output feature r (GGUF's [cols, rows]).
// Kernels read F16 data as 32-bit words, so its binding covers weight_bytes() (rounded up to
// 4 bytes), as GGUF's aligned tensor data always does.
struct Matrix {
    BufferRange data;
    WeightType type = WeightType::F32;
    uint32_t rows = 0;
    uint32_t cols = 0;
};

// Bytes a binding of `count` weights must cover.
uint64_t weight_bytes(WeightType type, uint64_t count);

enum class RopeLayout : uint32_t {
    Interleaved = 0,  // rotate (2i, 2i+1): GGUF llama
    Neox = 1,         // rotate (i, i + rot_dim/2): Qwen2, GPT-OSS
};

enum class Binary : uint32_t { Add = 0, Mul = 1, SwiGLU = 4 };
enum class Unary : uint32_t { SiLU = 2, GELU = 3 };

// cos/sin pairs for positions [0, n_pos) and pairs [0, rot_dim/2), angle = pos *
// base^(-2i/rot_dim), computed in double once per model: [n_pos][rot_dim/2][2] floats.
std::vector<float> rope_table(uint32_t n_pos, uint32_t rot_dim, double base);

// Which kernel shapes to use: lavapipe runs a workgroup as one 8-wide SIMD program and wants
// few lanes owning many rows (LAVAPIPE.md); GPUs want wide workgroups.
enum class DeviceClass { Cpu, Gpu };
DeviceClass device_class(const Device &device);

class Kernels {
  public:
    Kernels(Device &device, Pipelines &pipelines, DeviceClass cls);

    // y[rows] = W x[cols].
    void matvec(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y);
    // Y[n][rows] = X[n][cols] W^T, for n activation rows (prefill).
    void matmul(Recording &rec, const Matrix &w, const BufferRange &x, const BufferRange &y,
                uint32_t n);
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

  private:
    struct Chunk {
        uint32_t row0;
        uint32_t rows;
        BufferRange data;
    };
    std::vector<Chunk> split_rows(const Matrix &m) const;
    void dispatch_1d(Recording &rec, const Pipeline &p, const std::vector<BufferRange> &bindings,
                     const void *push, uint32_t push_bytes, uint64_t groups);

    Device &device_;
    Pipelines &pipelines_;
    uint32_t matvec_wg_;
    uint32_t matvec_rows_;
    uint32_t norm_wg_;
};

}  // namespace vkllm::gpu
