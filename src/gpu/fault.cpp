#include "gpu/fault.h"

#include <atomic>
#include <mutex>

namespace vkllm::gpu {

namespace {

std::atomic<bool> g_armed{false};
std::mutex g_mutex;
FaultSite g_site;
VkResult g_result = VK_SUCCESS;
uint32_t g_skip = 0;

}  // namespace

void inject_fault(FaultSite site, VkResult result, uint32_t skip) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_site = site;
    g_result = result;
    g_skip = skip;
    g_armed.store(true);
}

void clear_faults() {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_armed.store(false);
}

VkResult injected_fault(FaultSite site) {
    if (!g_armed.load(std::memory_order_relaxed)) return VK_SUCCESS;
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_armed.load() || g_site != site) return VK_SUCCESS;
    if (g_skip > 0) {
        --g_skip;
        return VK_SUCCESS;
    }
    g_armed.store(false);
    return g_result;
}

}  // namespace vkllm::gpu
