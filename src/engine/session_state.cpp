// Saving, restoring and forking one sequence's KV cache (Session's members declared under
// "Saved sequence state"). A layer's rows go out in position order, so that a state restores
// into rings of another size when every position the target ring would hold was kept.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "common/platform.h"
#include "engine/session.h"
#include "engine/state_format.h"

namespace vkllm::engine {

namespace {

// Calls fn(position, slot, count) for runs of consecutive positions of [begin, end) that lie
// in consecutive slots of a ring (a run ends where the ring wraps).
template <typename F>
void for_each_slot_run(PositionRun run, uint32_t capacity, uint32_t sinks, F &&fn) {
    for (uint32_t p = run.begin; p < run.end;) {
        uint32_t slot = ring_slot(p, capacity, sinks);
        uint32_t n = std::min(run.end - p, p < sinks ? sinks - p : capacity - slot);
        fn(p, slot, n);
        p += n;
    }
}

// The run of `runs` holding position p, and p's index among all their positions.
bool index_in(const std::vector<PositionRun> &runs, uint32_t p, uint64_t *index) {
    uint64_t before = 0;
    for (const PositionRun &r : runs) {
        if (p >= r.begin && p < r.end) {
            *index = before + (p - r.begin);
            return true;
        }
        before += r.end - r.begin;
    }
    return false;
}

// Whether every position of `inner` is in `outer` (runs of held_positions: a run of one lies
// inside one run of the other, since the other's runs are apart).
bool covers(const std::vector<PositionRun> &outer, const std::vector<PositionRun> &inner) {
    for (const PositionRun &r : inner) {
        uint64_t a, b;
        if (r.end > r.begin && !(index_in(outer, r.begin, &a) && index_in(outer, r.end - 1, &b) &&
                                 b - a == r.end - 1 - r.begin))
            return false;
    }
    return true;
}

struct FileCloser {
    void operator()(std::FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

void Session::check_seq(uint32_t seq) const {
    if (seq >= opt_.n_seq)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "sequence %u does not exist (the session has %u)", seq,
             opt_.n_seq);
}

uint32_t Session::layer_sinks(uint32_t layer) const {
    return model_.config().swa_layer(layer) ? 0 : opt_.n_sink;
}

uint64_t Session::slot_bytes() const {
    const models::ModelConfig &c = model_.config();
    return uint64_t(c.n_head_kv) * gpu::kv_row_bytes(opt_.kv_type, c.head_dim);
}

namespace {

StateHeader header_of(const Model &model, const SessionOptions &opt, uint32_t n_past,
                      const std::vector<uint32_t> &capacity) {
    const models::ModelConfig &c = model.config();
    StateHeader h;
    h.fingerprint = model.fingerprint();
    h.arch = c.arch_name;
    h.n_layer = c.n_layer;
    h.n_head_kv = c.n_head_kv;
    h.head_dim = c.head_dim;
    h.n_vocab = c.n_vocab;
    h.kv_type = uint32_t(opt.kv_type);
    h.n_ctx = opt.n_ctx;
    h.n_sink = opt.n_sink;
    h.streaming = opt.streaming;
    h.n_past = n_past;
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        uint32_t sinks = c.swa_layer(l) ? 0 : opt.n_sink;
        h.layers.push_back({capacity[l], sinks, uint32_t(held_count(n_past, capacity[l], sinks))});
    }
    return h;
}

}  // namespace

uint64_t Session::state_size(uint32_t seq) const {
    check_seq(seq);
    return state_layout(header_of(model_, opt_, n_past_[seq], capacity_)).total;
}

void Session::save_state(uint32_t seq, uint8_t *out) const {
    check_seq(seq);
    StateHeader h = header_of(model_, opt_, n_past_[seq], capacity_);
    StateLayout layout = state_layout(h);
    write_state_header(h, out);
    std::memcpy(out + layout.tokens, history_[seq].data(), history_[seq].size() * 4);
    uint64_t row = slot_bytes();
    for (uint32_t l = 0; l < h.n_layer; ++l) {
        uint64_t seq_base = uint64_t(seq) * capacity_[l] * row;
        uint64_t at = 0;  // rows written so far
        for (const PositionRun &run : held_positions(h.n_past, capacity_[l], h.layers[l].sinks))
            for_each_slot_run(
                run, capacity_[l], h.layers[l].sinks, [&](uint32_t, uint32_t slot, uint32_t n) {
                    uint64_t from = seq_base + slot * row;
                    ctx_.transfer().download(k_cache_[l], out + layout.k[l] + at, n * row, from);
                    ctx_.transfer().download(v_cache_[l], out + layout.v[l] + at, n * row, from);
                    at += n * row;
                });
    }
    seal_state(out, layout);
}

void Session::load_state(uint32_t seq, const uint8_t *data, size_t size) {
    check_seq(seq);
    StateHeader h = parse_state(data, size);
    const models::ModelConfig &c = model_.config();
    // The name as the header stores it: at most 31 bytes.
    if (h.arch != c.arch_name.substr(0, 31) || h.n_layer != c.n_layer ||
        h.n_head_kv != c.n_head_kv || h.head_dim != c.head_dim || h.n_vocab != c.n_vocab)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "session state of another model: %s, %u layers, %u KV heads of %u, %u ids; this "
             "session's is %s, %u layers, %u KV heads of %u, %u ids",
             h.arch.c_str(), h.n_layer, h.n_head_kv, h.head_dim, h.n_vocab, c.arch_name.c_str(),
             c.n_layer, c.n_head_kv, c.head_dim, c.n_vocab);
    if (h.fingerprint != model_.fingerprint())
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "session state of another model file (fingerprint %016llx; this model's is %016llx): "
             "same architecture and sizes, other metadata or weights",
             (unsigned long long)h.fingerprint, (unsigned long long)model_.fingerprint());
    static const char *const kTypes[] = {"F32", "F16", "Q8_0"};
    if (h.kv_type != uint32_t(opt_.kv_type))
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "session state of a %s KV cache; this session's cache is %s", kTypes[h.kv_type],
             kTypes[uint32_t(opt_.kv_type)]);
    if (!opt_.streaming && h.n_past > opt_.n_ctx)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "session state of %u positions; this session's context holds %u", h.n_past,
             opt_.n_ctx);
    if (h.n_past > model_.max_positions())
        fail(VKLLM_ERR_INVALID_ARGUMENT, "session state of %u positions; the model encodes %u",
             h.n_past, model_.max_positions());
    // Each ring gets the positions it would hold had it run the sequence itself; the state
    // must have kept them all.
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        auto want = held_positions(h.n_past, capacity_[l], layer_sinks(l));
        auto kept = held_positions(h.n_past, h.layers[l].capacity, h.layers[l].sinks);
        if (!covers(kept, want))
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "session state: layer %u's ring of %u slots (%u sinks) kept fewer of its %u "
                 "positions than this session's ring of %u slots (%u sinks) holds; restore it "
                 "into a session with the same n_ctx, n_batch and streaming settings",
                 l, h.layers[l].capacity, h.layers[l].sinks, h.n_past, capacity_[l],
                 layer_sinks(l));
    }

    StateLayout layout = state_layout(h);
    uint64_t row = slot_bytes();
    // A failure past this point (a lost device) leaves the sequence empty, never half-written.
    n_past_[seq] = 0;
    history_[seq].clear();
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        uint32_t sinks = layer_sinks(l);
        auto kept = held_positions(h.n_past, h.layers[l].capacity, h.layers[l].sinks);
        uint64_t seq_base = uint64_t(seq) * capacity_[l] * row;
        for (const PositionRun &run : held_positions(h.n_past, capacity_[l], sinks))
            for_each_slot_run(run, capacity_[l], sinks, [&](uint32_t p, uint32_t slot, uint32_t n) {
                uint64_t index = 0;
                index_in(kept, p, &index);
                uint64_t to = seq_base + slot * row;
                ctx_.transfer().upload(k_cache_[l], data + layout.k[l] + index * row, n * row, to);
                ctx_.transfer().upload(v_cache_[l], data + layout.v[l] + index * row, n * row, to);
            });
    }
    const auto *ids = reinterpret_cast<const int32_t *>(data + layout.tokens);
    history_[seq].resize(h.n_past);
    std::memcpy(history_[seq].data(), ids, uint64_t(h.n_past) * 4);
    n_past_[seq] = h.n_past;
    written_[seq] = h.n_past;
}

