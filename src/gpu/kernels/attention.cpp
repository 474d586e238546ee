#include "gpu/kernels/attention.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "attention/attention.h"
#include "attention/attention_common.h"
#include "attention/attention_coopmat.h"
#include "attention/attention_small_head.h"
#include "attention/attention_tiled.h"
#include "attention/kv_store.h"
#include "attention/rope.h"
#include "gpu/kernels/weight_layout.h"
#include "shader_names.h"

namespace vkllm::gpu {

// A KvType is passed as the shaders' KV_TYPE as it is (here and in linear.cpp).
static_assert(uint32_t(KvType::F32) == shaders::KV_F32 &&
                  uint32_t(KvType::F16) == shaders::KV_F16 &&
                  uint32_t(KvType::Q8_0) == shaders::KV_Q8_0,
              "gpu::KvType and shaders/include/kv_cache.h differ");

void AttentionKernels::rope(Recording &rec, RopeLayout layout, const BufferRange &x,
                            const BufferRange &table, const BufferRange &positions,
                            uint32_t n_tokens, uint32_t n_heads, uint32_t head_dim,
                            uint32_t rot_dim, uint32_t n_pos) {
    if (rot_dim % 2 || rot_dim > head_dim || n_pos == 0)
        fail(VKLLM_ERR_INTERNAL, "rope: rot_dim %u with head_dim %u", rot_dim, head_dim);
    require(x, uint64_t(n_tokens) * n_heads * head_dim * 4, "rope", "x");
    require(table, uint64_t(n_pos) * rot_dim * 4, "rope", "table");
    require(positions, uint64_t(n_tokens) * 4, "rope", "positions");
    shaders::RopeSpec spec;
    spec.NEOX = layout == RopeLayout::Neox;
    const Pipeline &p = env_.pipelines.get<shaders::RopeBindings>(shaders::rope, spec);
    shaders::RopeBindings b;
    b.x = x;
    b.table = table;
    b.positions = positions;
    shaders::RopePush push{};
    push.n_tokens = n_tokens;
    push.n_heads = n_heads;
    push.head_dim = head_dim;
    push.rot_dim = rot_dim;
    push.n_pos = n_pos;
    uint64_t n = uint64_t(n_tokens) * n_heads * (rot_dim / 2);
    env_.dispatch_1d(rec, p, b, &push, sizeof push, (n + 63) / 64);
}

// The head sizes attention.comp and attention_tiled.comp take: whole uvec4 pairs of an F16 row
// (and of a Q8_0 one, which check_attention keeps to multiples of 32), within their
// specialised per-lane state. attention_small_head.comp takes the rest (4, 20, ...).
static bool supported_head_dim(uint32_t d) {
    return d % 8 == 0 && d >= 8 && d <= 256;
}

uint32_t AttentionKernels::check_attention(const BufferRange &k_cache, const BufferRange &v_cache,
                                           const StepView &step, const AttentionShape &s,
                                           const char *kernel) const {
    if (s.n_heads == 0 || s.n_kv_heads == 0 || s.n_heads % s.n_kv_heads)
        fail(VKLLM_ERR_UNSUPPORTED, "%s: %u query heads cannot share %u KV heads", kernel,
             s.n_heads, s.n_kv_heads);
    // Head sizes that are not multiples of 8 take attention_small_head.comp (up to 256).
    if (s.head_dim == 0 || s.head_dim > 256 || (s.n_kv_heads * s.head_dim) % 8)
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: head_dim %u with %u KV heads is not supported (1 to 256, whole rows of 8)",
             kernel, s.head_dim, s.n_kv_heads);
    if (s.capacity <= s.n_sink || s.capacity > uint32_t(INT32_MAX))
        fail(VKLLM_ERR_UNSUPPORTED, "%s: a cache of %u slots with %u sink positions", kernel,
             s.capacity, s.n_sink);
    if (s.kv_type == KvType::Q8_0 && s.head_dim % 32)
        fail(VKLLM_ERR_UNSUPPORTED,
             "%s: a Q8_0 KV cache needs head_dim a multiple of 32, the model has %u", kernel,
             s.head_dim);
    uint64_t seq_bytes = uint64_t(s.capacity) * s.n_kv_heads * kv_row_bytes(s.kv_type, s.head_dim);
    uint64_t max_range = env_.device.info().max_storage_buffer_range;
    for (const BufferRange *c : {&k_cache, &v_cache}) {
        if (c->size > max_range)
            fail(VKLLM_ERR_UNSUPPORTED,
                 "%s: a KV cache binding of %llu bytes exceeds the device's limit of %llu", kernel,
                 (unsigned long long)c->size, (unsigned long long)max_range);
        require(*c, seq_bytes, kernel, c == &k_cache ? "k_cache" : "v_cache");
    }
    require(step.positions, uint64_t(s.n_tokens) * 4, kernel, "positions");
    require(step.seq_ids, uint64_t(s.n_tokens) * 4, kernel, "seq_ids");
    return uint32_t(std::min(k_cache.size, v_cache.size) / seq_bytes);
}

