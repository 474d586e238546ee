// Which descriptor bindings a compute shader may write, read from its SPIR-V: what lets a
// Recording put barriers only where a dispatch depends on an earlier one's writes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkllm::gpu {

// Bit b set: binding b of descriptor set 0 is a storage buffer the shader may write (neither
// the variable nor every member of its block is decorated NonWritable: GLSL's `readonly`).
// Bindings of other kinds (texel buffers, uniforms) and bindings 32 and up are never set.
// Malformed SPIR-V (the embedded modules are validated at build time) gives every bit set, so
// a shader of unknown access is treated as writing everything it binds.
uint32_t spirv_written_bindings(const uint32_t *words, size_t count);

}  // namespace vkllm::gpu
