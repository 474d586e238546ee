// Attention over the KV cache ring: RoPE, the store of K and V into their slots (rotating K on
// the way), and attention itself in its variants (one pass, split keys with a merge, tiled
// prefill, prefill on cooperative matrices, small heads) (tests/test_kernels_attention.cpp,
// tests/test_kernels_attention_coopmat.cpp, tests/test_kernels_rope.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "gpu/kernels/env.h"

namespace vkllm::gpu {

class AttentionKernels {
  public:
    explicit AttentionKernels(KernelEnv &env) : env_(env) {}

    // In place on x[n_tokens][n_heads][head_dim], positions int32[n_tokens], table from
    // rope_table() with n_pos rows.
    void rope(Recording &rec, RopeLayout layout, const BufferRange &x, const BufferRange &table,
              const BufferRange &positions, uint32_t n_tokens, uint32_t n_heads, uint32_t head_dim,
              uint32_t rot_dim, uint32_t n_pos);
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
    // query head, GPT-OSS) adds a logit without a value to each head's softmax. With
    // shape.softcap > 0 (Gemma 2) each scaled score s becomes softcap * tanh(s / softcap) first.
    //
    // Where a step has too few workgroups to fill the device (a decode on a GPU), the keys are
    // split into slices, each a workgroup, the last of which to finish merges them (split-K,
    // "flash decoding"); `scratch` (attention_scratch_bytes(shape) bytes) holds the slices' results
    // and their counts, which must be zero before its first use (each use leaves them zero).
    void attention(Recording &rec, const BufferRange &q, const BufferRange &k_cache,
                   const BufferRange &v_cache, const BufferRange &out, const StepView &step,
                   const AttentionShape &shape, const BufferRange &sinks = {},
                   const BufferRange &scratch = {});
    // Whether attention() takes the tiled kernel for `shape`: GPUs, prefill steps of more than
    // 8 tokens, where it fits (shared memory, llvmpipe's loop limit).
    bool attention_tiled(const AttentionShape &shape) const;
    // Whether attention() takes the cooperative-matrix kernel for `shape`: where the kernels
    // use cooperative matrices (KernelEnv::coopmat), prefill steps of more than 8 tokens,
    // where it fits (shared memory, llvmpipe's loop limit) with cache bindings of `n_seq`
    // sequences (a workgroup may make a pass per sequence). It comes before the tiled kernel.
    bool attention_coopmat(const AttentionShape &shape, uint32_t n_seq = 1) const;
    // The key slices attention() uses for `shape` (1: no split) and the scratch it needs.
    uint32_t attention_splits(const AttentionShape &shape) const;
    uint64_t attention_scratch_bytes(const AttentionShape &shape) const;

    // Forces attention() to split the keys of every step into `n` slices (0: the device's
    // choice); tests check the split-K path on any device with it.
    void set_attention_splits(uint32_t n) { env_.attention_splits = n; }
    // Forces attention() to take the tiled kernel for every step it fits (false: the device's
    // choice); tests check it on any device with it.
    void set_attention_tiled(bool on) { env_.attention_tiled_forced = on; }
    // Forces attention() to take the cooperative-matrix kernel for the prefill steps it fits
    // (true) or for none (false), wherever the device and the build have it
    // (Device::coopmat_enabled), whatever VKLLM_COOPMAT says; std::nullopt: the device's
    // choice. Tests check it with it and the other kernels without it.
    void set_attention_coopmat(std::optional<bool> on) { env_.attention_coopmat_forced = on; }

    // Checks an attention shape and the cache bindings for `kernel` (and for the linear
    // kernels that store K and V themselves); returns the sequences the caches hold.
    uint32_t check_attention(const BufferRange &k_cache, const BufferRange &v_cache,
                             const StepView &step, const AttentionShape &shape,
                             const char *kernel) const;

  private:
    // attention.comp's query heads per workgroup (g) and workgroups per KV head (blocks).
    struct HeadBlocks {
        uint32_t g, blocks;
    };
    HeadBlocks head_blocks(const AttentionShape &shape) const;
    // attention_tiled.comp's tokens by keys per workgroup; {0, 0}: not tiled.
    struct Tile {
        uint32_t tokens = 0, keys = 0;
    };
    Tile attention_tile(const AttentionShape &shape) const;
    // attention_coopmat.comp's query rows (tokens x heads) and keys per workgroup, and the
    // query heads of a KV head among its rows; rows 0: not taken.
    struct CoopTile {
        uint32_t rows = 0, keys = 0, heads = 0;
    };
    CoopTile attention_coop(const AttentionShape &shape, uint32_t n_seq) const;
    void attention_small_head(Recording &rec, const BufferRange &q, const BufferRange &k_cache,
                              const BufferRange &v_cache, const BufferRange &out,
                              const StepView &step, const AttentionShape &shape,
                              const BufferRange &sinks);
    KernelEnv &env_;
};

}  // namespace vkllm::gpu
