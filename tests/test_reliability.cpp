// What a library inside someone else's process must survive: a device memory budget smaller
// than the model, the driver running out of memory or losing the device (injected at the
// Vulkan calls, gpu/fault.h), sessions of one model on several threads, one session misused
// from two threads, and cancellation at random points.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "engine_fixture.h"
#include "gpu/fault.h"
#include "reference/tiny_model.h"

using vkllm::gpu::FaultSite;

namespace {

uint64_t allocated(vkllm_runtime *rt) {
    vkllm_runtime_stats st;
    st.struct_size = sizeof st;
    EXPECT_EQ(vkllm_runtime_get_stats(rt, &st), VKLLM_OK);
    return st.device_memory_allocated;
}

struct Greedy {
    std::vector<int32_t> ids;
};

int32_t collect_token(void *user, int32_t token, const char *, size_t) {
    if (token >= 0) static_cast<Greedy *>(user)->ids.push_back(token);
    return 0;
}

// Greedy tokens of `max_tokens` after `prompt` on sequence 0, from an empty sequence.
std::vector<int32_t> greedy(vkllm_session *s, const std::vector<int32_t> &prompt,
                            uint32_t max_tokens, vkllm_status *status = nullptr) {
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0.0f;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = max_tokens;
    Greedy out;
    gp.user_data = &out;
    gp.on_token = collect_token;
    vkllm_status st = vkllm_session_reset(s, 0);
    if (st == VKLLM_OK)
        st = vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, nullptr);
    if (status)
        *status = st;
    else
        EXPECT_EQ(st, VKLLM_OK) << vkllm_last_error();
    return out.ids;
}

class Reliability : public EngineTest {
  protected:
    void TearDown() override {
        vkllm::gpu::clear_faults();
        EngineTest::TearDown();
    }

    // A runtime of its own, with a memory budget; destroyed by the test.
    vkllm_runtime *budget_runtime(uint64_t budget) {
        vkllm_runtime_params p;
        vkllm_runtime_params_init(&p);
        p.device_memory_budget = budget;
        vkllm_runtime *rt = nullptr;
        EXPECT_EQ(vkllm_runtime_create(&p, &rt), VKLLM_OK) << vkllm_last_error();
        return rt;
    }

    std::string tiny_path(const TinyModelSpec &spec, const char *name) {
        std::string path = temp_path(name);
        write_tiny_model(path, spec);
        return path;
    }
};

}  // namespace

