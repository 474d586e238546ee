#include "engine/fingerprint.h"

#include <algorithm>

#include "common/hash.h"

namespace vkllm::engine {

uint64_t model_fingerprint(const format::GgufFile &file) {
    const uint64_t kSample = 256;
    uint64_t h = kHashSeed;
    for (const format::KeyValue &kv : file.keys()) {
        h = hash64(kv.key.data(), kv.key.size(), h);
        uint32_t types[2] = {uint32_t(kv.type), uint32_t(kv.element_type)};
        h = hash64(types, sizeof types, h);
        std::string_view value = file.value_bytes(kv);
        h = hash64(value.data(), value.size(), h);
    }
    for (const format::TensorInfo &t : file.tensors()) {
        h = hash64(t.name.data(), t.name.size(), h);
        uint64_t shape[6] = {t.type->id, t.n_dims, t.dims[0], t.dims[1], t.dims[2], t.dims[3]};
        h = hash64(shape, sizeof shape, h);
        const uint8_t *data = file.tensor_data(t);
        uint64_t n = std::min(kSample, t.n_bytes);
        for (uint64_t at : {uint64_t(0), (t.n_bytes - n) / 2, t.n_bytes - n})
            h = hash64(data + at, n, h);
    }
    return h;
}

}  // namespace vkllm::engine
