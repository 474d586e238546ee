// The portability request made for MoltenVK, checked on whatever loader runs the test: Linux's
// and Wine's offer VK_KHR_portability_enumeration as Apple's does.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/device_info.h"
#include "gpu/instance.h"
#include "validation.h"

using namespace vkllm::gpu;

static std::vector<std::string> offered_instance_extensions() {
    uint32_t n = 0;
    EXPECT_EQ(vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr), VK_SUCCESS);
    std::vector<VkExtensionProperties> props(n);
    EXPECT_EQ(vkEnumerateInstanceExtensionProperties(nullptr, &n, props.data()), VK_SUCCESS);
    std::vector<std::string> names;
    for (uint32_t i = 0; i < n; ++i)
        names.push_back(props[i].extensionName);
    return names;
}

static bool contains(const std::vector<std::string> &names, const std::string &name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

// MoltenVK is enumerated only for an instance that asks for portability enumeration. Linux's
// loader offers the extension too, so the request made for Apple is checked here: asked for
// when offered, named in the debug log, and nothing enabled that the loader does not list.
TEST(Portability, EnumerationIsRequestedWhenTheLoaderOffersIt) {
    std::vector<std::string> debug;
    vkllm::Logger log{[](void *user, vkllm_log_level level, const char *msg) {
                          if (level == VKLLM_LOG_DEBUG)
                              static_cast<std::vector<std::string> *>(user)->push_back(msg);
                      },
                      &debug};
    Instance instance(false, log);
    std::vector<std::string> offered = offered_instance_extensions();
    const std::vector<std::string> &enabled = instance.enabled_extensions();
    for (const std::string &e : enabled)
        EXPECT_TRUE(contains(offered, e)) << e;
    if (!contains(offered, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME))
        GTEST_SKIP() << "this loader does not offer " VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    EXPECT_TRUE(contains(enabled, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME));
    EXPECT_TRUE(instance.create_flags() & VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR);
    bool logged = false;
    for (const std::string &m : debug)
        logged |= m.find(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME) != std::string::npos;
    EXPECT_TRUE(logged);
}

// The portability flag and extension must not cost a validation message: an instance with
// validation and a device made from it report none. Under Wine the host's layer runs beneath
// winevulkan and its messages fail the test through ctest (tests/windows.cmake).
TEST(Portability, EnumerationKeepsTheValidationLayerQuiet) {
    std::vector<std::string> messages;
    vkllm::Logger log{[](void *user, vkllm_log_level level, const char *msg) {
                          if (level >= VKLLM_LOG_WARNING)
                              static_cast<std::vector<std::string> *>(user)->push_back(msg);
                      },
                      &messages};
    Instance instance(vkllm_test_validation_in_process() != 0, log);
    if (!contains(instance.enabled_extensions(), VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME))
        GTEST_SKIP() << "this loader does not offer " VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    std::vector<DeviceCaps> devices = query_devices(instance);
    { Device device(instance, choose_device(devices, -1, nullptr)); }
    EXPECT_EQ(instance.validation_errors(), 0u);
    EXPECT_EQ(instance.validation_warnings(), 0u);
    for (const std::string &m : messages)
        ADD_FAILURE() << m;
}
