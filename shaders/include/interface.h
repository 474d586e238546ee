// The macros of a shader interface: a header next to a shader (shaders/<family>/<name>.h)
// declares its specialization constants and push constants once, and both the shader (GLSL)
// and the C++ that dispatches it (src/gpu/kernels/) include it:
//
//   VKLLM_SPEC_BEGIN(MatvecSpec)
//   VKLLM_SPEC(0, uint, WG, 64)  // GLSL: layout(constant_id = 0) const uint WG = 64;
//   VKLLM_SPEC_END(MatvecSpec)   // C++: struct shaders::MatvecSpec { SpecConstant WG{0, 64}; }
//   VKLLM_PUSH_BEGIN(MatvecPush)  // GLSL: layout(push_constant) uniform MatvecPush { ... } p;
//       uint rows;                // C++: struct shaders::MatvecPush { uint32_t rows; ... }
//   VKLLM_PUSH_END(MatvecPush)
//
// C++ sets the constants by name (spec.WG = 8) and Pipelines::get passes each with its
// constant_id, so a constant renamed, added or moved in the header is a build error or simply
// right, never a value in the wrong slot. Push constants are uint, int and float only (4 bytes
// each, the same offsets in std430 and C++).
#ifndef VKLLM_SHADER_INTERFACE_H
#define VKLLM_SHADER_INTERFACE_H

#ifdef __cplusplus

#include <cstdint>

#include "gpu/pipeline.h"

namespace vkllm::gpu::shaders {
using uint = uint32_t;
}  // namespace vkllm::gpu::shaders

#define VKLLM_SPEC_BEGIN(NAME) \
    namespace vkllm::gpu::shaders { \
    struct NAME : ::vkllm::gpu::SpecList {
#define VKLLM_SPEC(ID, TYPE, NAME, DEFAULT) ::vkllm::gpu::SpecConstant NAME{ID, uint32_t(DEFAULT)};
#define VKLLM_SPEC_END(NAME) \
    }; \
    static_assert(sizeof(NAME) % sizeof(::vkllm::gpu::SpecConstant) == 0, #NAME); \
    }
#define VKLLM_PUSH_BEGIN(NAME) \
    namespace vkllm::gpu::shaders { \
    struct NAME {
#define VKLLM_PUSH_END(NAME) \
    }; \
    static_assert(alignof(NAME) == 4 && sizeof(NAME) % 4 == 0, #NAME ": 4-byte scalars only"); \
    static_assert(sizeof(NAME) <= ::vkllm::gpu::kPushConstantBytes, #NAME ": too large"); \
    }

#else  // GLSL

#define VKLLM_SPEC_BEGIN(NAME)
#define VKLLM_SPEC(ID, TYPE, NAME, DEFAULT) layout(constant_id = ID) const TYPE NAME = DEFAULT;
#define VKLLM_SPEC_END(NAME)
#define VKLLM_PUSH_BEGIN(NAME) layout(push_constant) uniform NAME {
#define VKLLM_PUSH_END(NAME) } p;

#endif

#endif
