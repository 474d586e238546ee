// A range of a buffer, as a binding of a shader interface (interface.h) receives it: the one
// type the host-shader contract shares with the gpu layer (src/gpu/tensor.h includes it), so it
// lives here, below both. C++ only; no Vulkan header is reached from here (VkBuffer declared as
// vulkan_core.h declares it), so the layers above the GPU can name ranges without one.
#ifndef VKLLM_SHADER_BUFFER_RANGE_H
#define VKLLM_SHADER_BUFFER_RANGE_H

#include <cstdint>

// VkBuffer as vulkan_core.h declares it (a pointer to an opaque struct on 64-bit targets, a
// 64-bit integer elsewhere). Should the two ever differ, the second typedef is a build error.
#ifndef VK_USE_64_BIT_PTR_DEFINES
#if defined(__LP64__) || defined(_WIN64) || (defined(__x86_64__) && !defined(__ILP32__)) || \
    defined(_M_X64) || defined(__ia64) || defined(_M_IA64) || defined(__aarch64__) ||       \
    defined(__powerpc64__) || (defined(__riscv) && __riscv_xlen == 64)
#define VKLLM_VK_HANDLE_IS_POINTER 1
#else
#define VKLLM_VK_HANDLE_IS_POINTER 0
#endif
#else
#define VKLLM_VK_HANDLE_IS_POINTER VK_USE_64_BIT_PTR_DEFINES
#endif
#if VKLLM_VK_HANDLE_IS_POINTER
typedef struct VkBuffer_T *VkBuffer;
#else
typedef uint64_t VkBuffer;
#endif

namespace vkllm::gpu {

// A range of a VkBuffer, as bound to a kernel.
struct BufferRange {
    VkBuffer buffer{};
    uint64_t offset = 0;
    uint64_t size = 0;
};

}  // namespace vkllm::gpu

#endif
