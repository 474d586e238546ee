// The macros of a shader interface: a header next to a shader (shaders/<family>/<name>.h)
// declares its bindings, specialization constants and push constants once, and both the shader
// (GLSL) and the C++ that dispatches it (src/gpu/kernels/) include it:
//
//   VKLLM_SPEC_BEGIN(MatvecSpec)
//   VKLLM_SPEC(0, uint, WG, 64)  // GLSL: layout(constant_id = 0) const uint WG = 64;
//   VKLLM_SPEC_END(MatvecSpec)   // C++: struct shaders::MatvecSpec { SpecConstant WG{0, 64}; }
//   VKLLM_PUSH_BEGIN(MatvecPush)  // GLSL: layout(push_constant) uniform MatvecPush { ... } p;
//       uint rows;                // C++: struct shaders::MatvecPush { uint32_t rows; ... }
//   VKLLM_PUSH_END(MatvecPush)
//   VKLLM_BINDINGS_BEGIN(MatvecTexelBindings)
//   VKLLM_TEXEL_BINDING(MatvecTexelBindings, 0, w, R32G32B32A32_UINT)  // a uniform texel buffer
//   VKLLM_BINDING(MatvecTexelBindings, 1, y)                           // a storage buffer
//   VKLLM_BINDINGS_END(MatvecTexelBindings)
//     // GLSL: const uint MatvecTexelBindings_w = 0; const uint MatvecTexelBindings_y = 1;
//     // C++: struct shaders::MatvecTexelBindings {
//     //          Binding w{0, VK_FORMAT_R32G32B32A32_UINT, "w", {}};
//     //          Binding y{1, VK_FORMAT_UNDEFINED, "y", {}};
//     //          static constexpr uint32_t count = 2; }
//
//   VKLLM_CONST(EPILOGUE_BIAS, 1)  // GLSL: const uint EPILOGUE_BIAS = 1;
//                                  // C++: inline constexpr uint32_t shaders::EPILOGUE_BIAS = 1;
//     // the values a specialization or push constant takes (op codes, flag bits, layouts): the
//     // shader compares with the name and C++ sets the name; where C++ has an enum of its own
//     // (gpu::KvType, gpu::Binary, ...), the kernel static_asserts its values equal these.
//
// The bindings are declared after the constants: their GLSL constants then add no type to the
// SPIR-V (they may still add an unused, optimized-away constant, which renumbers its ids).
//
// C++ sets the constants by name (spec.WG = 8) and Pipelines::get passes each with its
// constant_id, so a constant renamed, added or moved in the header is a build error or simply
// right, never a value in the wrong slot. Push constants are uint, int and float only (4 bytes
// each, the same offsets in std430 and C++), and C++ sets them by name too (push.rows = ...),
// never by position in an aggregate initializer (tests/check_layering.py push-by-name).
//
// Bindings likewise: the shader declares `layout(binding = MatvecTexelBindings_w)`, C++ sets
// `b.w = range` and passes the struct to the dispatch (Pipelines::get<MatvecTexelBindings>
// takes the binding count and the texel formats from it; a binding left unset fails the
// dispatch). Each binding names
// its struct, which scopes its GLSL name (and C++ checks it is the enclosing struct), and the
// numbers must run 0..n-1 in order: either mistake is a build error.
//
// The C++ these macros expand to needs only the types declared here (SpecConstant, Binding,
// kPushConstantBytes, ...) and BufferRange (buffer_range.h): the shaders include nothing from
// src/ (tests/check_layering.py shaders-include), and src/gpu/pipeline.h includes this.
#ifndef VKLLM_SHADER_INTERFACE_H
#define VKLLM_SHADER_INTERFACE_H

#ifdef __cplusplus

#include <volk.h>

#include <cstdint>
#include <type_traits>

#include "buffer_range.h"

namespace vkllm::gpu {

// Every kernel binds storage buffers or uniform texel buffers (bindings 0..n-1) and up to this
// many bytes of push constants: the Vulkan minimum, so it works on every device.
inline constexpr uint32_t kPushConstantBytes = 128;

// A specialization constant of a shader interface: its constant_id and its value (a bool's as
// VkBool32). Assigning sets the value.
struct SpecConstant {
    uint32_t id;
    uint32_t value;
    SpecConstant &operator=(uint32_t v) {
        value = v;
        return *this;
    }
};
// The base of an interface's specialization constants: a struct of SpecConstant members only.
struct SpecList {};
// The specialization constants of a shader that has none.
struct NoSpec : SpecList {};

// A binding of a shader interface: its binding number, name and format (VK_FORMAT_UNDEFINED for
// a storage buffer, else the uniform texel buffer's format), and the range a dispatch binds
// there. Assigning a range sets it.
struct Binding {
    uint32_t id;
    VkFormat format;
    const char *name;
    BufferRange range;
    Binding &operator=(const BufferRange &r) {
        range = r;
        return *this;
    }
};
static_assert(std::is_trivially_copyable_v<Binding>);
// The base of an interface's bindings: a struct of Binding members only, numbered 0..count-1
// in order (the macros below check it at build time), with `static constexpr count`.
struct BindingList {};

}  // namespace vkllm::gpu