void AttentionKernels::kv_store(Recording &rec, const BufferRange &k, const BufferRange &v,
                                const BufferRange &k_cache, const BufferRange &v_cache,
                                const StepView &step, const AttentionShape &shape,
                                const KvRope &rope) {
    uint32_t n_seq = check_attention(k_cache, v_cache, step, shape, "kv_store");
    uint32_t kv_dim = shape.n_kv_heads * shape.head_dim;
    require(k, uint64_t(shape.n_tokens) * kv_dim * 4, "kv_store", "k");
    require(v, uint64_t(shape.n_tokens) * kv_dim * 4, "kv_store", "v");
    bool roped = rope.rot_dim > 0;
    if (roped) {
        if (rope.rot_dim % 2 || rope.rot_dim > shape.head_dim || rope.n_pos == 0)
            fail(VKLLM_ERR_INTERNAL, "kv_store: rot_dim %u with head_dim %u", rope.rot_dim,
                 shape.head_dim);
        require(rope.table, uint64_t(rope.n_pos) * rope.rot_dim * 4, "kv_store", "table");
    }
    uint32_t q_heads = roped && rope.q.size ? rope.q_heads : 0;
    if (q_heads)
        require(rope.q, uint64_t(shape.n_tokens) * q_heads * shape.head_dim * 4, "kv_store", "q");
    shaders::KvStoreSpec spec;
    spec.KV_TYPE = uint32_t(shape.kv_type);
    spec.ROPE = !roped                            ? shaders::ROPE_NONE
                : rope.layout == RopeLayout::Neox ? shaders::ROPE_NEOX
                                                  : shaders::ROPE_PAIRS;
    const Pipeline &p = env_.pipelines.get<shaders::KvStoreBindings>(shaders::kv_store, spec);
    shaders::KvStorePush push{};
    push.n_tokens = shape.n_tokens;
    push.kv_dim = kv_dim;
    push.head_dim = shape.head_dim;
    push.capacity = shape.capacity;
    push.n_sink = shape.n_sink;
    push.n_seq = n_seq;
    push.rot_dim = roped ? rope.rot_dim : 0;
    push.n_pos = roped ? rope.n_pos : 0;
    push.q_heads = q_heads;
    // One invocation per 8 values of a token, or per head row when quantizing (its blocks need
    // their absolute maximum, and their scales share words); then one per rotated pair of q.
    uint64_t per_token = shape.kv_type == KvType::Q8_0 ? shape.n_kv_heads : kv_dim / 8;
    uint64_t n = uint64_t(shape.n_tokens) * per_token;
    if (q_heads) n += uint64_t(shape.n_tokens) * q_heads * (rope.rot_dim / 2);
    shaders::KvStoreBindings b;
    b.k = k;
    b.v = v;
    b.k_cache = k_cache;
    b.v_cache = v_cache;
    b.positions = step.positions;
    b.seq_ids = step.seq_ids;
    // Unused bindings are bound to k, never read or written.
    b.table = roped ? rope.table : k;
    b.q = q_heads ? rope.q : k;
    env_.dispatch_1d(rec, p, b, &push, sizeof push, (n + 63) / 64);
}

