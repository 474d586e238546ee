// The bindings and specialization constants of attention.comp, declared once for the shader and the
// C++ that dispatches it (shaders/include/interface.h).
#ifndef VKLLM_SHADER_ATTENTION_H
#define VKLLM_SHADER_ATTENTION_H

#include "interface.h"
#include "kv_cache.h"

VKLLM_SPEC_BEGIN(AttentionSpec)
VKLLM_SPEC(0, uint, WG, 8)
VKLLM_SPEC(1, uint, HEAD_DIM, 64)  // a multiple of 8 up to 256
VKLLM_SPEC(2, uint, KV_TYPE, 1)    // KV_F32, KV_F16 or KV_Q8_0 (kv_cache.h)
VKLLM_SPEC(3, uint, G, 1)          // query heads per workgroup, at most 8
VKLLM_SPEC(4, uint, SPLITS, 1)     // slices of the keys (z of the grid)
VKLLM_SPEC(5, uint, SOFTCAP, 0)    // 1: soft-cap the scores by the push constant softcap
VKLLM_SPEC_END(AttentionSpec)
VKLLM_BINDINGS_BEGIN(AttentionSplitBindings)
VKLLM_BINDING(AttentionSplitBindings, 0, q)
VKLLM_BINDING(AttentionSplitBindings, 1, k_cache)
VKLLM_BINDING(AttentionSplitBindings, 2, v_cache)
VKLLM_BINDING(AttentionSplitBindings, 3, out)
VKLLM_BINDING(AttentionSplitBindings, 4, positions)
VKLLM_BINDING(AttentionSplitBindings, 5, seq_ids)
VKLLM_BINDING(AttentionSplitBindings, 6, kv_begin)
VKLLM_BINDING(AttentionSplitBindings, 7, sinks)
VKLLM_BINDING(AttentionSplitBindings, 8, part)
VKLLM_BINDING(AttentionSplitBindings, 9, arrivals)
VKLLM_BINDINGS_END(AttentionSplitBindings)

#ifdef __cplusplus
#include "attention_common.h"
namespace vkllm::gpu::shaders {
// attention.comp declares bindings 0..7 through attention_common.glsl (AttentionBindings'
// numbers), so they must be the same names with the same numbers here; then part and arrivals.
constexpr bool attention_split_bindings_match() {
    AttentionSplitBindings s{};
    AttentionBindings a{};
    return s.q.id == a.q.id && s.k_cache.id == a.k_cache.id && s.v_cache.id == a.v_cache.id &&
           s.out.id == a.out.id && s.positions.id == a.positions.id &&
           s.seq_ids.id == a.seq_ids.id && s.kv_begin.id == a.kv_begin.id &&
           s.sinks.id == a.sinks.id &&
           AttentionSplitBindings::count == AttentionBindings::count + 2;
}
static_assert(attention_split_bindings_match(),
              "AttentionSplitBindings: not AttentionBindings, part and arrivals");
}  // namespace vkllm::gpu::shaders
#endif

#endif
