// The bytes of a saved sequence state (docs/STATE.md, "Session state and fork"): a header naming
// the model and the session settings the state depends on, the sequence's token ids, each
// layer's K and V rows in position order, and a checksum. This file knows the layout and the
// rings' arithmetic; engine/session_state.cpp moves the rows between it and a session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vkllm::engine {

constexpr uint32_t kStateVersion = 1;

// Positions [begin, end).
struct PositionRun {
    uint32_t begin = 0, end = 0;
};

// The positions a ring of `capacity` slots, the first `sinks` of them fixed, holds once
// positions [0, n_past) went through it: all of them until it wraps, then the sinks and the
// most recent capacity - sinks. At most two runs, in order, with a gap between them.
std::vector<PositionRun> held_positions(uint32_t n_past, uint32_t capacity, uint32_t sinks);
uint64_t held_count(uint32_t n_past, uint32_t capacity, uint32_t sinks);

// Slot of position p in such a ring.
inline uint32_t ring_slot(uint32_t p, uint32_t capacity, uint32_t sinks) {
    return p < sinks ? p : sinks + (p - sinks) % (capacity - sinks);
}

struct LayerRing {
    uint32_t capacity = 0;  // the ring's slots in the saving session
    uint32_t sinks = 0;     // its fixed slots (streaming sinks of a full-attention layer)
    uint32_t rows = 0;      // positions held, held_count(n_past, capacity, sinks)
};

struct StateHeader {
    uint64_t fingerprint = 0;  // engine::model_fingerprint of the model file
    std::string arch;          // the architecture's name, for messages
    uint32_t n_layer = 0, n_head_kv = 0, head_dim = 0, n_vocab = 0;
    uint32_t kv_type = 0;  // gpu::KvType
    uint32_t n_ctx = 0;    // the saving session's positions per sequence
    uint32_t n_sink = 0;   // its streaming sinks (0 without streaming)
    bool streaming = false;
    uint32_t n_past = 0;  // positions in the sequence
    std::vector<LayerRing> layers;
};

// Where the parts of a checked state lie, as byte offsets into it.
struct StateLayout {
    uint64_t slot_bytes = 0;     // K (or V) bytes of one position of one layer, all KV heads
    uint64_t tokens = 0;         // n_past int32 ids
    std::vector<uint64_t> k, v;  // per layer: rows x slot_bytes each
    uint64_t checksum = 0;       // the last 8 bytes
    uint64_t total = 0;
};

StateLayout state_layout(const StateHeader &h);

// Writes the header into the first bytes of `out` (which holds state_layout(h).total bytes).
void write_state_header(const StateHeader &h, uint8_t *out);
// Hashes everything before the checksum and stores it there.
void seal_state(uint8_t *state, const StateLayout &layout);

// Reads and checks a state's header, size, checksum and token ids against what they must be
// on their own (not yet against any model or session). VKLLM_ERR_FORMAT, with a message,
// for anything that is not a whole, intact state of this version.
StateHeader parse_state(const uint8_t *data, size_t size);
// The bytes of the header alone (to read a file's before the rest), or 0 when `size` bytes
// are too few to tell.
uint64_t state_header_bytes(const uint8_t *data, size_t size);
// Reads and checks the header alone (the first state_header_bytes of a state); *total gets the
// size of the whole state it describes.
StateHeader parse_state_header(const uint8_t *data, size_t size, uint64_t *total);

}  // namespace vkllm::engine