// The bindings every attention shader has, alike by name (attention_common.h's AttentionBindings,
// attention.h's and attention_small_head.h's). Without sinks, that binding is q, never read.
template <class Bindings>
static void bind_attention(Bindings &b, const BufferRange &q, const BufferRange &k_cache,
                           const BufferRange &v_cache, const BufferRange &out, const StepView &step,
                           const BufferRange &sinks) {
    b.q = q;
    b.k_cache = k_cache;
    b.v_cache = v_cache;
    b.out = out;
    b.positions = step.positions;
    b.seq_ids = step.seq_ids;
    b.kv_begin = step.kv_begin;
    b.sinks = sinks.size ? sinks : q;
}

// attention_tiled.comp's tile for `shape`: tokens (BR) by keys (BC) over 64 lanes, the largest
// of 16 x 16, 16 x 8 and 8 x 8 that the device's shared memory and llvmpipe's loop limit
// allow (head_dim 128 fits 16 x 16 in 26 KiB; 256 needs 49 KiB for it, 34 KiB for 16 x 8,
// 25 KiB for 8 x 8). {0, 0} when none does.
AttentionKernels::Tile AttentionKernels::attention_tile(const AttentionShape &shape) const {
    if (!supported_head_dim(shape.head_dim) || shape.n_tokens == 0) return {};
    if (!env_.attention_tiled_forced && (env_.cpu_class || !shape.prefill || shape.n_tokens <= 8))
        return {};
    if (shape.n_heads > env_.device.caps().max_groups_x) return {};
    for (Tile t : {Tile{16, 16}, Tile{16, 8}, Tile{8, 8}}) {
        // Shared memory: the tile's queries, keys and values as F32, its scores and bookkeeping.
        uint64_t shared = uint64_t(t.tokens + 2 * t.keys) * shape.head_dim * 4 +
                          t.tokens * t.keys * 4 + t.keys * 4 + t.tokens * 16;
        // A pass per sequence among a workgroup's tokens, a tile per t.keys keys of it.
        uint64_t loops =
            uint64_t(t.tokens) * (shape.capacity / t.keys + 2) + t.tokens * t.tokens + 1024;
        if (shared <= env_.device.info().max_compute_shared_memory && loops <= kMaxLoopIterations &&
            (shape.n_tokens + t.tokens - 1) / t.tokens <= 65535)
            return t;
    }
    return {};
}

bool AttentionKernels::attention_tiled(const AttentionShape &shape) const {
    return attention_tile(shape).tokens > 0;
}

// attention_coopmat.comp's tile for `shape`: query rows by keys, multiples of the device's
// coopmat shape, the largest that the device's shared memory holds (queries, keys and values
// as f16, the rows' outputs and the tile's scores as f32) and llvmpipe's loop limit allows.
// The rows serve as many query heads of one KV head as fit (all of them where the group is no
// larger than the rows), the rest tokens. {}: none fits, or the kernel is not to be taken.
AttentionKernels::CoopTile AttentionKernels::attention_coop(const AttentionShape &shape,
                                                            uint32_t n_seq) const {
    const std::optional<bool> &forced = env_.attention_coopmat_forced;
    bool wanted = forced ? *forced : env_.coopmat && !env_.attention_tiled_forced;
    if (!wanted || !shape.prefill || shape.n_tokens <= 8) return {};
    const CoopmatShape &cm = env_.coopmat_shape;
    if (!env_.device.coopmat_enabled() || cm.m == 0 || cm.n == 0 || cm.k == 0 ||
        !supported_head_dim(shape.head_dim) || shape.n_tokens == 0)
        return {};
    const uint32_t kLanes = 128;  // the shader's workgroup
    uint32_t pad = std::max(cm.n, cm.k);
    uint64_t dp = (shape.head_dim + pad - 1) / pad * pad;
    uint32_t subgroup = env_.device.info().subgroup_size;
    uint64_t subgroups = subgroup && subgroup <= kLanes ? kLanes / subgroup : 1;
    uint32_t group = shape.n_heads / shape.n_kv_heads;
    // The iterations of a product's loop over K: steps of cm.k, 4, 2 or 1 at a time.
    auto steps = [&](uint64_t depth) {
        uint64_t n = depth / cm.k;
        return n / (n % 4 == 0 ? 4 : n % 2 == 0 ? 2 : 1);
    };
    // Query rows x keys, from the most reuse of each K/V tile down.
    static const std::pair<uint32_t, uint32_t> kTiles[] = {{64, 32}, {32, 32}, {32, 16}, {16, 32},
                                                           {16, 16}, {16, 8},  {8, 16},  {8, 8}};
    for (auto [rows, keys] : kTiles) {
        if (rows % cm.m || keys % cm.n || keys % cm.k) continue;
        uint32_t blocks = (group + rows - 1) / rows, heads = (group + blocks - 1) / blocks;
        uint32_t tokens = rows / heads;
        uint64_t shared = uint64_t(rows + 2 * keys) * dp * 2 + rows * dp * 4 + rows * keys * 6 +
                          keys * 4 + tokens * 16 + kLanes * 4;
        // A pass per sequence among the tokens (their keys: the ring, sinks and the tokens'
        // own span), a tile per `keys` keys of it, and per tile a subgroup's blocks of S and
        // of O, each a loop over K.
        uint64_t s_blocks = (rows / cm.m) * (keys / cm.n), o_blocks = (rows / cm.m) * (dp / cm.n);
        uint64_t per_tile = 1 + (s_blocks + subgroups - 1) / subgroups * (1 + steps(dp)) +
                            (o_blocks + subgroups - 1) / subgroups * (1 + steps(keys));
        uint64_t passes = std::min(tokens, std::max(n_seq, 1u));
        uint64_t loops = passes * ((uint64_t(shape.capacity) + tokens) / keys + 2) * per_tile +
                         uint64_t(tokens) * (tokens + 1) + 1024;
        if (shared <= env_.device.info().max_compute_shared_memory && loops <= kMaxLoopIterations &&
            uint64_t(shape.n_kv_heads) * blocks <= env_.device.caps().max_groups_x &&
            (shape.n_tokens + tokens - 1) / tokens <= 65535)
            return CoopTile{rows, keys, heads};
    }
    return {};
}

