// Run by ctest with the Vulkan loader pointed at a driver file that does not exist: the
// library must say there is no device, not crash.
#include <gtest/gtest.h>

#include <string>

#include "vkllm.h"

TEST(NoDriver, RuntimeCreateReportsNoDeviceWithAMessage) {
    vkllm_runtime *rt = nullptr;
    EXPECT_EQ(vkllm_runtime_create(nullptr, &rt), VKLLM_ERR_NO_DEVICE);
    EXPECT_EQ(rt, nullptr);
    std::string msg = vkllm_last_error();
    EXPECT_NE(msg.find("Vulkan"), std::string::npos) << msg;
}

TEST(NoDriver, EnumerateReportsNoDevice) {
    size_t n = 42;
    EXPECT_EQ(vkllm_devices_enumerate(nullptr, 0, &n), VKLLM_ERR_NO_DEVICE);
    EXPECT_EQ(n, 42u);
}
