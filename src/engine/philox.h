// The counter-based generator both samplers draw from: the host's (sampler.cpp) and the
// device's (shaders/argmax/sample.comp), so that the n-th draw of a seed is one number wherever
// it is made, and chained decode steps draw what single steps would.
#pragma once

#include <cstdint>

namespace vkllm::engine {

// Draw `draw` of stream `stream` under `seed`: the top 24 bits of the first word of
// Philox-4x32-10 (Salmon et al., SC'11) of the counter (draw, stream, 0, 0) under the key
// (seed's low word, high word), in [0, 1). 24 bits: exact in the device's float.
double philox_uniform(uint64_t seed, uint32_t stream, uint32_t draw);

}  // namespace vkllm::engine
