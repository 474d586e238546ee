// Barriers on data, not on order (gpu::Recording): for a prefill and a decode step of the tiny
// model of every architecture, the recorded commands are checked from their logs against the
// rule itself, computed here independently: no two commands between two barriers touch the same
// bytes where one of them writes (read after write, write after read, write after write), and
// every barrier is needed: the command after it does touch what one before it, since the last
// barrier, wrote or read. The validation layer's synchronization check, on in every GPU test,
// also sees each submission. Prints each step's dispatches and barriers per layer, and the
// barriers of the rule before it, one after every kernel call (each command here: no weight of
// these models is split into chunks), recorded in docs/BENCHMARKS.md.
#include <cctype>
#include <cstdio>
#include <numeric>

#include "engine/model.h"
#include "engine/session.h"
#include "gpu_fixture.h"
#include "reference/tiny_archs.h"

namespace {

using Event = vkllm::gpu::Recording::Event;
using Span = vkllm::gpu::Recording::Span;

bool touch(const std::vector<Span> &a, const std::vector<Span> &b) {
    for (const Span &x : a)
        for (const Span &y : b)
            if (x.buffer == y.buffer && x.begin < y.end && y.begin < x.end) return true;
    return false;
}

// Whether `later` must wait for `earlier`.
bool depends(const Event &earlier, const Event &later) {
    return touch(earlier.writes, later.reads) || touch(earlier.writes, later.writes) ||
           touch(earlier.reads, later.writes);
}

struct Counts {
    size_t commands = 0, dispatches = 0, barriers = 0;
};

// Checks the log's barriers against the rule; counts the dispatches and barriers.
Counts check_barriers(const std::vector<Event> &log, const std::string &what) {
    Counts c;
    size_t start = 0;  // the first command since the last barrier
    for (size_t i = 0; i < log.size(); ++i) {
        if (log[i].barrier) {
            ++c.barriers;
            if (i + 1 < log.size()) {
                bool needed = false;
                for (size_t j = start; j < i && !needed; ++j)
                    needed = !log[j].barrier && depends(log[j], log[i + 1]);
                EXPECT_TRUE(needed) << what << ": the barrier before command " << i + 1 << " ("
                                    << log[i + 1].what << ") orders nothing";
            }
            start = i + 1;
            continue;
        }
        ++c.commands;
        if (log[i].what != "copy" && log[i].what != "fill") ++c.dispatches;
        for (size_t j = start; j < i; ++j)
            EXPECT_FALSE(depends(log[j], log[i]))
                << what << ": command " << i << " (" << log[i].what << ") depends on command " << j
                << " (" << log[j].what << ") with no barrier between them";
    }
    EXPECT_TRUE(!log.empty() && log.back().barrier)
        << what << ": the recording must end with a barrier (the host and the next submission)";
    return c;
}

class BarriersOnData : public GpuTest, public ::testing::WithParamInterface<TinyArch> {};

class RecordingBarriers : public GpuTest {};

}  // namespace

// Three quarters of one buffer: fills and copies of disjoint ranges share no barrier; reading
// what was written (RAW) and writing what was read (WAR) each get one; end() adds the last.
// The results are what the commands in order give, with no validation message.
TEST_F(RecordingBarriers, OnlyWhereTheRangesOverlap) {
    using vkllm::gpu::Buffer;
    Buffer b = floats(1024);
    auto part = [&](uint32_t i) { return b.range(i * 1024, 1024); };
    vkllm::gpu::Recording &rec = *rec_;
    rec.begin();
    rec.fill(part(0), 0x3f800000u);  // 1.0f
    rec.fill(part(1), 0x40000000u);  // 2.0f
    EXPECT_EQ(rec.barriers(), 0u) << "two fills of disjoint ranges";
    rec.copy(part(0), part(2));
    EXPECT_EQ(rec.barriers(), 1u) << "a copy reading what a fill wrote";
    rec.copy(part(1), part(3));
    EXPECT_EQ(rec.barriers(), 1u) << "the second fill was ordered by that barrier already";
    rec.fill(part(0), 0x40400000u);  // 3.0f
    EXPECT_EQ(rec.barriers(), 2u) << "a fill of what a copy reads";
    rec.end();
    EXPECT_EQ(rec.barriers(), 3u);
    rec.submit();
    std::vector<float> got = download(b, 1024);
    EXPECT_EQ(got[0], 3.0f);
    EXPECT_EQ(got[256], 2.0f);
    EXPECT_EQ(got[512], 1.0f);
    EXPECT_EQ(got[768], 2.0f);
}

void PrintTo(const TinyArch &arch, std::ostream *os) {
    *os << arch.name;
}

TEST_P(BarriersOnData, OnlyBetweenCommandsThatShareWrittenBytes) {
    const TinyArch &arch = GetParam();
    std::string path = ::testing::TempDir() + "vkllm_barriers_" + arch.name + ".gguf";
    write_tiny_model(path, arch.spec);
    vkllm::engine::Model model(*ctx_, path, {});
    std::remove(path.c_str());
    vkllm::engine::SessionOptions o;
    o.n_ctx = 64;
    o.log_recordings = true;
    vkllm::engine::Session session(model, o);
    std::vector<int32_t> prompt(20);
    std::iota(prompt.begin(), prompt.end(), 1);
    session.prefill(0, prompt.data(), prompt.size(), nullptr);
    ASSERT_NE(session.last_recording(), nullptr);
    Counts prefill = check_barriers(session.last_recording()->log(), arch.name + " prefill");
    uint32_t seq = 0;
    int32_t token = 3, argmax = 0;
    session.decode(&seq, &token, 1, nullptr, &argmax);
    Counts decode = check_barriers(session.last_recording()->log(), arch.name + " decode");
    double layers = arch.spec.n_layer;
    for (const auto &[step, c] : {std::pair{"prefill", prefill}, std::pair{"decode", decode}})
        std::printf(
            "%s %s: %zu dispatches, %zu barriers (%.1f, %.1f per layer); one per "
            "command: %zu\n",
            arch.name.c_str(), step, c.dispatches, c.barriers, c.dispatches / layers,
            c.barriers / layers, c.commands);
    // Prefill's products that read the same input (q, k and v where they are separate; gate
    // and up) share a barrier. A fused decode step is one chain: a barrier per dispatch.
    EXPECT_LT(prefill.barriers, prefill.dispatches) << "independent dispatches share barriers";
}

INSTANTIATE_TEST_SUITE_P(EveryArchitecture, BarriersOnData, ::testing::ValuesIn(tiny_archs()),
                         [](const ::testing::TestParamInfo<TinyArch> &i) {
                             std::string n = i.param.name;
                             for (char &c : n)
                                 if (!std::isalnum(uint8_t(c))) c = '_';
                             return n;
                         });
