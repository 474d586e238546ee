#include "engine/philox.h"

namespace vkllm::engine {

double philox_uniform(uint64_t seed, uint32_t stream, uint32_t draw) {
    uint32_t c0 = draw, c1 = stream, c2 = 0, c3 = 0;
    uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
    for (int round = 0; round < 10; ++round) {
        uint64_t a = uint64_t(0xD2511F53u) * c0, b = uint64_t(0xCD9E8D57u) * c2;
        uint32_t n0 = uint32_t(b >> 32) ^ c1 ^ k0, n2 = uint32_t(a >> 32) ^ c3 ^ k1;
        c1 = uint32_t(b);
        c3 = uint32_t(a);
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return double(c0 >> 8) * 0x1.0p-24;
}

}  // namespace vkllm::engine
