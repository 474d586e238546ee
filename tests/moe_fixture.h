// The mixture-of-experts kernel tests' fixture: router logits with planted ties, the CPU
// reference's routing of them, and expert weights of the types the loader binds with the
// values the GPU sees (tests/test_kernels_moe.cpp, tests/test_kernels_moe_coopmat.cpp).
#pragma once

#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "format/quant.h"
#include "gpu/kernels/weight_layout.h"
#include "gpu_fixture.h"
#include "reference/cpu_ops.h"
#include "reference/forward.h"

struct Routed {
    std::vector<int> experts;  // [n_tokens * k]
    std::vector<double> weights;
};

class MoeTest : public GpuTest {
  protected:
    // Router logits with planted ties (equal logits: the lower expert must win).
    std::vector<float> logits(uint32_t n_tokens, uint32_t n_expert, uint32_t seed) {
        std::vector<float> l = ref::random(size_t(n_tokens) * n_expert, seed, -3, 3);
        for (uint32_t t = 0; t < n_tokens; t += 3)
            l[size_t(t) * n_expert + 1] = l[size_t(t) * n_expert + n_expert - 1] = 3.5f;
        return l;
    }

    Routed cpu_route(const std::vector<float> &l, uint32_t n_tokens, uint32_t n_expert, uint32_t k,
                     ref::Routing routing, bool norm_topk = false) {
        ref::ModelRef m;
        m.routing = routing;
        m.norm_topk = norm_topk;
        m.n_expert = n_expert;
        m.n_expert_used = k;
        Routed r;
        for (uint32_t t = 0; t < n_tokens; ++t) {
            std::vector<double> row(l.begin() + size_t(t) * n_expert,
                                    l.begin() + size_t(t + 1) * n_expert);
            std::vector<int> e;
            std::vector<double> w;
            ref::route(m, row, &e, &w);
            r.experts.insert(r.experts.end(), e.begin(), e.end());
            r.weights.insert(r.weights.end(), w.begin(), w.end());
        }
        return r;
    }

    // `count` expert weights of `type` (F32, Q4_K, MXFP4 or the grouped MXFP4_G16 and Q8_0_G8)
    // as bound, and their values: F32 as is; quantized as random blocks with sane scales, via
    // the CPU quantizer of random values (MXFP4 has none: random bytes with small exponents),
    // then regrouped as the loader does.
    std::pair<std::vector<uint8_t>, std::vector<float>> expert_weights(vkllm::gpu::WeightType type,
                                                                       uint64_t count,
                                                                       uint32_t seed) {
        vkllm::gpu::WeightType stored =
            type == vkllm::gpu::WeightType::MXFP4_G16 ? vkllm::gpu::WeightType::MXFP4
            : type == vkllm::gpu::WeightType::Q8_0_G8 ? vkllm::gpu::WeightType::Q8_0
                                                      : type;
        uint32_t ggml = stored == vkllm::gpu::WeightType::MXFP4  ? 39u
                        : stored == vkllm::gpu::WeightType::Q8_0 ? 8u
                        : stored == vkllm::gpu::WeightType::Q4_K ? 12u
                                                                 : 0u;
        std::vector<float> w(count);
        std::vector<uint8_t> bytes;
        if (type == vkllm::gpu::WeightType::F32) {
            w = ref::random(count, seed);
            bytes.resize(count * 4);
            std::memcpy(bytes.data(), w.data(), bytes.size());
            return {bytes, w};
        }
        bytes.resize(count / vkllm::gpu::block_weights(stored) * vkllm::gpu::block_bytes(stored));
        if (stored == vkllm::gpu::WeightType::MXFP4) {
            std::mt19937 rng(seed);
            for (size_t i = 0; i < bytes.size(); ++i)
                bytes[i] = i % 17 == 0 ? uint8_t(120 + rng() % 8) : uint8_t(rng());
        } else {
            std::vector<float> v = ref::random(count, seed);
            vkllm::format::quantize_row(ggml, v.data(), bytes.data(), count);
        }
        vkllm::format::dequantize_row(ggml, bytes.data(), w.data(), count);
        if (type != stored)
            bytes = vkllm::gpu::group_blocks(stored, bytes.data(),
                                             count / vkllm::gpu::block_weights(stored));
        bytes.resize((bytes.size() + 3) / 4 * 4);
        return {bytes, w};
    }

    std::vector<int32_t> read_route(const vkllm::gpu::Buffer &b, uint64_t words) {
        std::vector<int32_t> v(words);
        ctx_->transfer().download(b, v.data(), words * 4);
        return v;
    }
};
