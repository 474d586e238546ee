// Vulkan 1.1 devices (many Android phones), imitated on lavapipe: the API version capped at 1.1
// and features masked one at a time through the runtime's Vulkan options
// (VKLLM_VULKAN_API_VERSION, VKLLM_VULKAN_MASK_FEATURES). Every run is under the validation
// layer, which holds each call to the instance's version and fails the test on any message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "environment.h"
#include "gpu/device.h"
#include "gpu/device_info.h"
#include "gpu/instance.h"
#include "test_data.h"
#include "validation.h"
#include "vkllm.h"

using namespace vkllm::gpu;

namespace {

// Warnings and errors of the logger, each one a failure of the test that collected them.
struct Messages {
    std::vector<std::string> all;
    vkllm::Logger logger() {
        return vkllm::Logger{[](void *user, vkllm_log_level level, const char *msg) {
                                 if (level >= VKLLM_LOG_WARNING)
                                     static_cast<Messages *>(user)->all.push_back(msg);
                             },
                             this};
    }
    void expect_none() const {
        for (const std::string &m : all)
            ADD_FAILURE() << m;
    }
};

VulkanOptions options(uint32_t api_version, uint32_t masked = 0) {
    VulkanOptions o;
    o.api_version = api_version;
    o.masked = masked;
    return o;
}

// The device tests run on: the one vkllm would choose without options.
const DeviceCaps &lavapipe(const std::vector<DeviceCaps> &devices) {
    return choose_device(devices, -1, nullptr);
}

}  // namespace

TEST(Vulkan11, OptionsAreParsedAndAMisspeltNameIsRefusedNamingTheAcceptedOnes) {
    EXPECT_EQ(parse_api_version(nullptr, "V"), 0u);
    EXPECT_EQ(parse_api_version("", "V"), 0u);
    EXPECT_EQ(parse_api_version("1.0", "V"), VK_API_VERSION_1_0);
    EXPECT_EQ(parse_api_version("1.1", "V"), VK_API_VERSION_1_1);
    EXPECT_EQ(parse_api_version("1.2", "V"), VK_API_VERSION_1_2);
    for (const char *bad : {"1.3", "2.0", "1", "1.1.0", " 1.1", "one"}) {
        try {
            parse_api_version(bad, "VKLLM_VULKAN_API_VERSION");
            ADD_FAILURE() << bad << " was taken";
        } catch (const vkllm::Error &e) {
            EXPECT_EQ(e.status(), VKLLM_ERR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(e.what()).find("VKLLM_VULKAN_API_VERSION"), std::string::npos);
            EXPECT_NE(std::string(e.what()).find("1.0, 1.1 or 1.2"), std::string::npos);
        }
    }
    EXPECT_EQ(parse_feature_mask(nullptr, "M"), 0u);
    EXPECT_EQ(parse_feature_mask("", "M"), 0u);
    EXPECT_EQ(parse_feature_mask("shaderFloat16,subgroupArithmetic", "M"),
              uint32_t(kMaskShaderFloat16 | kMaskSubgroupArithmetic));
    uint32_t all = 0;
    for (size_t i = 0; i < kMaskNameCount; ++i) {
        EXPECT_EQ(parse_feature_mask(kMaskNames[i].name, "M"), kMaskNames[i].bit);
        EXPECT_EQ(all & kMaskNames[i].bit, 0u) << "two names share a bit";
        all |= kMaskNames[i].bit;
    }
    for (const char *bad : {"shaderFloat61", "shaderfloat16", "shaderFloat16,,shaderInt8",
                            "shaderFloat16 ", "VK_KHR_16bit_storage"}) {
        try {
            parse_feature_mask(bad, "VKLLM_VULKAN_MASK_FEATURES");
            ADD_FAILURE() << bad << " was taken";
        } catch (const vkllm::Error &e) {
            EXPECT_EQ(e.status(), VKLLM_ERR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(e.what()).find("VKLLM_VULKAN_MASK_FEATURES"), std::string::npos);
            EXPECT_NE(std::string(e.what()).find("subgroupArithmetic"), std::string::npos)
                << "the accepted names are listed: " << e.what();
        }
    }
}