void Session::save_state_file(uint32_t seq, const std::string &path) const {
    std::vector<uint8_t> bytes(state_size(seq));
    save_state(seq, bytes.data());
    File f(platform::open_file(path, "wb"));
    if (!f) fail(VKLLM_ERR_IO, "%s: cannot create: %s", path.c_str(), std::strerror(errno));
    bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f.get()) == bytes.size();
    ok = std::fclose(f.release()) == 0 && ok;
    if (!ok) {
        platform::remove_file(path);
        fail(VKLLM_ERR_IO, "%s: cannot write %zu bytes", path.c_str(), bytes.size());
    }
}

void Session::load_state_file(uint32_t seq, const std::string &path) {
    check_seq(seq);
    File f(platform::open_file(path, "rb"));
    if (!f) fail(VKLLM_ERR_IO, "%s: cannot open: %s", path.c_str(), std::strerror(errno));
    auto read_at = [&](std::vector<uint8_t> &into, size_t from) {
        if (std::fread(into.data() + from, 1, into.size() - from, f.get()) != into.size() - from)
            fail(VKLLM_ERR_FORMAT, "%s: session state truncated (%zu bytes read of %zu)",
                 path.c_str(), from, into.size());
    };
    // The header first: it gives the whole size, so a hostile file sizes nothing.
    std::vector<uint8_t> bytes(16);
    read_at(bytes, 0);
    uint64_t header = state_header_bytes(bytes.data(), bytes.size());
    if (header < 16 || header > (uint64_t(1) << 20))
        fail(VKLLM_ERR_FORMAT, "%s: not a vkllm session state", path.c_str());
    bytes.resize(header);
    read_at(bytes, 16);
    uint64_t total = 0;
    parse_state_header(bytes.data(), bytes.size(), &total);
    if (!platform::seek_file(f.get(), 0, SEEK_END))
        fail(VKLLM_ERR_IO, "%s: cannot seek: %s", path.c_str(), std::strerror(errno));
    int64_t end = platform::tell_file(f.get());
    if (end < 0 || uint64_t(end) != total)
        fail(VKLLM_ERR_FORMAT, "%s: %lld bytes; its session state header describes %llu%s",
             path.c_str(), (long long)end, (unsigned long long)total,
             uint64_t(end) < total ? " (truncated)" : "");
    platform::seek_file(f.get(), int64_t(header), SEEK_SET);
    bytes.resize(total);
    read_at(bytes, header);
    load_state(seq, bytes.data(), bytes.size());
}