TEST_F(Reliability, ModelLargerThanTheMemoryBudgetIsRefusedAndLeavesNothingAllocated) {
    TinyModelSpec big;
    big.n_embd = 256, big.n_ff = 512, big.n_vocab = 512, big.n_head = 4, big.n_head_kv = 4;
    std::string big_path = tiny_path(big, "budget_big");
    TinyModelSpec small;
    std::string small_path = tiny_path(small, "budget_small");
    // The big model's weights are about 3.5 MiB of F32; 2 MiB holds the small one only.
    vkllm_runtime *rt = budget_runtime(2u << 20);
    ASSERT_NE(rt, nullptr);
    uint64_t before = allocated(rt);
    vkllm_model *m = reinterpret_cast<vkllm_model *>(0x1);
    EXPECT_EQ(vkllm_model_load(rt, big_path.c_str(), nullptr, &m), VKLLM_ERR_OUT_OF_DEVICE_MEMORY);
    EXPECT_NE(std::string(vkllm_last_error()).find("budget"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(m, reinterpret_cast<vkllm_model *>(0x1)) << "the out-parameter is untouched";
    EXPECT_EQ(allocated(rt), before);
    // The runtime is still usable: the small model loads and runs.
    m = nullptr;
    ASSERT_EQ(vkllm_model_load(rt, small_path.c_str(), nullptr, &m), VKLLM_OK)
        << vkllm_last_error();
    vkllm_session *s = nullptr;
    vkllm_session_params sp;
    vkllm_session_params_init(&sp);
    sp.n_ctx = 64;
    ASSERT_EQ(vkllm_session_create(m, &sp, &s), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(greedy(s, token_ids(5, small.n_vocab, 3), 4).size(), 4u);
    EXPECT_LE(allocated(rt), uint64_t(2) << 20);
    vkllm_session_destroy(s);
    vkllm_model_destroy(m);
    EXPECT_EQ(allocated(rt), before);
    vkllm_runtime_destroy(rt);
}

TEST_F(Reliability, SessionLargerThanTheMemoryBudgetIsRefusedAndTheModelStaysUsable) {
    TinyModelSpec spec;
    spec.n_ctx = 1 << 16;
    std::string path = tiny_path(spec, "budget_session");
    vkllm_runtime *rt = budget_runtime(3u << 20);
    ASSERT_NE(rt, nullptr);
    vkllm_model *m = nullptr;
    ASSERT_EQ(vkllm_model_load(rt, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
    uint64_t before = allocated(rt);
    // 65,536 positions of F32 keys and values in two layers: 32 MiB.
    vkllm_session_params p;
    vkllm_session_params_init(&p);
    p.n_ctx = 1 << 16;
    p.kv_type = VKLLM_KV_F32;
    vkllm_session *s = nullptr;
    EXPECT_EQ(vkllm_session_create(m, &p, &s), VKLLM_ERR_OUT_OF_DEVICE_MEMORY);
    EXPECT_NE(std::string(vkllm_last_error()).find("KV cache"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(s, nullptr);
    EXPECT_EQ(allocated(rt), before);
    p.n_ctx = 64;
    ASSERT_EQ(vkllm_session_create(m, &p, &s), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(greedy(s, token_ids(5, spec.n_vocab, 3), 4).size(), 4u);
    vkllm_session_destroy(s);
    vkllm_model_destroy(m);
    vkllm_runtime_destroy(rt);
}

// Every device allocation of a model load and a session creation, made to fail in turn as a
// driver out of memory would: each gives VKLLM_ERR_OUT_OF_DEVICE_MEMORY, leaves no memory
// behind, and the same load then succeeds.
TEST_F(Reliability, DriverOutOfDeviceMemoryAtEveryAllocationLeavesNothingBehind) {
    TinyModelSpec spec;
    std::string path = tiny_path(spec, "oom");
    uint64_t before = allocated(rt_);
    uint32_t failures = 0;
    for (uint32_t skip = 0; skip < 64; ++skip) {
        vkllm::gpu::inject_fault(FaultSite::AllocateMemory, VK_ERROR_OUT_OF_DEVICE_MEMORY, skip);
        vkllm_model *m = nullptr;
        vkllm_status st = vkllm_model_load(rt_, path.c_str(), nullptr, &m);
        vkllm_session *s = nullptr;
        if (st == VKLLM_OK) {
            vkllm_session_params p;
            vkllm_session_params_init(&p);
            p.n_ctx = 64;
            st = vkllm_session_create(m, &p, &s);
        }
        if (st == VKLLM_OK) st = vkllm_session_eval(s, 0, token_ids(3, 64, 1).data(), 3, nullptr);
        vkllm::gpu::clear_faults();
        vkllm_session_destroy(s);
        vkllm_model_destroy(m);
        if (st == VKLLM_OK) break;  // past the last allocation
        ++failures;
        EXPECT_EQ(st, VKLLM_ERR_OUT_OF_DEVICE_MEMORY) << "allocation " << skip;
        EXPECT_NE(std::string(vkllm_last_error()).find("out of"), std::string::npos)
            << vkllm_last_error();
        EXPECT_EQ(allocated(rt_), before) << "allocation " << skip;
    }
    std::printf("%u allocations failed in turn\n", failures);
    EXPECT_GE(failures, 3u) << "weights, activations and KV cache each allocate";
    vkllm_model *m = load(path);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 64);
    EXPECT_EQ(greedy(s, token_ids(5, spec.n_vocab, 3), 4).size(), 4u);
}

TEST_F(Reliability, DeviceLostIsReportedOnEveryLaterCallAndEverythingStillDestroys) {
    TinyModelSpec spec;
    std::string path = tiny_path(spec, "lost");
    vkllm_model *m = load(path);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 64), *other = session(m, 64);
    std::vector<int32_t> prompt = token_ids(6, spec.n_vocab, 2);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);

    vkllm::gpu::inject_fault(FaultSite::WaitForFences, VK_ERROR_DEVICE_LOST);
    uint32_t seq = 0;
    int32_t token = 5;
    std::vector<float> logits(spec.n_vocab);
    EXPECT_EQ(vkllm_session_decode(s, &seq, &token, 1, logits.data()), VKLLM_ERR_DEVICE_LOST);
    EXPECT_NE(std::string(vkllm_last_error()).find("VK_ERROR_DEVICE_LOST"), std::string::npos)
        << vkllm_last_error();

    // Every later call on the session, on the runtime's other sessions, and every new load.
    for (vkllm_session *x : {s, other}) {
        EXPECT_EQ(vkllm_session_decode(x, &seq, &token, 1, logits.data()), VKLLM_ERR_DEVICE_LOST);
        EXPECT_EQ(vkllm_session_eval(x, 0, prompt.data(), 1, nullptr), VKLLM_ERR_DEVICE_LOST);
        vkllm_status st;
        greedy(x, prompt, 2, &st);
        EXPECT_EQ(st, VKLLM_ERR_DEVICE_LOST);
        EXPECT_EQ(vkllm_session_reset(x, -1), VKLLM_ERR_DEVICE_LOST);
        EXPECT_EQ(vkllm_session_truncate(x, 0, 0), VKLLM_ERR_DEVICE_LOST);
        uint32_t pos = 77;
        EXPECT_EQ(vkllm_session_get_position(x, 0, &pos), VKLLM_ERR_DEVICE_LOST);
        EXPECT_EQ(pos, 77u);
        vkllm_session_stats stats;
        stats.struct_size = sizeof stats;
        EXPECT_EQ(vkllm_session_get_stats(x, &stats), VKLLM_ERR_DEVICE_LOST);
        EXPECT_NE(std::string(vkllm_last_error()).find("lost"), std::string::npos);
    }
    vkllm_model *again = nullptr;
    EXPECT_EQ(vkllm_model_load(rt_, path.c_str(), nullptr, &again), VKLLM_ERR_DEVICE_LOST);
    EXPECT_EQ(again, nullptr);
    vkllm_session_params p;
    vkllm_session_params_init(&p);
    vkllm_session *fresh = nullptr;
    EXPECT_EQ(vkllm_session_create(m, &p, &fresh), VKLLM_ERR_DEVICE_LOST);
    EXPECT_EQ(fresh, nullptr);
    // TearDown destroys the sessions, the model and the runtime; the sanitizer runs check
    // that nothing leaks.
}

// Failures other than a lost device are statuses too, and they leave the session as it was:
// the next step gives the logits an undisturbed session gives.
TEST_F(Reliability, FailedSubmitsBecomeStatusesAndTheSessionCarriesOn) {
    TinyModelSpec spec;
    vkllm_model *m = load(tiny_path(spec, "submit"));
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 64), *clean = session(m, 64);
    std::vector<int32_t> prompt = token_ids(7, spec.n_vocab, 4);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    ASSERT_EQ(vkllm_session_eval(clean, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    const struct {
        VkResult result;
        vkllm_status status;
    } cases[] = {{VK_ERROR_OUT_OF_HOST_MEMORY, VKLLM_ERR_OUT_OF_HOST_MEMORY},
                 {VK_ERROR_OUT_OF_DEVICE_MEMORY, VKLLM_ERR_OUT_OF_DEVICE_MEMORY},
                 {VK_ERROR_INITIALIZATION_FAILED, VKLLM_ERR_VULKAN}};
    uint32_t seq = 0;
    int32_t token = 9;
    std::vector<float> got(spec.n_vocab), want(spec.n_vocab);
    for (const auto &c : cases) {
        vkllm::gpu::inject_fault(FaultSite::QueueSubmit, c.result);
        EXPECT_EQ(vkllm_session_decode(s, &seq, &token, 1, got.data()), c.status);
        EXPECT_NE(std::string(vkllm_last_error()).find("vkQueueSubmit"), std::string::npos)
            << vkllm_last_error();
        uint32_t pos = 0;
        ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
        EXPECT_EQ(pos, prompt.size()) << "a failed step is not counted";
    }
    ASSERT_EQ(vkllm_session_decode(s, &seq, &token, 1, got.data()), VKLLM_OK);
    ASSERT_EQ(vkllm_session_decode(clean, &seq, &token, 1, want.data()), VKLLM_OK);
    EXPECT_EQ(got, want);
}

// Several sessions of one model generating at once, on threads, give exactly the tokens they
// give one after another.
TEST_F(Reliability, SessionsOnSeveralThreadsGiveTheTokensTheyGiveOneByOne) {
    TinyModelSpec spec;
    vkllm_model *m = load(tiny_path(spec, "threads"));
    ASSERT_NE(m, nullptr);
    const size_t n = 4;
    std::vector<vkllm_session *> sessions;
    std::vector<std::vector<int32_t>> prompts, sequential(n), threaded(n);
    for (size_t i = 0; i < n; ++i) {
        sessions.push_back(session(m, 64, i % 2 ? VKLLM_KV_F32 : VKLLM_KV_F16));
        prompts.push_back(token_ids(3 + 5 * i, spec.n_vocab, uint32_t(40 + i)));
    }
    for (size_t i = 0; i < n; ++i)
        sequential[i] = greedy(sessions[i], prompts[i], 16);
    for (int round = 0; round < 3; ++round) {
        std::vector<std::thread> threads;
        for (size_t i = 0; i < n; ++i)
            threads.emplace_back([&, i] { threaded[i] = greedy(sessions[i], prompts[i], 16); });
        for (auto &t : threads)
            t.join();
        for (size_t i = 0; i < n; ++i) {
            EXPECT_EQ(threaded[i], sequential[i]) << "session " << i << ", round " << round;
            EXPECT_EQ(threaded[i].size(), 16u);
        }
    }
}

// Misuse that is cheap to detect is detected: a second thread changing a session while a call
// on it runs, and a callback re-entering its own session. Both are refused and change nothing.
TEST_F(Reliability, ASessionChangedFromTwoThreadsAtOnceIsRefused) {
    TinyModelSpec spec;
    vkllm_model *m = load(tiny_path(spec, "misuse"));
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 64);
    std::vector<int32_t> prompt = token_ids(5, spec.n_vocab, 8);
    std::vector<int32_t> want = greedy(s, prompt, 6);

    struct Shared {
        std::atomic<int> state{0};  // 1: generate is inside its callback, 2: let it go on
        vkllm_session *s;
        vkllm_status reentered = VKLLM_OK;
    } shared;
    shared.s = s;
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0.0f;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 6;
    gp.user_data = &shared;
    gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
        auto *sh = static_cast<Shared *>(user);
        if (token < 0 || sh->state.load() != 0) return 0;
        sh->reentered = vkllm_session_reset(sh->s, 0);  // re-entering from the callback
        sh->state.store(1);
        while (sh->state.load() != 2)
            std::this_thread::yield();
        return 0;
    };
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    vkllm_status generated = VKLLM_ERR_INTERNAL;
    std::thread worker([&] {
        generated = vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, nullptr);
    });
    while (shared.state.load() != 1)
        std::this_thread::yield();
    uint32_t seq = 0;
    int32_t token = 3;
    EXPECT_EQ(vkllm_session_decode(s, &seq, &token, 1, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("in use"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(vkllm_session_eval(s, 0, prompt.data(), 2, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    shared.state.store(2);
    worker.join();
    EXPECT_EQ(shared.reentered, VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(generated, VKLLM_OK) << "the refused calls changed nothing";
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, prompt.size() + 5);
    EXPECT_EQ(greedy(s, prompt, 6), want);
}

// Cancelled at random points of the prefill (between chunks) and of the decoding, hundreds of
// times: the position always says what is in the cache, and the next generation is correct.
TEST_F(Reliability, CancellingAtRandomPointsLeavesAConsistentSession) {
    TinyModelSpec spec;
    vkllm_model *m = load(tiny_path(spec, "cancel_random"));
    ASSERT_NE(m, nullptr);
    vkllm_session *s =
        session(m, 128, VKLLM_KV_F16, 0, 1, 4);  // prefill chunks of 4: many cancel points
    std::vector<int32_t> check_prompt = token_ids(9, spec.n_vocab, 77);
    std::vector<int32_t> want = greedy(s, check_prompt, 4);
    ASSERT_EQ(want.size(), 4u);

    struct Cancel {
        int prefill_calls = 0, token_calls = 0;
        int stop_prefill_at = -1, stop_token_at = -1;
    };
    std::mt19937 rng(20261123);
    int cancelled_in_prefill = 0, cancelled_in_decode = 0;
    const int rounds = 200;
    for (int round = 0; round < rounds; ++round) {
        size_t n_prompt = 1 + rng() % 30;
        std::vector<int32_t> prompt = token_ids(n_prompt, spec.n_vocab, uint32_t(round));
        size_t chunks = (n_prompt + 3) / 4;
        Cancel c;
        if (rng() % 2 && chunks > 1)
            c.stop_prefill_at = int(rng() % (chunks - 1)) + 1;  // after this many chunks
        else
            c.stop_token_at = int(rng() % 8) + 1;  // at this token
        vkllm_sampling_params sp;
        vkllm_sampling_params_init(&sp);
        sp.seed = uint32_t(round);  // sampled, not greedy: cancellation mid-sampling too
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = 16;
        gp.user_data = &c;
        gp.on_prefill = [](void *user, size_t, size_t) -> int32_t {
            auto *c = static_cast<Cancel *>(user);
            return ++c->prefill_calls == c->stop_prefill_at;
        };
        gp.on_token = [](void *user, int32_t, const char *, size_t) -> int32_t {
            auto *c = static_cast<Cancel *>(user);
            return ++c->token_calls == c->stop_token_at;
        };
        ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        vkllm_generate_result r;
        r.struct_size = sizeof r;
        vkllm_status st = vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r);
        uint32_t pos = 0;
        ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
        if (st == VKLLM_OK) {  // ended (end of text) before the chosen token
            EXPECT_EQ(pos, n_prompt + r.n_generated - (r.stop_reason == VKLLM_STOP_MAX_TOKENS));
            continue;
        }
        ASSERT_EQ(st, VKLLM_ERR_CANCELLED) << vkllm_last_error();
        EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
        if (c.stop_prefill_at > 0) {
            ++cancelled_in_prefill;
            EXPECT_EQ(pos, uint32_t(4 * c.stop_prefill_at)) << "round " << round;
            EXPECT_EQ(r.n_generated, 0u);
        } else {
            ++cancelled_in_decode;
            // The cancelled token was sampled but not yet run through the model.
            EXPECT_EQ(pos, n_prompt + r.n_generated - 1) << "round " << round;
            EXPECT_EQ(r.n_generated, uint32_t(c.stop_token_at));
        }
        if (round % 10 == 9) {
            EXPECT_EQ(greedy(s, check_prompt, 4), want) << "round " << round;
        }
    }
    std::printf("%d cancelled in prefill, %d in decoding\n", cancelled_in_prefill,
                cancelled_in_decode);
    EXPECT_GE(cancelled_in_prefill, 50);
    EXPECT_GE(cancelled_in_decode, 50);
    EXPECT_EQ(greedy(s, check_prompt, 4), want);
}

// Runtime, model and session created, used and destroyed over and over: nothing may be left
// behind (the sanitizer pass of scripts/test runs 1000 cycles with LeakSanitizer; a plain run
// does VKLLM_TEST_CYCLES, default 20), and device memory goes back to zero each time.
TEST(Lifecycle, CreateUseDestroyCyclesLeaveNothingBehind) {
    TinyModelSpec spec;
    std::string path = ::testing::TempDir() + "vkllm_cycles_" + std::to_string(getpid()) + ".gguf";
    write_tiny_model(path, spec);
    const char *env = std::getenv("VKLLM_TEST_CYCLES");
    int cycles = env ? std::atoi(env) : 20;
    std::vector<int32_t> prompt = token_ids(3, spec.n_vocab, 5);
    std::vector<float> first(spec.n_vocab), logits(spec.n_vocab);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < cycles; ++i) {
        vkllm_runtime *rt = nullptr;
        ASSERT_EQ(vkllm_runtime_create(nullptr, &rt), VKLLM_OK) << vkllm_last_error();
        vkllm_model *m = nullptr;
        ASSERT_EQ(vkllm_model_load(rt, path.c_str(), nullptr, &m), VKLLM_OK) << vkllm_last_error();
        vkllm_session_params p;
        vkllm_session_params_init(&p);
        p.n_ctx = 16;
        vkllm_session *s = nullptr;
        ASSERT_EQ(vkllm_session_create(m, &p, &s), VKLLM_OK) << vkllm_last_error();
        // Every tenth cycle also runs the model (compiling its pipelines on the new device).
        if (i % 10 == 0) {
            ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), logits.data()),
                      VKLLM_OK)
                << vkllm_last_error();
            if (i == 0) first = logits;
            EXPECT_EQ(logits, first) << "cycle " << i;
        }
        // The runtime outlives the model and session handles released before it, or after it.
        if (i % 2) {
            vkllm_runtime_destroy(rt);
            vkllm_session_destroy(s);
            vkllm_model_destroy(m);
        } else {
            vkllm_session_destroy(s);
            vkllm_model_destroy(m);
            EXPECT_EQ(allocated(rt), 0u) << "cycle " << i;
            vkllm_runtime_destroy(rt);
        }
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d create/use/destroy cycles in %.1f s\n", cycles, s);
    std::remove(path.c_str());
}
