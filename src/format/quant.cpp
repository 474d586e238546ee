#include "format/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "common/error.h"
#include "common/half.h"
#include "format/ggml_types.h"
#include "format/quant_blocks.h"

namespace vkllm::format {

namespace {

using namespace blocks;

// Block codecs see a whole number of blocks in aligned local buffers; the row functions do the
// (possibly unaligned) copying in and out.
using DecodeFn = void (*)(const uint8_t *src, float *dst, size_t n_blocks);
using EncodeFn = void (*)(const float *src, uint8_t *dst, size_t n_blocks);

void decode_f32(const uint8_t *src, float *dst, size_t n) {
    std::memcpy(dst, src, n * 4);
}
void encode_f32(const float *src, uint8_t *dst, size_t n) {
    std::memcpy(dst, src, n * 4);
}

void decode_f16(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        dst[i] = load_f16(src + 2 * i);
}
void encode_f16(const float *src, uint8_t *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        store_f16(dst + 2 * i, src[i]);
}

void decode_bf16(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = bf16_to_float(h);
    }
}
void encode_bf16(const float *src, uint8_t *dst, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        uint16_t h = float_to_bf16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
    }
}

// A type's block shape, from the one table of weight types, for the codecs below.
struct BlockShape {
    uint32_t weights, bytes;
};
constexpr BlockShape block_shape(uint32_t id) {
    switch (id) {
#define VKLLM_KERNEL_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES, WTYPE, GROUPED, TEXEL) \
    case GGML_ID:                                                                           \
        return {BLOCK_WEIGHTS, BLOCK_BYTES};
#define VKLLM_FILE_TYPE(NAME, GGML_ID, BLOCK_WEIGHTS, BLOCK_BYTES) \
    case GGML_ID:                                                  \
        return {BLOCK_WEIGHTS, BLOCK_BYTES};
#define VKLLM_GROUPED_TYPE(NAME, WTYPE, FROM, GROUP_BLOCKS, TEXEL)
#include "common/weight_types.def"
#undef VKLLM_KERNEL_TYPE
#undef VKLLM_FILE_TYPE
#undef VKLLM_GROUPED_TYPE
    }
    return {0, 0};
}

template <void (*Block)(const uint8_t *, float *), uint32_t Id>
void decode_blocks(const uint8_t *src, float *dst, size_t n) {
    constexpr BlockShape s = block_shape(Id);
    static_assert(s.weights > 1, "a block type of the weight-type table");
    for (size_t i = 0; i < n; ++i)
        Block(src + i * s.bytes, dst + i * s.weights);
}

template <void (*Block)(const float *, uint8_t *), uint32_t Id>
void encode_blocks(const float *src, uint8_t *dst, size_t n) {
    constexpr BlockShape s = block_shape(Id);
    for (size_t i = 0; i < n; ++i)
        Block(src + i * s.weights, dst + i * s.bytes);
}

struct Codec {
    uint32_t id;
    DecodeFn decode;
    EncodeFn encode;  // null: this build does not quantize to the type
};

#define VKLLM_BLOCKS(fn, NAME) \
    ggml::NAME, decode_blocks<decode_##fn, ggml::NAME>, encode_blocks<encode_##fn, ggml::NAME>

const Codec kCodecs[] = {
    {ggml::F32, decode_f32, encode_f32},
    {ggml::F16, decode_f16, encode_f16},
    {ggml::BF16, decode_bf16, encode_bf16},
    {VKLLM_BLOCKS(q4_0, Q4_0)},
    {VKLLM_BLOCKS(q4_1, Q4_1)},
    {VKLLM_BLOCKS(q5_0, Q5_0)},
    {VKLLM_BLOCKS(q5_1, Q5_1)},
    {VKLLM_BLOCKS(q8_0, Q8_0)},
    {VKLLM_BLOCKS(q4_k, Q4_K)},
    {VKLLM_BLOCKS(q5_k, Q5_K)},
    {VKLLM_BLOCKS(q6_k, Q6_K)},
    {VKLLM_BLOCKS(mxfp4, MXFP4)},
};

#undef VKLLM_BLOCKS

const Codec *codec(uint32_t id) {
    for (const Codec &c : kCodecs)
        if (c.id == id) return &c;
    return nullptr;
}

// Checks the call and returns the type; `what` names the direction for the message.
const GgmlType &checked_type(uint32_t id, bool supported, uint64_t n, const char *what) {
    const GgmlType *t = ggml_type(id);
    if (!t || !supported)
        fail(VKLLM_ERR_UNSUPPORTED, "%s of ggml type %s is not supported", what,
             t ? t->name : std::to_string(id).c_str());
    if (n % t->block_elements != 0)
        fail(VKLLM_ERR_INVALID_ARGUMENT, "%s: %llu elements are not whole %s blocks of %u", what,
             (unsigned long long)n, t->name, t->block_elements);
    return *t;
}

// Rows go through a local buffer of 256 elements, a whole number of blocks of every type.
const uint64_t kChunk = 256;

}  // namespace

bool can_dequantize(uint32_t type_id) {
    return codec(type_id) != nullptr;
}

bool can_quantize(uint32_t type_id) {
    const Codec *c = codec(type_id);
    return c && c->encode;
}

void dequantize_row(uint32_t type_id, const void *src, float *dst, uint64_t n) {
    const GgmlType &t = checked_type(type_id, can_dequantize(type_id), n, "dequantization");
    const Codec *c = codec(type_id);
    const uint8_t *in = static_cast<const uint8_t *>(src);
    unsigned char *out = reinterpret_cast<unsigned char *>(dst);
    float buf[kChunk];
    for (uint64_t done = 0; done < n; done += kChunk) {
        uint64_t count = std::min(kChunk, n - done);
        c->decode(in + done / t.block_elements * t.block_bytes, buf,
                  size_t(count / t.block_elements));
        std::memcpy(out + done * 4, buf, size_t(count) * 4);
    }
}

void quantize_row(uint32_t type_id, const float *src, void *dst, uint64_t n) {
    const GgmlType &t = checked_type(type_id, can_quantize(type_id), n, "quantization");
    const Codec *c = codec(type_id);
    const unsigned char *in = reinterpret_cast<const unsigned char *>(src);
    uint8_t *out = static_cast<uint8_t *>(dst);
    float buf[kChunk];
    for (uint64_t done = 0; done < n; done += kChunk) {
        uint64_t count = std::min(kChunk, n - done);
        std::memcpy(buf, in + done * 4, size_t(count) * 4);
        c->encode(buf, out + done / t.block_elements * t.block_bytes,
                  size_t(count / t.block_elements));
    }
}

}  // namespace vkllm::format
