// The GPU layer below the kernels: memory sub-allocation, transfers, recorded command
// buffers replayed, timestamps, the pipeline cache file and device choice.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "elementwise/eltwise.h"
#include "elementwise/softmax.h"
#include "environment.h"
#include "gpu_fixture.h"
#include "linear/matvec.h"
#include "reference/cpu_ops.h"
#include "shader_names.h"

using namespace vkllm::gpu;

TEST_F(GpuTest, SubAllocationsAreAlignedDisjointAndReusedAfterFree) {
    Allocator &a = ctx_->allocator();
    uint64_t align = ctx_->device().caps().storage_offset_align;
    std::vector<Buffer> bufs;
    for (size_t n : {1u, 3u, 1000u, 4096u, 77777u})
        bufs.push_back(a.allocate(n, MemoryKind::Device));
    uint64_t after_five = a.bytes_allocated();
    std::set<std::pair<VkDeviceSize, VkDeviceSize>> spans;
    for (const Buffer &b : bufs) {
        BufferRange r = b.range();
        EXPECT_EQ(r.offset % align, 0u);
        EXPECT_EQ(r.buffer, bufs[0].range().buffer) << "small buffers share one block";
        for (const auto &s : spans)
            EXPECT_TRUE(r.offset + r.size <= s.first || s.first + s.second <= r.offset);
        spans.insert({r.offset, r.size});
    }
    // The freed range is reused: no new device allocation.
    bufs.pop_back();
    Buffer again = a.allocate(70000, MemoryKind::Device);
    EXPECT_EQ(a.bytes_allocated(), after_five);
    bufs.clear();
    again = Buffer();
    EXPECT_EQ(a.bytes_allocated(), 0u) << "an empty block goes back to the driver";
}

TEST_F(GpuTest, BufferLargerThanABlockGetsItsOwnAllocation) {
    Allocator &a = ctx_->allocator();
    Buffer small = a.allocate(1024, MemoryKind::Device);
    uint64_t before = a.bytes_allocated();
    Buffer big = a.allocate(uint64_t(300) << 20, MemoryKind::Device);
    EXPECT_GE(a.bytes_allocated() - before, uint64_t(300) << 20);
    big = Buffer();
    EXPECT_EQ(a.bytes_allocated(), before);
}

TEST_F(GpuTest, AllocationBeyondTheDeviceIsAnErrorNotACrash) {
    Allocator &a = ctx_->allocator();
    uint64_t before = a.bytes_allocated();
    try {
        Buffer huge = a.allocate(uint64_t(1) << 50, MemoryKind::Device);  // 1 PiB
        FAIL() << "a 1 PiB allocation succeeded";
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_OUT_OF_DEVICE_MEMORY) << e.what();
    }
    EXPECT_EQ(a.bytes_allocated(), before) << "nothing leaked";
    Buffer fine = a.allocate(4096, MemoryKind::Device);  // and the allocator still works
    EXPECT_EQ(fine.size(), 4096u);
}

TEST_F(GpuTest, UploadThenDownloadRoundTripsDeviceAndHostBuffers) {
    std::vector<float> v = ref::random(100000, 1);
    for (MemoryKind kind : {MemoryKind::Device, MemoryKind::Host}) {
        Buffer b = ctx_->allocator().allocate(v.size() * 4 + 64, kind);
        ctx_->transfer().upload(b, v.data(), v.size() * 4, 64);
        std::vector<float> back(v.size());
        ctx_->transfer().download(b, back.data(), back.size() * 4, 64);
        EXPECT_EQ(back, v);
    }
}

TEST_F(GpuTest, RecordedCommandBufferReplaysOnNewInputs) {
    // The engine records a step once and replays it with new values in its buffers.
    const uint32_t n = 1000;
    Buffer a = floats(n), b = floats(n), y = floats(n);
    rec_->begin();
    kernels().binary(*rec_, Binary::Add, a.range(), b.range(), y.range(), n, n);
    rec_->end();
    for (int step = 0; step < 3; ++step) {
        std::vector<float> av = ref::random(n, 10 + step), bv = ref::random(n, 20 + step), want(n);
        for (uint32_t i = 0; i < n; ++i)
            want[i] = av[i] + bv[i];
        ctx_->transfer().upload(a, av.data(), n * 4);
        ctx_->transfer().upload(b, bv.data(), n * 4);
        uint64_t submits = ctx_->device().submits();
        rec_->submit();
        EXPECT_EQ(ctx_->device().submits(), submits + 1);
        expect_close(download(y, n), want, 0, 0, "replayed add");
    }
    EXPECT_EQ(rec_->dispatches(), 1u);
}