// A capped instance is created at 1.1 and its devices are used at 1.1: the features vkllm
// reports are read through VK_KHR_driver_properties and VK_KHR_shader_float16_int8 and equal
// what the 1.2 core structures say; a device made from it keeps the validation layer quiet.
TEST(Vulkan11, CappedInstanceReadsTheSameFeaturesThroughTheExtensions) {
    Messages messages;
    Instance v12(vkllm_test_validation_in_process() != 0, messages.logger());
    Instance v11(vkllm_test_validation_in_process() != 0, messages.logger(),
                 options(VK_API_VERSION_1_1));
    EXPECT_EQ(v12.api_version(), VK_API_VERSION_1_2);
    EXPECT_EQ(v11.api_version(), VK_API_VERSION_1_1);
    std::vector<DeviceCaps> all12 = query_devices(v12), all11 = query_devices(v11);
    const DeviceCaps &d12 = lavapipe(all12);
    const DeviceCaps &d11 = all11[d12.info.index];
    EXPECT_EQ(d12.used_version, VK_API_VERSION_1_2);
    EXPECT_EQ(d11.used_version, VK_API_VERSION_1_1);
    EXPECT_EQ(d11.info.api_version, VK_API_VERSION_1_1) << "the cap is what is reported";
    EXPECT_GE(d12.info.api_version, VK_API_VERSION_1_2);
    EXPECT_TRUE(d11.info.usable) << d11.unusable_reason;
    EXPECT_STREQ(d11.info.driver_name, d12.info.driver_name);
    EXPECT_STREQ(d11.info.driver_info, d12.info.driver_info);
    EXPECT_EQ(d11.is_llvmpipe, d12.is_llvmpipe);
    EXPECT_EQ(d11.info.shader_float16, d12.info.shader_float16);
    EXPECT_EQ(d11.info.shader_int8, d12.info.shader_int8);
    EXPECT_EQ(d11.info.storage_16bit, d12.info.storage_16bit);
    EXPECT_EQ(d11.info.subgroup_size, d12.info.subgroup_size);
    EXPECT_EQ(d11.subgroup_arithmetic, d12.subgroup_arithmetic);
    EXPECT_EQ(d11.info.max_allocation_size, d12.info.max_allocation_size);
    { Device device(v11, d11); }
    EXPECT_EQ(v11.validation_errors() + v11.validation_warnings(), 0u);
    messages.expect_none();
}

// Each mask takes its feature away from what the device reports, whatever the version.
TEST(Vulkan11, EachMaskTakesItsFeatureAwayFromTheDevice) {
    Messages messages;
    bool validation = vkllm_test_validation_in_process() != 0;
    Instance plain(validation, messages.logger(), options(VK_API_VERSION_1_1));
    std::vector<DeviceCaps> plain_devices = query_devices(plain);
    const DeviceCaps &base = lavapipe(plain_devices);
    if (!base.info.shader_float16 || !base.info.shader_int8 || !base.info.storage_16bit ||
        !base.subgroup_arithmetic || !base.info.driver_name[0])
        GTEST_SKIP() << base.info.name << " lacks a feature this test takes away";
    for (uint32_t version : {VK_API_VERSION_1_1, VK_API_VERSION_1_2}) {
        for (size_t i = 0; i < kMaskNameCount; ++i) {
            SCOPED_TRACE(std::string(kMaskNames[i].name) + " at 1." +
                         std::to_string(VK_API_VERSION_MINOR(version)));
            Instance instance(validation, messages.logger(), options(version, kMaskNames[i].bit));
            std::vector<DeviceCaps> devices = query_devices(instance);
            const DeviceCaps &d = devices[base.info.index];
            uint32_t bit = kMaskNames[i].bit;
            // The extensions matter where the structures are not core: at 1.1.
            bool at11 = version == VK_API_VERSION_1_1;
            bool f16_ext = at11 && bit == kMaskFloat16Int8Extension;
            EXPECT_EQ(d.info.shader_float16 == 0, bit == kMaskShaderFloat16 || f16_ext);
            EXPECT_EQ(d.info.shader_int8 == 0, bit == kMaskShaderInt8 || f16_ext);
            EXPECT_EQ(d.info.storage_16bit == 0, bit == kMaskStorageBuffer16BitAccess);
            EXPECT_EQ(!d.subgroup_arithmetic, bit == kMaskSubgroupArithmetic);
            EXPECT_EQ(d.info.driver_name[0] == 0, at11 && bit == kMaskDriverPropertiesExtension);
            EXPECT_TRUE(d.info.usable) << d.unusable_reason;
        }
    }
    messages.expect_none();
}