bool AttentionKernels::attention_coopmat(const AttentionShape &shape, uint32_t n_seq) const {
    return attention_coop(shape, n_seq).rows > 0;
}

uint32_t AttentionKernels::attention_splits(const AttentionShape &shape) const {
    if (!supported_head_dim(shape.head_dim) || shape.n_tokens == 0) return 1;
    if (env_.attention_splits) return env_.attention_splits;
    // GPUs, decode-sized steps: enough workgroups to fill the device (~256), slices of at
    // least 128 keys, at most 32 slices (the merge reads them all per output).
    const uint32_t kTargetGroups = 256, kMinKeys = 128, kMaxSplits = 32;
    if (env_.cpu_class || shape.n_tokens > 8) return 1;
    uint32_t group = shape.n_heads / shape.n_kv_heads;
    uint64_t groups = uint64_t(shape.n_tokens) * shape.n_kv_heads * std::min(group, 8u);
    uint64_t want = (kTargetGroups + groups - 1) / groups;
    uint64_t splits = std::min<uint64_t>({want, shape.capacity / kMinKeys, kMaxSplits});
    return uint32_t(std::max<uint64_t>(splits, 1));
}

// Query heads of one KV head served by one workgroup: as many as the variant allows (at most
// 8), in blocks of equal size as far as possible (the last block may serve fewer).
AttentionKernels::HeadBlocks AttentionKernels::head_blocks(const AttentionShape &shape) const {
    uint32_t group = shape.n_heads / shape.n_kv_heads;
    uint32_t cap = std::max(1u, std::min(8u, env_.max_group_dims / shape.head_dim));
    uint32_t blocks = (group + cap - 1) / cap;
    return {(group + blocks - 1) / blocks, blocks};
}

// Split-K's scratch: a count per (token, workgroup of the x axis), then, from the next binding
// offset, the slices' records.
static uint64_t arrival_bytes(const AttentionShape &shape, uint32_t blocks, uint64_t align) {
    uint64_t bytes = uint64_t(shape.n_tokens) * shape.n_kv_heads * blocks * 4;
    return (bytes + align - 1) / align * align;
}

uint64_t AttentionKernels::attention_scratch_bytes(const AttentionShape &shape) const {
    uint32_t splits = attention_splits(shape);
    if (splits < 2) return 0;
    return arrival_bytes(shape, head_blocks(shape).blocks,
                         env_.device.caps().storage_offset_align) +
           uint64_t(shape.n_tokens) * shape.n_heads * splits * (shape.head_dim / 4 + 1) * 16;
}