TEST_F(GpuTest, TimestampsMeasureEachLabelledSpan) {
    if (!ctx_->device().info().timestamps) GTEST_SKIP() << "device has no timestamps";
    Recording rec(ctx_->device(), 8);
    ASSERT_TRUE(rec.timestamps_enabled());
    std::vector<float> w = ref::random(512 * 512, 3), x = ref::random(512, 4);
    Buffer wb = upload(w), xb = upload(x), yb = floats(512);
    rec.begin();
    Matrix m{wb.range(), WeightType::F32, 512, 512};
    kernels().matvec(rec, m, xb.range(), yb.range());
    rec.timestamp("first");
    kernels().matvec(rec, m, xb.range(), yb.range());
    kernels().matvec(rec, m, xb.range(), yb.range());
    rec.timestamp("second");
    rec.end();
    rec.submit();
    std::vector<Timing> t = rec.timings();
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(t[0].label, "first");
    EXPECT_EQ(t[1].label, "second");
    EXPECT_GT(t[0].ms, 0.0);
    EXPECT_GT(t[1].ms, 0.0);
    EXPECT_LT(t[0].ms + t[1].ms, 60000.0);
}

TEST_F(GpuTest, PipelinesAreCreatedOncePerVariant) {
    Pipelines &p = ctx_->pipelines();
    uint64_t before = p.created();
    shaders::EltwiseSpec add, mul;
    add.OP = shaders::OP_ADD;
    mul.OP = shaders::OP_MUL;
    const Pipeline &a = p.get<shaders::EltwiseBindings>(shaders::eltwise, add);
    const Pipeline &b = p.get<shaders::EltwiseBindings>(shaders::eltwise, add);
    const Pipeline &c = p.get<shaders::EltwiseBindings>(shaders::eltwise, mul);
    EXPECT_EQ(&a, &b);
    EXPECT_NE(a.pipeline, c.pipeline);
    EXPECT_EQ(p.created(), before + 2);
    EXPECT_THROW(p.get<shaders::EltwiseBindings>("no_such_shader", NoSpec{}), vkllm::Error);
}

TEST_F(GpuTest, PipelineCacheFilePersistsAndForeignFilesAreIgnored) {
    std::string path = ::testing::TempDir() + "vkllm_pipeline_cache_test.bin";
    std::remove(path.c_str());
    {
        Pipelines p(ctx_->device(), path);
        EXPECT_EQ(p.cache_bytes_loaded(), 0u);
        shaders::MatvecSpec spec;
        spec.WG = 8;
        spec.ROWS = 16;
        spec.WTYPE = 0;
        p.get<shaders::MatvecBindings>(shaders::matvec, spec);
        p.save();
    }
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    ASSERT_TRUE(in.good()) << "cache file was not written";
    uint64_t size = uint64_t(in.tellg());
    EXPECT_GE(size, 32u);
    {
        Pipelines p(ctx_->device(), path);
        EXPECT_EQ(p.cache_bytes_loaded(), size);
    }
    {  // garbage, as from another driver or a torn write: ignored, not passed to the driver
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << "this is not a pipeline cache, but it is longer than its 32-byte header";
    }
    Pipelines p(ctx_->device(), path);
    EXPECT_EQ(p.cache_bytes_loaded(), 0u);
    shaders::SoftmaxSpec spec;
    spec.WG = 8;
    p.get<shaders::SoftmaxBindings>(shaders::softmax, spec);
    std::remove(path.c_str());
}

namespace {
DeviceCaps fake(uint32_t index, const char *name, vkllm_device_type type, bool usable = true) {
    DeviceCaps d;
    d.info.index = index;
    d.info.type = type;
    std::snprintf(d.info.name, sizeof d.info.name, "%s", name);
    d.info.usable = usable;
    if (!usable) d.unusable_reason = "supports only Vulkan 1.0";
    return d;
}
}  // namespace