// Below 1.1 nothing can run (the shaders are SPIR-V 1.3): the device is listed unusable with a
// reason naming the version, and choosing it is refused with that reason.
TEST(Vulkan11, Vulkan10IsRefusedNamingTheVersionItNeeds) {
    Messages messages;
    Instance instance(vkllm_test_validation_in_process() != 0, messages.logger(),
                      options(VK_API_VERSION_1_0));
    EXPECT_EQ(instance.api_version(), VK_API_VERSION_1_0);
    std::vector<DeviceCaps> devices = query_devices(instance);
    for (const DeviceCaps &d : devices) {
        EXPECT_FALSE(d.info.usable);
        EXPECT_EQ(d.info.api_version, VK_API_VERSION_1_0);
        EXPECT_NE(d.unusable_reason.find("Vulkan 1.0"), std::string::npos) << d.unusable_reason;
        EXPECT_NE(d.unusable_reason.find("needs 1.1"), std::string::npos) << d.unusable_reason;
    }
    try {
        choose_device(devices, 0, nullptr);
        ADD_FAILURE() << "a 1.0 device was chosen";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_NO_DEVICE);
        EXPECT_NE(std::string(e.what()).find("needs 1.1"), std::string::npos) << e.what();
    }
    EXPECT_EQ(instance.validation_errors() + instance.validation_warnings(), 0u);
    messages.expect_none();
}

// volk loads the instance-level entry points once per process, from the first instance: one
// capped at 1.0 first must not leave a later 1.2 instance without its 1.1 queries (ctest runs
// this test alone, so the 1.0 instance here is the process's first).
TEST(Vulkan11, AnInstanceAfterOneCappedAt10StillReadsItsFeatures) {
    Messages messages;
    std::vector<DeviceCaps> capped;
    {
        Instance first(vkllm_test_validation_in_process() != 0, messages.logger(),
                       options(VK_API_VERSION_1_0));
        capped = query_devices(first);
    }
    Instance later(vkllm_test_validation_in_process() != 0, messages.logger());
    std::vector<DeviceCaps> devices = query_devices(later);
    const DeviceCaps &d = lavapipe(devices);
    EXPECT_FALSE(capped[d.info.index].info.usable);
    EXPECT_GT(d.info.subgroup_size, 0u);
    EXPECT_GT(d.info.max_allocation_size, 0u);
    { Device device(later, d); }
    messages.expect_none();
}