namespace vkllm::gpu::shaders {
using uint = uint32_t;
}  // namespace vkllm::gpu::shaders

#define VKLLM_CONST(NAME, VALUE)            \
    namespace vkllm::gpu::shaders {         \
    inline constexpr uint32_t NAME = VALUE; \
    }

#define VKLLM_SPEC_BEGIN(NAME)      \
    namespace vkllm::gpu::shaders { \
    struct NAME : ::vkllm::gpu::SpecList {
#define VKLLM_SPEC(ID, TYPE, NAME, DEFAULT) ::vkllm::gpu::SpecConstant NAME{ID, uint32_t(DEFAULT)};
#define VKLLM_SPEC_END(NAME)                                                      \
    }                                                                             \
    ;                                                                             \
    static_assert(sizeof(NAME) % sizeof(::vkllm::gpu::SpecConstant) == 0, #NAME); \
    }
#define VKLLM_PUSH_BEGIN(NAME)      \
    namespace vkllm::gpu::shaders { \
    struct NAME {
#define VKLLM_PUSH_END(NAME)                                                                   \
    }                                                                                          \
    ;                                                                                          \
    static_assert(alignof(NAME) == 4 && sizeof(NAME) % 4 == 0, #NAME ": 4-byte scalars only"); \
    static_assert(sizeof(NAME) <= ::vkllm::gpu::kPushConstantBytes, #NAME ": too large");      \
    }
// __COUNTER__ (GCC, Clang, MSVC) counts the bindings since BEGIN: binding k must be number k.
#define VKLLM_BINDINGS_BEGIN(NAME)            \
    namespace vkllm::gpu::shaders {           \
    struct NAME : ::vkllm::gpu::BindingList { \
        using self_ = NAME;                   \
        static constexpr int first_counter_ = __COUNTER__;
#define VKLLM_BINDING_CHECK_(STRUCT, ID, NAME)                                              \
    static_assert(std::is_same_v<STRUCT, self_>, #NAME ": a binding of another interface"); \
    static_assert(ID == __COUNTER__ - first_counter_ - 1,                                   \
                  #NAME ": bindings are numbered 0..n-1 in order");
#define VKLLM_BINDING(STRUCT, ID, NAME)    \
    VKLLM_BINDING_CHECK_(STRUCT, ID, NAME) \
    ::vkllm::gpu::Binding NAME{ID, VK_FORMAT_UNDEFINED, #NAME, {}};
#define VKLLM_TEXEL_BINDING(STRUCT, ID, NAME, FORMAT) \
    VKLLM_BINDING_CHECK_(STRUCT, ID, NAME)            \
    ::vkllm::gpu::Binding NAME{ID, VK_FORMAT_##FORMAT, #NAME, {}};
#define VKLLM_BINDINGS_END(NAME)                                                       \
    static constexpr uint32_t count = uint32_t(__COUNTER__ - first_counter_ - 1);      \
    }                                                                                  \
    ;                                                                                  \
    static_assert(sizeof(NAME) == NAME::count * sizeof(::vkllm::gpu::Binding), #NAME); \
    }

#else  // GLSL

#define VKLLM_CONST(NAME, VALUE) const uint NAME = VALUE;
#define VKLLM_SPEC_BEGIN(NAME)
#define VKLLM_SPEC(ID, TYPE, NAME, DEFAULT) layout(constant_id = ID) const TYPE NAME = DEFAULT;
#define VKLLM_SPEC_END(NAME)
#define VKLLM_PUSH_BEGIN(NAME) layout(push_constant) uniform NAME {
#define VKLLM_PUSH_END(NAME) \
    }                        \
    p;
#define VKLLM_BINDINGS_BEGIN(NAME)
#define VKLLM_BINDING(STRUCT, ID, NAME) const uint STRUCT##_##NAME = ID;
#define VKLLM_TEXEL_BINDING(STRUCT, ID, NAME, FORMAT) const uint STRUCT##_##NAME = ID;
#define VKLLM_BINDINGS_END(NAME)

#endif

#endif