TEST(DeviceChoice, PrefersDiscreteThenIntegratedThenCpuAndHonoursIndexNameAndEnv) {
    unset_env("VKLLM_DEVICE");
    std::vector<DeviceCaps> d = {fake(0, "llvmpipe (LLVM 15)", VKLLM_DEVICE_CPU),
                                 fake(1, "Intel UHD 630", VKLLM_DEVICE_INTEGRATED_GPU),
                                 fake(2, "NVIDIA GeForce RTX 4090", VKLLM_DEVICE_DISCRETE_GPU),
                                 fake(3, "Old GPU", VKLLM_DEVICE_DISCRETE_GPU, false)};
    EXPECT_EQ(choose_device(d, -1, nullptr).info.index, 2u);
    EXPECT_EQ(choose_device(d, 0, nullptr).info.index, 0u);
    EXPECT_EQ(choose_device(d, -1, "intel").info.index, 1u);
    EXPECT_THROW(choose_device(d, 7, nullptr), vkllm::Error);
    EXPECT_THROW(choose_device(d, 3, nullptr), vkllm::Error);
    EXPECT_THROW(choose_device(d, -1, "radeon"), vkllm::Error);
    set_env("VKLLM_DEVICE", "1");
    EXPECT_EQ(choose_device(d, -1, nullptr).info.index, 1u);
    set_env("VKLLM_DEVICE", "LLVMPIPE");
    EXPECT_EQ(choose_device(d, -1, nullptr).info.index, 0u);
    EXPECT_EQ(choose_device(d, 2, nullptr).info.index, 2u) << "params win over the environment";
    unset_env("VKLLM_DEVICE");
    std::vector<DeviceCaps> none = {fake(0, "Old GPU", VKLLM_DEVICE_DISCRETE_GPU, false)};
    try {
        choose_device(none, -1, nullptr);
        FAIL();
    } catch (const vkllm::Error &e) {
        EXPECT_EQ(e.status(), VKLLM_ERR_NO_DEVICE);
        EXPECT_NE(std::string(e.what()).find("Vulkan 1.0"), std::string::npos) << e.what();
    }
}

// The check every GPU test relies on: a validation error is counted and logged.
TEST(Validation, ErrorsAreCountedAndReachTheLogger) {
    std::vector<std::string> messages;
    vkllm::Logger log{[](void *user, vkllm_log_level level, const char *msg) {
                          if (level == VKLLM_LOG_ERROR)
                              static_cast<std::vector<std::string> *>(user)->push_back(msg);
                      },
                      &messages};
    Instance instance(true, log);
    std::vector<DeviceCaps> devices = query_devices(instance);
    Device device(instance, choose_device(devices, -1, nullptr));
    VkBufferCreateInfo bad{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bad.size = 0;  // VUID-VkBufferCreateInfo-size-00912
    bad.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buffer = VK_NULL_HANDLE;
    device.vk().vkCreateBuffer(device.handle(), &bad, nullptr, &buffer);
    if (buffer) device.vk().vkDestroyBuffer(device.handle(), buffer, nullptr);
    EXPECT_GE(instance.validation_errors(), 1u);
    ASSERT_FALSE(messages.empty());
    EXPECT_NE(messages[0].find("VkBufferCreateInfo"), std::string::npos) << messages[0];
}

// Validation runs with synchronization validation: two writes of one range with no barrier
// between them are a hazard the core checks cannot see, and it must be counted as an error.
// A Recording never records one (it puts barriers where the data needs them), so the two fills
// go into a command buffer of the test's own.
TEST(Validation, SynchronizationHazardsAreCountedAsErrors) {
    std::vector<std::string> messages;
    ContextParams p;
    p.validation = true;
    p.log = vkllm::Logger{[](void *user, vkllm_log_level level, const char *msg) {
                              if (level == VKLLM_LOG_ERROR)
                                  static_cast<std::vector<std::string> *>(user)->push_back(msg);
                          },
                          &messages};
    Context ctx(p);
    Buffer b = ctx.allocator().allocate(4096, MemoryKind::Device);
    {
        Device &dev = ctx.device();
        const VolkDeviceTable &vk = dev.vk();
        VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
        pi.queueFamilyIndex = dev.caps().queue_family;
        VkCommandPool pool = VK_NULL_HANDLE;
        ASSERT_EQ(vk.vkCreateCommandPool(dev.handle(), &pi, nullptr, &pool), VK_SUCCESS);
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        ASSERT_EQ(vk.vkAllocateCommandBuffers(dev.handle(), &ai, &cmd), VK_SUCCESS);
        VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        vk.vkBeginCommandBuffer(cmd, &bi);
        BufferRange r = b.range();
        vk.vkCmdFillBuffer(cmd, r.buffer, r.offset, r.size, 1);
        vk.vkCmdFillBuffer(cmd, r.buffer, r.offset, r.size, 2);  // no barrier: write after write
        vk.vkEndCommandBuffer(cmd);
        dev.submit_and_wait(cmd);
        vk.vkDestroyCommandPool(dev.handle(), pool, nullptr);
    }
    EXPECT_GE(ctx.instance().validation_errors(), 1u);
    ASSERT_FALSE(messages.empty());
    EXPECT_NE(messages[0].find("SYNC-HAZARD-WRITE-AFTER-WRITE"), std::string::npos) << messages[0];
}
