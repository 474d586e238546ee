// A fast 64-bit hash for telling files and models apart and for catching corrupted bytes, not
// for resisting an adversary. Every 8-byte word passes an injective mix into a bijective update
// of the state, so a change confined to one word always changes the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vkllm {

constexpr uint64_t kHashSeed = 0x243F6A8885A308D3ull;

inline uint64_t hash64_word(uint64_t h, uint64_t w) {
    h ^= w * 0x9E3779B97F4A7C15ull;
    h = (h << 29) | (h >> 35);
    return h * 0xBF58476D1CE4E5B9ull;
}

// `h` chains calls: hash64(b, nb, hash64(a, na)) hashes a then b.
inline uint64_t hash64(const void *data, size_t n, uint64_t h = kHashSeed) {
    const auto *p = static_cast<const uint8_t *>(data);
    size_t words = n / 8;
    for (size_t i = 0; i < words; ++i) {
        uint64_t w;
        std::memcpy(&w, p + 8 * i, 8);
        h = hash64_word(h, w);
    }
    uint64_t tail = 0;
    std::memcpy(&tail, p + 8 * words, n % 8);
    // The length goes in last, so that trailing zero bytes are not invisible.
    h = hash64_word(h, tail);
    h = hash64_word(h, uint64_t(n));
    h ^= h >> 31;
    return h;
}

}  // namespace vkllm
