#include "gpu/spirv_writes.h"

#include <map>
#include <set>

namespace vkllm::gpu {

namespace {

// The SPIR-V opcodes, decorations and storage classes read here (SPIR-V 1.3 specification).
constexpr uint32_t kMagic = 0x07230203;
constexpr uint32_t kOpTypeStruct = 30, kOpTypePointer = 32, kOpVariable = 59, kOpDecorate = 71,
                   kOpMemberDecorate = 72;
constexpr uint32_t kDecorationNonWritable = 24, kDecorationBinding = 33,
                   kDecorationDescriptorSet = 34;
constexpr uint32_t kStorageUniform = 2, kStorageBuffer = 12;

}  // namespace

uint32_t spirv_written_bindings(const uint32_t *words, size_t count) {
    if (count < 5 || words[0] != kMagic) return ~0u;
    std::map<uint32_t, uint32_t> binding, set;     // variable -> its decorations
    std::set<uint32_t> readonly_vars;              // variables decorated NonWritable
    std::map<uint32_t, uint32_t> members;          // struct -> member count
    std::map<uint32_t, std::set<uint32_t>> fixed;  // struct -> members decorated NonWritable
    std::map<uint32_t, uint32_t> pointee;          // pointer type -> pointee type
    std::map<uint32_t, uint32_t> buffers;          // buffer variable -> its pointer type
    for (size_t i = 5; i < count;) {
        uint32_t n = words[i] >> 16, op = words[i] & 0xffff;
        if (n == 0 || i + n > count) return ~0u;
        const uint32_t *w = words + i;
        if (op == kOpDecorate && n >= 3) {
            if (w[2] == kDecorationNonWritable) readonly_vars.insert(w[1]);
            if (w[2] == kDecorationBinding && n >= 4) binding[w[1]] = w[3];
            if (w[2] == kDecorationDescriptorSet && n >= 4) set[w[1]] = w[3];
        } else if (op == kOpMemberDecorate && n >= 4 && w[3] == kDecorationNonWritable) {
            fixed[w[1]].insert(w[2]);
        } else if (op == kOpTypeStruct && n >= 2) {
            members[w[1]] = n - 2;
        } else if (op == kOpTypePointer && n >= 4) {
            pointee[w[1]] = w[3];
        } else if (op == kOpVariable && n >= 4 &&
                   (w[3] == kStorageBuffer || w[3] == kStorageUniform)) {
            buffers[w[2]] = w[1];
        }
        i += n;
    }
    uint32_t written = 0;
    for (const auto &[var, pointer] : buffers) {
        auto b = binding.find(var);
        if (b == binding.end() || b->second >= 32 || set[var] != 0) continue;
        if (readonly_vars.count(var)) continue;
        uint32_t block = pointee.count(pointer) ? pointee[pointer] : 0;
        bool all_fixed =
            members.count(block) && members[block] > 0 && fixed[block].size() == members[block];
        if (!all_fixed) written |= 1u << b->second;
    }
    return written;
}

}  // namespace vkllm::gpu
