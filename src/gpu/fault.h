// Fault injection for tests: makes a chosen Vulkan call fail as a driver would (out of device
// memory, device lost, ...), so that the paths a real failure takes are exercised on any
// device. Not exported from the shared library; tests reach it through the static archive.
// With nothing armed it costs one relaxed atomic load per call site.
#pragma once

#include <cstdint>

#include "gpu/vulkan.h"

namespace vkllm::gpu {

enum class FaultSite {
    AllocateMemory,  // vkAllocateMemory: the call is not made
    QueueSubmit,     // vkQueueSubmit: the call is not made, nothing runs
    WaitForFences,   // vkWaitForFences: the work has finished, then the wait reports failure
};

// The call at `site` after `skip` more successful ones fails with `result`, once.
void inject_fault(FaultSite site, VkResult result, uint32_t skip = 0);
// Disarms any pending fault.
void clear_faults();

// At a call site: the injected result, or VK_SUCCESS when none is due.
VkResult injected_fault(FaultSite site);

}  // namespace vkllm::gpu
