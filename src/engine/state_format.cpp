#include "engine/state_format.h"

#include <cstring>

#include "common/error.h"
#include "common/hash.h"
#include "gpu/tensor.h"

namespace vkllm::engine {

namespace {

const char kMagic[8] = {'V', 'K', 'L', 'L', 'M', 'S', 'E', 'Q'};
const size_t kArchBytes = 32;
// magic, version, header bytes, fingerprint, arch, 4 model sizes, kv type, n_ctx, n_sink,
// flags, n_past; then capacity, sinks and rows per layer.
const uint64_t kFixedBytes = 8 + 4 + 4 + 8 + kArchBytes + 4 * 4 + 4 * 4 + 4;
const uint64_t kLayerBytes = 3 * 4;
// More than any model has: a bound that keeps a hostile count from sizing anything.
const uint32_t kMaxLayers = 4096;
const uint32_t kFlagStreaming = 1;

class Writer {
  public:
    explicit Writer(uint8_t *p) : p_(p) {}
    void bytes(const void *b, size_t n) {
        std::memcpy(p_, b, n);
        p_ += n;
    }
    void u32(uint32_t v) { bytes(&v, 4); }
    void u64(uint64_t v) { bytes(&v, 8); }

  private:
    uint8_t *p_;
};

class Reader {
  public:
    Reader(const uint8_t *p, size_t n) : p_(p), end_(p + n) {}
    void bytes(void *b, size_t n) {
        if (size_t(end_ - p_) < n) fail(VKLLM_ERR_FORMAT, "session state: truncated in its header");
        std::memcpy(b, p_, n);
        p_ += n;
    }
    uint32_t u32() {
        uint32_t v;
        bytes(&v, 4);
        return v;
    }
    uint64_t u64() {
        uint64_t v;
        bytes(&v, 8);
        return v;
    }