void AttentionKernels::attention(Recording &rec, const BufferRange &q, const BufferRange &k_cache,
                                 const BufferRange &v_cache, const BufferRange &out,
                                 const StepView &step, const AttentionShape &shape,
                                 const BufferRange &sinks, const BufferRange &scratch) {
    uint32_t n_seq = check_attention(k_cache, v_cache, step, shape, "attention");
    uint64_t q_bytes = uint64_t(shape.n_tokens) * shape.n_heads * shape.head_dim * 4;
    require(q, q_bytes, "attention", "q");
    require(out, q_bytes, "attention", "out");
    require(step.kv_begin, uint64_t(shape.n_tokens) * 4, "attention", "kv_begin");
    if (sinks.size) require(sinks, uint64_t(shape.n_heads) * 4, "attention", "sinks");
    if (!supported_head_dim(shape.head_dim)) {
        attention_small_head(rec, q, k_cache, v_cache, out, step, shape, sinks);
        return;
    }
    shaders::AttentionPush push{};
    push.n_tokens = shape.n_tokens;
    push.n_heads = shape.n_heads;
    push.n_kv_heads = shape.n_kv_heads;
    push.capacity = shape.capacity;
    push.n_sink = shape.n_sink;
    push.n_seq = n_seq;
    push.scale = shape.scale;
    push.window = shape.window;
    push.has_sinks = sinks.size > 0;
    push.softcap = shape.softcap;
    if (CoopTile tile = attention_coop(shape, n_seq); tile.rows) {
        shaders::AttentionCoopmatSpec spec;
        spec.HEAD_DIM = shape.head_dim;
        spec.KV_TYPE = uint32_t(shape.kv_type);
        spec.SOFTCAP = shape.softcap > 0;
        spec.ROWS = tile.rows;
        spec.BC = tile.keys;
        spec.GH = tile.heads;
        spec.TM = env_.coopmat_shape.m;
        spec.TN = env_.coopmat_shape.n;
        spec.TK = env_.coopmat_shape.k;
        const Pipeline &p =
            env_.pipelines.get<shaders::AttentionBindings>(shaders::attention_coopmat, spec);
        shaders::AttentionBindings b;
        bind_attention(b, q, k_cache, v_cache, out, step, sinks);
        uint32_t group = shape.n_heads / shape.n_kv_heads;
        uint32_t tokens = tile.rows / tile.heads;
        rec.dispatch(p, b, &push, sizeof push,
                     shape.n_kv_heads * ((group + tile.heads - 1) / tile.heads),
                     (shape.n_tokens + tokens - 1) / tokens);
        return;
    }
    if (Tile tile = attention_tile(shape); tile.tokens) {
        shaders::AttentionTiledSpec spec;
        spec.HEAD_DIM = shape.head_dim;
        spec.KV_TYPE = uint32_t(shape.kv_type);
        spec.SOFTCAP = shape.softcap > 0;
        spec.BR = tile.tokens;
        spec.BC = tile.keys;
        const Pipeline &p =
            env_.pipelines.get<shaders::AttentionBindings>(shaders::attention_tiled, spec);
        shaders::AttentionBindings b;
        bind_attention(b, q, k_cache, v_cache, out, step, sinks);
        rec.dispatch(p, b, &push, sizeof push, shape.n_heads,
                     (shape.n_tokens + tile.tokens - 1) / tile.tokens);
        return;
    }
    // Each lane visits at most capacity / WG + 1 keys, one loop iteration each (the loops over
    // heads and head_dim have constant trip counts and are unrolled); the final combination
    // adds a few hundred.
    if (shape.n_tokens > 65535)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: %u tokens in one step is too many", shape.n_tokens);
    auto [g, blocks] = head_blocks(shape);
    uint32_t wg = env_.attention_wg;
    if (!env_.cpu_class) {
        // GPUs: a decode step has only one workgroup per query head, so give each as many lanes
        // as the shared memory of the final combination allows (g x head_dim accumulators and
        // a max and a sum per lane), in whole warps up to 128; 16 or 8 where not even a warp
        // fits (heads of 256 in Vulkan's least 16 KiB).
        uint64_t per_lane = uint64_t(g) * (shape.head_dim * 4 + 8);
        uint64_t lanes = env_.device.info().max_compute_shared_memory / per_lane;
        wg = lanes >= 32                  ? uint32_t(std::min<uint64_t>(lanes / 32 * 32, 128))
             : lanes >= env_.attention_wg ? env_.attention_wg
                                          : 8;
    }
    if (uint64_t(shape.capacity) / wg + 1024 > kMaxLoopIterations)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: a cache of %u slots is too long for the device",
             shape.capacity);
    uint64_t gx = uint64_t(shape.n_kv_heads) * blocks;
    if (gx > env_.device.caps().max_groups_x)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: %u heads are too many", shape.n_heads);
    uint32_t splits = attention_splits(shape);
    if (splits > 1) require(scratch, attention_scratch_bytes(shape), "attention", "scratch");
    shaders::AttentionSpec spec;
    spec.WG = wg;
    spec.HEAD_DIM = shape.head_dim;
    spec.KV_TYPE = uint32_t(shape.kv_type);
    spec.G = g;
    spec.SPLITS = splits;
    spec.SOFTCAP = shape.softcap > 0;
    const Pipeline &p =
        env_.pipelines.get<shaders::AttentionSplitBindings>(shaders::attention, spec);
    shaders::AttentionSplitBindings b;
    bind_attention(b, q, k_cache, v_cache, out, step, sinks);
    if (splits > 1) {
        uint64_t counts = arrival_bytes(shape, blocks, env_.device.caps().storage_offset_align);
        b.arrivals = BufferRange{scratch.buffer, scratch.offset, counts};
        b.part = BufferRange{scratch.buffer, scratch.offset + counts,
                             attention_scratch_bytes(shape) - counts};
    } else {
        b.part = b.arrivals = out;  // without splits: out again, never written
    }
    if (shape.n_tokens > 0)
        rec.dispatch(p, b, &push, sizeof push, uint32_t(gx), shape.n_tokens, splits);
}