namespace {

// The tiny models of tests/data, one per architecture and weight layout.
const char *const kModels[] = {"tiny-llama-f16",      "tiny-qwen2-f32",     "tiny-qwen2-tied-f16",
                               "tiny-gpt2-f16",       "tiny-qwen2moe-f16",  "tiny-gptoss-mxfp4",
                               "stories260K-plctlab", "llama-2-tiny-random"};

// What one runtime, made under the given environment, generates from every tiny model.
struct Generated {
    vkllm_status status = VKLLM_OK;  // of vkllm_runtime_create
    std::string error;
    vkllm_device_info info{};
    std::map<std::string, std::vector<int32_t>> ids;  // per model, greedy
    std::set<std::string> kernels;                    // every shader dispatched
};

// The environment variables set for one call, removed after it whatever happens.
struct ScopedEnv {
    ScopedEnv(const char *api_version, const char *mask) {
        if (api_version) set_env("VKLLM_VULKAN_API_VERSION", api_version);
        if (mask) set_env("VKLLM_VULKAN_MASK_FEATURES", mask);
    }
    ~ScopedEnv() {
        unset_env("VKLLM_VULKAN_API_VERSION");
        unset_env("VKLLM_VULKAN_MASK_FEATURES");
    }
};

void log_warnings(void *user, vkllm_log_level level, const char *msg) {
    if (level >= VKLLM_LOG_WARNING) static_cast<std::vector<std::string> *>(user)->push_back(msg);
}

// 24 greedy tokens after an 8-token prompt, past end tokens, from each model; the pipeline
// cache file (shared by the runs: the same SPIR-V at every version) saves recompiling.
Generated generate(const std::string &dir, const std::string &cache, const char *api_version,
                   const char *mask) {
    Generated g;
    std::vector<std::string> messages;
    vkllm_runtime *rt = nullptr;
    {
        ScopedEnv env(api_version, mask);
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        if (vkllm_test_validation_in_process()) p.flags = VKLLM_RUNTIME_VALIDATION;
        if (!cache.empty()) p.pipeline_cache_path = cache.c_str();
        p.log_fn = &log_warnings;
        p.log_user_data = &messages;
        g.status = vkllm_runtime_create(&p, &rt);
    }
    if (g.status != VKLLM_OK) {
        g.error = vkllm_last_error();
        return g;
    }
    g.info.struct_size = sizeof g.info;
    EXPECT_EQ(vkllm_runtime_get_device_info(rt, &g.info), VKLLM_OK);
    for (const char *name : kModels) {
        vkllm_model *m = nullptr;
        std::string path = dir + "/models/" + name + ".gguf";
        EXPECT_EQ(vkllm_model_load(rt, path.c_str(), nullptr, &m), VKLLM_OK)
            << name << ": " << vkllm_last_error();
        if (!m) continue;
        vkllm_session_params sp;
        vkllm_session_params_init(&sp);
        sp.n_ctx = 64;
        sp.flags = VKLLM_SESSION_PROFILE;
        vkllm_session *s = nullptr;
        EXPECT_EQ(vkllm_session_create(m, &sp, &s), VKLLM_OK) << name << ": " << vkllm_last_error();
        if (s) {
            std::vector<int32_t> prompt = {5, 17, 42, 99, 123, 200, 7, 64};
            vkllm_sampling_params samp;
            vkllm_sampling_params_init(&samp);
            samp.temperature = 0;
            vkllm_generate_params gp;
            vkllm_generate_params_init(&gp);
            gp.max_tokens = 24;
            gp.ignore_eog = 1;
            std::vector<int32_t> &ids = g.ids[name];
            gp.user_data = &ids;
            gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
                if (token >= 0) static_cast<std::vector<int32_t> *>(user)->push_back(token);
                return 0;
            };
            EXPECT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &samp, &gp, nullptr),
                      VKLLM_OK)
                << name << ": " << vkllm_last_error();
            size_t n = 0;
            EXPECT_EQ(vkllm_session_get_profile(s, nullptr, 0, &n), VKLLM_OK);
            std::vector<vkllm_kernel_time> k(n);
            EXPECT_EQ(vkllm_session_get_profile(s, k.data(), k.size(), &n), VKLLM_OK);
            for (size_t i = 0; i < n; ++i)
                g.kernels.insert(k[i].kernel);
            vkllm_session_destroy(s);
        }
        vkllm_model_destroy(m);
    }
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    EXPECT_EQ(vkllm_runtime_get_stats(rt, &st), VKLLM_OK);
    EXPECT_EQ(st.validation_errors + st.validation_warnings, 0u);
    vkllm_runtime_destroy(rt);
    for (const std::string &msg : messages)
        ADD_FAILURE() << msg;
    return g;
}

bool any_subgroup_kernel(const std::set<std::string> &kernels) {
    for (const std::string &k : kernels)
        if (k.find("subgroup") != std::string::npos) return true;
    return false;
}

class Vulkan11Generation : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = test_data_dir();
        cache_ = ::testing::TempDir() + "vkllm_vulkan11_" + std::to_string(::getpid()) + ".cache";
        base_ = generate(dir_, cache_, nullptr, nullptr);
        ASSERT_EQ(base_.status, VKLLM_OK) << base_.error;
        ASSERT_EQ(base_.ids.size(), std::size(kModels));
    }
    void TearDown() override {
        if (!cache_.empty()) std::remove(cache_.c_str());
    }
    void expect_same_ids(const Generated &g) const {
        for (const auto &[name, ids] : base_.ids) {
            EXPECT_EQ(ids.size(), 24u) << name;
            auto it = g.ids.find(name);
            ASSERT_NE(it, g.ids.end()) << name;
            EXPECT_EQ(it->second, ids) << name;
        }
    }
    std::string dir_, cache_;
    Generated base_;  // the Vulkan 1.2 path, all features
};

}  // namespace

// The acceptance check of Vulkan 1.1 support: a session on lavapipe capped at 1.1 (through the
// environment, as an app or test would set it) generates the ids the 1.2 path does.
TEST_F(Vulkan11Generation, CappedRuntimeGeneratesTheGreedyIdsOfTheVulkan12Path) {
    Generated g = generate(dir_, cache_, "1.1", nullptr);
    ASSERT_EQ(g.status, VKLLM_OK) << g.error;
    EXPECT_EQ(g.info.api_version, VK_API_VERSION_1_1);
    EXPECT_GE(base_.info.api_version, VK_API_VERSION_1_2);
    EXPECT_EQ(g.kernels, base_.kernels) << "the same kernels run at 1.1";
    expect_same_ids(g);
}

