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

template <void (*Block)(const uint8_t *, float *), size_t Elements, size_t Bytes>
void decode_blocks(const uint8_t *src, float *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        Block(src + i * Bytes, dst + i * Elements);
}

template <void (*Block)(const float *, uint8_t *), size_t Elements, size_t Bytes>
void encode_blocks(const float *src, uint8_t *dst, size_t n) {
    for (size_t i = 0; i < n; ++i)
        Block(src + i * Elements, dst + i * Bytes);
}

struct Codec {
    uint32_t id;
    DecodeFn decode;
    EncodeFn encode;  // null: this build does not quantize to the type
};

#define VKLLM_BLOCKS(name, elements, bytes) \
    decode_blocks<decode_##name, elements, bytes>, encode_blocks<encode_##name, elements, bytes>

const Codec kCodecs[] = {
    {0, decode_f32, encode_f32},        {1, decode_f16, encode_f16},
    {30, decode_bf16, encode_bf16},     {2, VKLLM_BLOCKS(q4_0, 32, 18)},
    {3, VKLLM_BLOCKS(q4_1, 32, 20)},    {6, VKLLM_BLOCKS(q5_0, 32, 22)},
    {7, VKLLM_BLOCKS(q5_1, 32, 24)},    {8, VKLLM_BLOCKS(q8_0, 32, 34)},
    {12, VKLLM_BLOCKS(q4_k, 256, 144)}, {13, VKLLM_BLOCKS(q5_k, 256, 176)},
    {14, VKLLM_BLOCKS(q6_k, 256, 210)}, {39, VKLLM_BLOCKS(mxfp4, 32, 17)},
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