// Head sizes that are not multiples of 8 (a random Llama's 4): a lane per dimension and one
// loop iteration per key, so the cache length is bounded by the loop limit.
void AttentionKernels::attention_small_head(Recording &rec, const BufferRange &q,
                                            const BufferRange &k_cache, const BufferRange &v_cache,
                                            const BufferRange &out, const StepView &step,
                                            const AttentionShape &shape, const BufferRange &sinks) {
    if (uint64_t(shape.capacity) + 64 > kMaxLoopIterations)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: head_dim %u supports caches up to %llu slots",
             shape.head_dim, (unsigned long long)(kMaxLoopIterations - 64));
    if (shape.n_tokens > 65535 || shape.n_heads > env_.device.caps().max_groups_x)
        fail(VKLLM_ERR_UNSUPPORTED, "attention: %u tokens of %u heads is too many", shape.n_tokens,
             shape.n_heads);
    uint32_t wg = 8;
    while (wg < shape.head_dim)
        wg *= 2;
    shaders::AttentionSmallHeadSpec spec;
    spec.WG = wg;
    spec.KV_TYPE = uint32_t(shape.kv_type);
    spec.SOFTCAP = shape.softcap > 0;
    const Pipeline &p = env_.pipelines.get<shaders::AttentionSmallHeadBindings>(
        shaders::attention_small_head, spec);
    shaders::AttentionSmallHeadBindings b;
    bind_attention(b, q, k_cache, v_cache, out, step, sinks);
    shaders::AttentionSmallHeadPush push{};
    push.n_tokens = shape.n_tokens;
    push.n_heads = shape.n_heads;
    push.n_kv_heads = shape.n_kv_heads;
    push.head_dim = shape.head_dim;
    push.capacity = shape.capacity;
    push.n_sink = shape.n_sink;
    push.scale = shape.scale;
    push.window = shape.window;
    push.has_sinks = sinks.size > 0;
    push.softcap = shape.softcap;
    if (shape.n_tokens > 0) rec.dispatch(p, b, &push, sizeof push, shape.n_heads, shape.n_tokens);
}

}  // namespace vkllm::gpu