  private:
    const uint8_t *p_, *end_;
};

}  // namespace

std::vector<PositionRun> held_positions(uint32_t n_past, uint32_t capacity, uint32_t sinks) {
    std::vector<PositionRun> runs;
    if (n_past <= capacity) {
        if (n_past) runs.push_back({0, n_past});
        return runs;
    }
    if (sinks) runs.push_back({0, sinks});
    runs.push_back({n_past - (capacity - sinks), n_past});
    return runs;
}

uint64_t held_count(uint32_t n_past, uint32_t capacity, uint32_t sinks) {
    uint64_t n = 0;
    for (const PositionRun &r : held_positions(n_past, capacity, sinks))
        n += r.end - r.begin;
    return n;
}

StateLayout state_layout(const StateHeader &h) {
    StateLayout l;
    l.slot_bytes = uint64_t(h.n_head_kv) * gpu::kv_row_bytes(gpu::KvType(h.kv_type), h.head_dim);
    l.tokens = kFixedBytes + kLayerBytes * h.layers.size();
    uint64_t at = l.tokens + uint64_t(h.n_past) * 4;
    for (const LayerRing &r : h.layers) {
        l.k.push_back(at);
        at += r.rows * l.slot_bytes;
        l.v.push_back(at);
        at += r.rows * l.slot_bytes;
    }
    l.checksum = at;
    l.total = at + 8;
    return l;
}

void write_state_header(const StateHeader &h, uint8_t *out) {
    Writer w(out);
    w.bytes(kMagic, sizeof kMagic);
    w.u32(kStateVersion);
    w.u32(uint32_t(kFixedBytes + kLayerBytes * h.layers.size()));
    w.u64(h.fingerprint);
    char arch[kArchBytes] = {};
    std::memcpy(arch, h.arch.data(), std::min(h.arch.size(), kArchBytes - 1));
    w.bytes(arch, kArchBytes);
    for (uint32_t v : {h.n_layer, h.n_head_kv, h.head_dim, h.n_vocab, h.kv_type, h.n_ctx, h.n_sink,
                       h.streaming ? kFlagStreaming : 0u, h.n_past})
        w.u32(v);
    for (const LayerRing &r : h.layers) {
        w.u32(r.capacity);
        w.u32(r.sinks);
        w.u32(r.rows);
    }
}

void seal_state(uint8_t *state, const StateLayout &layout) {
    uint64_t sum = hash64(state, layout.checksum);
    std::memcpy(state + layout.checksum, &sum, 8);
}

uint64_t state_header_bytes(const uint8_t *data, size_t size) {
    if (size < 16) return 0;
    uint32_t bytes;
    std::memcpy(&bytes, data + 12, 4);
    return bytes;
}

StateHeader parse_state_header(const uint8_t *data, size_t size, uint64_t *total) {
    Reader r(data, size);
    char magic[8];
    r.bytes(magic, sizeof magic);
    if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
        fail(VKLLM_ERR_FORMAT, "not a vkllm session state (its first bytes are not \"VKLLMSEQ\")");
    uint32_t version = r.u32();
    if (version != kStateVersion)
        fail(VKLLM_ERR_FORMAT, "session state of version %u; this library reads version %u",
             version, kStateVersion);
    uint32_t header_bytes = r.u32();
    StateHeader h;
    h.fingerprint = r.u64();
    char arch[kArchBytes];
    r.bytes(arch, kArchBytes);
    if (!std::memchr(arch, 0, kArchBytes))
        fail(VKLLM_ERR_FORMAT, "session state: the architecture name is not terminated");
    h.arch = arch;
    h.n_layer = r.u32();
    h.n_head_kv = r.u32();
    h.head_dim = r.u32();
    h.n_vocab = r.u32();
    h.kv_type = r.u32();
    h.n_ctx = r.u32();
    h.n_sink = r.u32();
    uint32_t flags = r.u32();
    h.n_past = r.u32();
    if (h.n_layer == 0 || h.n_layer > kMaxLayers)
        fail(VKLLM_ERR_FORMAT, "session state: %u layers (1 to %u)", h.n_layer, kMaxLayers);
    if (header_bytes != kFixedBytes + kLayerBytes * h.n_layer)
        fail(VKLLM_ERR_FORMAT, "session state: a header of %u bytes for %u layers", header_bytes,
             h.n_layer);
    // Bounds that keep every size below well inside 64 bits.
    if (h.n_head_kv == 0 || h.n_head_kv > 4096 || h.head_dim == 0 || h.head_dim > 4096 ||
        h.n_vocab == 0)
        fail(VKLLM_ERR_FORMAT, "session state: impossible model sizes (%u KV heads of %u, %u ids)",
             h.n_head_kv, h.head_dim, h.n_vocab);
    if (h.kv_type > uint32_t(gpu::KvType::Q8_0))
        fail(VKLLM_ERR_FORMAT, "session state: unknown KV cache type %u", h.kv_type);
    if (flags & ~kFlagStreaming) fail(VKLLM_ERR_FORMAT, "session state: unknown flags 0x%x", flags);
    h.streaming = flags & kFlagStreaming;
    if (h.n_ctx == 0 || h.n_sink >= h.n_ctx || (!h.streaming && h.n_sink != 0))
        fail(VKLLM_ERR_FORMAT, "session state: n_ctx %u with %u sinks%s", h.n_ctx, h.n_sink,
             h.streaming ? "" : " and no streaming");
    if (!h.streaming && h.n_past > h.n_ctx)
        fail(VKLLM_ERR_FORMAT, "session state: %u positions in a context of %u", h.n_past, h.n_ctx);
    for (uint32_t l = 0; l < h.n_layer; ++l) {
        LayerRing ring;
        ring.capacity = r.u32();
        ring.sinks = r.u32();
        ring.rows = r.u32();
        if (ring.capacity == 0 || ring.capacity > h.n_ctx || ring.sinks >= ring.capacity ||
            (ring.sinks != 0 && ring.sinks != h.n_sink))
            fail(VKLLM_ERR_FORMAT, "session state: layer %u has a ring of %u slots and %u sinks", l,
                 ring.capacity, ring.sinks);
        if (ring.rows != held_count(h.n_past, ring.capacity, ring.sinks))
            fail(VKLLM_ERR_FORMAT,
                 "session state: layer %u holds %u rows; a ring of %u slots holds %llu after %u "
                 "positions",
                 l, ring.rows, ring.capacity,
                 (unsigned long long)held_count(h.n_past, ring.capacity, ring.sinks), h.n_past);
        h.layers.push_back(ring);
    }
    // Bounded as it goes, so that no hostile count overflows the sum: no state is 2^60 bytes.
    uint64_t slot_bytes =
        uint64_t(h.n_head_kv) * gpu::kv_row_bytes(gpu::KvType(h.kv_type), h.head_dim);
    uint64_t need = header_bytes + uint64_t(h.n_past) * 4 + 8;
    for (const LayerRing &ring : h.layers) {
        need += 2 * ring.rows * slot_bytes;
        if (need > (uint64_t(1) << 60))
            fail(VKLLM_ERR_FORMAT, "session state: its header describes over 2^60 bytes");
    }
    *total = need;
    return h;
}

StateHeader parse_state(const uint8_t *data, size_t size) {
    uint64_t total = 0;
    StateHeader h = parse_state_header(data, size, &total);
    StateLayout layout = state_layout(h);
    if (size != layout.total)
        fail(VKLLM_ERR_FORMAT, "session state: %zu bytes; its header describes %llu%s", size,
             (unsigned long long)layout.total, size < layout.total ? " (truncated)" : "");
    uint64_t stored;
    std::memcpy(&stored, data + layout.checksum, 8);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    if (stored != hash64(data, layout.checksum))
        fail(VKLLM_ERR_FORMAT, "session state: checksum mismatch (the bytes are corrupted)");
#endif
    for (uint32_t i = 0; i < h.n_past; ++i) {
        int32_t id;
        std::memcpy(&id, data + layout.tokens + 4 * uint64_t(i), 4);
        if (id < 0 || uint32_t(id) >= h.n_vocab)
            fail(VKLLM_ERR_FORMAT, "session state: token %d at position %u is outside 0 to %u", id,
                 i, h.n_vocab - 1);
    }
    return h;
}

}  // namespace vkllm::engine