// Each feature masked at 1.1: vkllm has a path without every one of them, so each run must
// give the 1.2 path's ids, and the feature must really be gone (so that no case passes by
// masking nothing). A feature without a fallback would be refused naming it; there is none.
TEST_F(Vulkan11Generation, EachMaskedFeatureFallsBackToTheSameGreedyIds) {
    // Why each falls back; a maskable name missing here fails the test.
    const std::map<std::string, const char *> why = {
        {"shaderFloat16", "no kernel computes in float16: F16 is unpacked to F32"},
        {"shaderInt8", "no kernel computes in int8: quants are unpacked from 32-bit words"},
        {"storageBuffer16BitAccess", "storage is read as 32-bit words"},
        {"subgroupArithmetic", "matvec reduces through shared memory"},
        {"VK_KHR_driver_properties", "the device class comes from the device type"},
        {"VK_KHR_shader_float16_int8", "as shaderFloat16 and shaderInt8"},
        {"VK_KHR_cooperative_matrix", "prefill runs the kernels without cooperative matrices"},
    };
    for (size_t i = 0; i < kMaskNameCount; ++i) {
        const char *name = kMaskNames[i].name;
        SCOPED_TRACE(name);
        ASSERT_EQ(why.count(name), 1u) << "no expectation for " << name;
        Generated g = generate(dir_, cache_, "1.1", name);
        ASSERT_EQ(g.status, VKLLM_OK) << g.error;
        EXPECT_EQ(g.info.api_version, VK_API_VERSION_1_1);
        expect_same_ids(g);
        uint32_t bit = kMaskNames[i].bit;
        bool f16_ext = bit == kMaskFloat16Int8Extension;
        EXPECT_EQ(g.info.shader_float16 == 0, bit == kMaskShaderFloat16 || f16_ext);
        EXPECT_EQ(g.info.shader_int8 == 0, bit == kMaskShaderInt8 || f16_ext);
        EXPECT_EQ(g.info.storage_16bit == 0, bit == kMaskStorageBuffer16BitAccess);
        EXPECT_EQ(g.info.driver_name[0] == 0, bit == kMaskDriverPropertiesExtension);
        if (bit == kMaskCooperativeMatrixExtension) {
            EXPECT_EQ(g.info.cooperative_matrix, VKLLM_COOPMAT_ABSENT);
            EXPECT_EQ(g.info.coopmat_shape_count, 0u);
        }
        if (bit == kMaskSubgroupArithmetic) {
            EXPECT_FALSE(any_subgroup_kernel(g.kernels));
            EXPECT_EQ(any_subgroup_kernel(base_.kernels), base_.info.type == VKLLM_DEVICE_CPU)
                << "lavapipe's matvec reduces with subgroupAdd when it can";
        }
    }
}

// Capped below 1.1, the C API refuses the runtime naming the version, and lists the device as
// unusable.
TEST(Vulkan11, RuntimeCappedAtVulkan10IsRefusedNamingTheVersion) {
    Generated g = generate("", "", "1.0", nullptr);
    EXPECT_EQ(g.status, VKLLM_ERR_NO_DEVICE);
    EXPECT_NE(g.error.find("needs 1.1"), std::string::npos) << g.error;
    ScopedEnv env("1.0", nullptr);
    size_t n = 0;
    ASSERT_EQ(vkllm_devices_enumerate(nullptr, 0, &n), VKLLM_OK);
    std::vector<vkllm_device_info> infos(n);
    for (vkllm_device_info &d : infos)
        d.struct_size = sizeof d;
    ASSERT_EQ(vkllm_devices_enumerate(infos.data(), n, &n), VKLLM_OK);
    for (const vkllm_device_info &d : infos) {
        EXPECT_EQ(d.usable, 0) << d.name;
        EXPECT_EQ(d.api_version, VK_API_VERSION_1_0) << d.name;
    }
}

// A misspelt variable is an error, not a silent run with nothing masked.
TEST(Vulkan11, MisspeltMaskRefusesTheRuntime) {
    Generated g = generate("", "", "1.1", "shaderFloat61");
    EXPECT_EQ(g.status, VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(g.error.find("shaderFloat61"), std::string::npos) << g.error;
}