void Session::fork(uint32_t src, uint32_t dst, uint32_t n_keep) {
    check_seq(src);
    check_seq(dst);
    if (src == dst)
        fail(VKLLM_ERR_INVALID_ARGUMENT,
             "fork of sequence %u into itself (vkllm_session_truncate keeps a prefix)", src);
    if (n_keep > n_past_[src])
        fail(VKLLM_ERR_INVALID_ARGUMENT, "fork of %u positions of sequence %u, which has %u",
             n_keep, src, n_past_[src]);
    const models::ModelConfig &c = model_.config();
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        uint32_t sinks = layer_sinks(l);
        if (!covers(held_positions(n_past_[src], capacity_[l], sinks),
                    held_positions(n_keep, capacity_[l], sinks)))
            fail(VKLLM_ERR_INVALID_ARGUMENT,
                 "fork of %u of sequence %u's %u positions: layer %u's ring of %u slots has "
                 "overwritten some of them",
                 n_keep, src, n_past_[src], l, capacity_[l]);
    }
    uint64_t row = slot_bytes();
    gpu::Recording rec(ctx_.device());
    rec.begin();
    for (uint32_t l = 0; l < c.n_layer; ++l) {
        // Both sequences have the same rings: the kept positions sit in the same slots, a
        // prefix of the ring until it wraps, then all of it.
        uint64_t bytes = uint64_t(std::min(n_keep, capacity_[l])) * row;
        if (!bytes) continue;
        uint64_t seq_bytes = uint64_t(capacity_[l]) * row;
        rec.copy(k_cache_[l].range(src * seq_bytes, bytes),
                 k_cache_[l].range(dst * seq_bytes, bytes));
        rec.copy(v_cache_[l].range(src * seq_bytes, bytes),
                 v_cache_[l].range(dst * seq_bytes, bytes));
    }
    rec.end();
    n_past_[dst] = 0;
    history_[dst].clear();
    rec.submit();
    history_[dst].assign(history_[src].begin(), history_[src].begin() + n_keep);
    n_past_[dst] = n_keep;
    // The copy is of whole rings: dst's slots hold what src's did, up to src's high-water mark.
    written_[dst] = std::max(written_[src], n_past_[src]);
}

}  // namespace vkllm::engine
