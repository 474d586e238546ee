// A session controlled from outside its calls, on tiny models: cancel from another thread (a
// prefill stops at the next chunk, generation before the next step, the session stays usable),
// the default context and what vkllm_session_get_info reports, batched generation with a
// sampler per sequence (reproducible per seed, each sequence as it would be alone), and a
// loaded model's metadata without the file.
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "model_cache.h"
#include "tiny_model_fixture.h"

namespace {

using SessionControl = TinyModelTest;

// A prefill of many chunks: 50 chunks of 4 tokens.
constexpr uint32_t kBatch = 4;
constexpr size_t kPromptTokens = 200;

// A thread that calls vkllm_session_cancel when told to, and says when it has.
struct Canceller {
    vkllm_session *session;
    std::mutex m;
    std::condition_variable cv;
    bool asked = false, done = false;
    std::thread thread{[this] {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [this] { return asked; });
        EXPECT_EQ(vkllm_session_cancel(session), VKLLM_OK);
        done = true;
        cv.notify_all();
    }};
    explicit Canceller(vkllm_session *s) : session(s) {}
    ~Canceller() {
        {
            std::lock_guard<std::mutex> lock(m);
            asked = true;  // lets the thread end if the test failed before asking
        }
        cv.notify_all();
        thread.join();
    }
    // Asks the thread to cancel and waits until it has.
    void cancel_now() {
        std::unique_lock<std::mutex> lock(m);
        asked = true;
        cv.notify_all();
        cv.wait(lock, [this] { return done; });
    }
};

vkllm_sampling_params sampling(uint64_t seed, float temperature = 1.5f) {
    vkllm_sampling_params p;
    vkllm_sampling_params_init(&p);
    p.temperature = temperature;
    p.top_k = 0, p.top_p = 1.0f, p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

}  // namespace

TEST_F(SessionControl, CancelFromAnotherThreadStopsAPrefillAtTheNextChunkAndLeavesItUsable) {
    TinyModelSpec spec;
    spec.n_ctx = 512;
    vkllm_model *m = tiny(spec, "cancel_prefill", false);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 512, VKLLM_KV_F32, 0, 1, kBatch);
    std::vector<int32_t> prompt = some_tokens(kPromptTokens, spec.n_vocab, 5);

    // The other thread cancels while the prefill waits in its callback after 8 chunks: the
    // prefill stops there, 8 chunks in the cache, not one more.
    struct Ctx {
        Canceller *canceller;
        size_t calls = 0;
    };
    Canceller canceller(s);
    Ctx ctx{&canceller};
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 4;
    gp.user_data = &ctx;
    gp.on_prefill = [](void *user, size_t done, size_t) -> int32_t {
        auto *c = static_cast<Ctx *>(user);
        ++c->calls;
        if (done == 8 * kBatch) c->canceller->cancel_now();
        return 0;
    };
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    vkllm_sampling_params sp = sampling(1);
    ASSERT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r),
              VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(ctx.calls, 8u);
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 8 * kBatch) << "the prefill went on past the chunk it was cancelled in";

    // Usable: the rest of the prompt continues from there, with the logits of a prefill that
    // was never cancelled (the same chunks), bit for bit.
    const uint32_t n_vocab = vocab(m);
    std::vector<float> resumed(n_vocab), whole(n_vocab);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data() + pos, prompt.size() - pos, resumed.data()),
              VKLLM_OK)
        << vkllm_last_error();
    vkllm_session *fresh = session(m, 512, VKLLM_KV_F32, 0, 1, kBatch);
    ASSERT_EQ(vkllm_session_eval(fresh, 0, prompt.data(), prompt.size(), whole.data()), VKLLM_OK);
    EXPECT_EQ(std::memcmp(resumed.data(), whole.data(), n_vocab * sizeof(float)), 0);
}

TEST_F(SessionControl, CancelDuringEvalLeavesWholeChunksAndACancelWhileIdleIsDropped) {
    TinyModelSpec spec;
    spec.n_ctx = 1024;
    vkllm_model *m = tiny(spec, "cancel_eval", false);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 1024, VKLLM_KV_F16, 0, 1, 2);
    std::vector<int32_t> prompt = some_tokens(1000, spec.n_vocab, 6);  // 500 chunks

    // A cancel while nothing runs does not reach the next call.
    ASSERT_EQ(vkllm_session_cancel(s), VKLLM_OK);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), 40, nullptr), VKLLM_OK) << vkllm_last_error();
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 40u);
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);

    // A thread cancels over and over while the eval runs: it stops at a chunk's end.
    std::atomic<bool> running{true};
    std::thread t([&] {
        while (running.load())
            vkllm_session_cancel(s);
    });
    vkllm_status st = vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr);
    running.store(false);
    t.join();
    EXPECT_EQ(st, VKLLM_ERR_CANCELLED);
    EXPECT_NE(std::string(vkllm_last_error()).find("cancelled"), std::string::npos);
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
    EXPECT_GT(pos, 0u);
    EXPECT_LT(pos, prompt.size());
    EXPECT_EQ(pos % 2, 0u) << "a chunk was cut in the middle";
    EXPECT_EQ(vkllm_session_cancel(nullptr), VKLLM_ERR_INVALID_ARGUMENT);
}

TEST_F(SessionControl, CancelStopsGenerationBeforeItsNextStep) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "cancel_generate", false);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 128);
    std::vector<int32_t> prompt = some_tokens(6, spec.n_vocab, 8);
    struct Ctx {
        vkllm_session *s;
        size_t tokens = 0;
    } ctx{s};
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 20;
    gp.ignore_eog = 1;
    gp.user_data = &ctx;
    gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
        auto *c = static_cast<Ctx *>(user);
        if (token >= 0 && ++c->tokens == 3) vkllm_session_cancel(c->s);  // from the callback
        return 0;
    };
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    vkllm_sampling_params sp = sampling(3);
    ASSERT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r),
              VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(r.n_generated, 3u);
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, prompt.size() + 2) << "the third token is streamed but not decoded";
    // The next call runs in full.
    ASSERT_EQ(vkllm_session_generate(s, prompt.data(), 1, &sp, nullptr, &r), VKLLM_OK);
}

TEST_F(SessionControl, DefaultContextIsTheTrainingContextAtMost4096AndInfoReportsTheSession) {
    TinyModelSpec big;
    big.n_ctx = 8192;
    vkllm_model *m = tiny(big, "default_ctx_big", false);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m);
    vkllm_session_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_session_get_info(s, &info), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(info.n_ctx, 4096u);
    EXPECT_EQ(info.n_seq, 1u);
    EXPECT_EQ(info.n_batch, 64u);
    EXPECT_EQ(info.kv_type, VKLLM_KV_F16);
    vkllm_session_stats st;
    st.struct_size = sizeof st;
    ASSERT_EQ(vkllm_session_get_stats(s, &st), VKLLM_OK);
    EXPECT_EQ(info.kv_cache_bytes, st.kv_cache_bytes);
    // 2 layers, K and V, 4096 slots, 2 KV heads of 8 F16 values.
    EXPECT_EQ(info.kv_cache_bytes, 2u * 2u * 4096u * 2u * 8u * 2u);
    EXPECT_GT(info.device_bytes, info.kv_cache_bytes) << "activations and step buffers count";

    TinyModelSpec small;  // 128 positions
    vkllm_model *m2 = tiny(small, "default_ctx_small", false);
    ASSERT_NE(m2, nullptr);
    vkllm_session *s2 = session(m2, 0, VKLLM_KV_F32, VKLLM_SESSION_STREAMING, 3, 200, 2);
    vkllm_runtime_stats rs;
    rs.struct_size = sizeof rs;
    ASSERT_EQ(vkllm_session_get_info(s2, &info), VKLLM_OK);
    EXPECT_EQ(info.n_ctx, 128u);
    EXPECT_EQ(info.n_seq, 3u);
    EXPECT_EQ(info.n_batch, 126u) << "a chunk fits the ring after the sinks";
    EXPECT_EQ(info.n_sink, 2u);
    EXPECT_EQ(info.kv_type, VKLLM_KV_F32);
    EXPECT_EQ(info.flags, VKLLM_SESSION_STREAMING);
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &rs), VKLLM_OK);
    EXPECT_LE(info.device_bytes, rs.device_memory_allocated);

    // Only as far as the caller's struct reaches; bad arguments write nothing.
    vkllm_session_info shorter;
    std::memset(&shorter, 0xAB, sizeof shorter);
    shorter.struct_size = offsetof(vkllm_session_info, n_seq);
    ASSERT_EQ(vkllm_session_get_info(s2, &shorter), VKLLM_OK);
    EXPECT_EQ(shorter.n_ctx, 128u);
    EXPECT_EQ(shorter.n_seq, 0xABABABABu);
    EXPECT_EQ(vkllm_session_get_info(nullptr, &info), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_get_info(s2, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
}

TEST_F(SessionControl, ModelMetadataIsReadWithoutTheFile) {
    TinyModelSpec spec;
    std::string path = temp_path("metadata");
    write_tiny_model(path, spec);
    vkllm_gguf *file = nullptr;
    ASSERT_EQ(vkllm_gguf_open(path.c_str(), &file), VKLLM_OK);
    vkllm_model *m = load(path);
    ASSERT_NE(m, nullptr);
    std::remove(path.c_str());  // from here on the file is gone
    const vkllm_gguf *meta = vkllm_model_get_gguf(m);
    ASSERT_NE(meta, nullptr);
    EXPECT_EQ(vkllm_model_get_gguf(nullptr), nullptr);

    // Every key reads back as the file has it.
    vkllm_model_summary a, b;
    a.struct_size = b.struct_size = sizeof a;
    ASSERT_EQ(vkllm_gguf_get_summary(file, &a), VKLLM_OK);
    ASSERT_EQ(vkllm_gguf_get_summary(meta, &b), VKLLM_OK);
    ASSERT_EQ(a.n_keys, b.n_keys);
    EXPECT_GT(a.n_keys, 5u);
    EXPECT_STREQ(a.architecture, b.architecture);
    EXPECT_EQ(b.n_tensors, 0u) << "the copy holds the keys only";
    EXPECT_EQ(a.context_length, b.context_length);
    auto text = [](const vkllm_gguf *g, const char *key) {
        size_t len = 0;
        vkllm_gguf_get_text(g, key, nullptr, 0, &len);
        std::string s(len + 1, '\0');
        EXPECT_EQ(vkllm_gguf_get_text(g, key, s.data(), s.size(), &len), VKLLM_OK) << key;
        s.resize(len);
        return s;
    };
    for (size_t i = 0; i < a.n_keys; ++i) {
        vkllm_gguf_key ka, kb;
        ka.struct_size = kb.struct_size = sizeof ka;
        ASSERT_EQ(vkllm_gguf_get_key(file, i, &ka), VKLLM_OK);
        ASSERT_EQ(vkllm_gguf_get_key(meta, i, &kb), VKLLM_OK);
        EXPECT_STREQ(ka.name, kb.name);
        EXPECT_EQ(ka.type, kb.type);
        EXPECT_EQ(ka.count, kb.count);
        EXPECT_EQ(text(file, ka.name), text(meta, kb.name)) << ka.name;
    }
    int64_t ctx = 0;
    ASSERT_EQ(vkllm_gguf_get_int(meta, "llama.context_length", &ctx), VKLLM_OK);
    EXPECT_EQ(ctx, int64_t(spec.n_ctx));
    vkllm_tensor_info ti;
    ti.struct_size = sizeof ti;
    EXPECT_EQ(vkllm_gguf_get_tensor(meta, 0, &ti), VKLLM_ERR_NOT_FOUND);
    EXPECT_EQ(vkllm_gguf_get_int(meta, "no.such.key", &ctx), VKLLM_ERR_NOT_FOUND);
    vkllm_gguf_destroy(file);
}

// Batched generation: the same seeds give the same tokens, and each sequence's tokens are those
// vkllm_session_generate gives it alone with the same seed. That holds because a batched decode
// step computes each row exactly as a step of one sequence does (checked first, bit for bit, on
// this device).
TEST_F(SessionControl, BatchedSamplingReproducesPerSeedAndMatchesEachSequenceAlone) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "batch", false);
    ASSERT_NE(m, nullptr);
    const uint32_t n_vocab = vocab(m);
    const size_t kSeqs = 3, kMax = 12;
    std::vector<std::vector<int32_t>> prompts = {some_tokens(5, spec.n_vocab, 11),
                                                 some_tokens(9, spec.n_vocab, 12),
                                                 some_tokens(3, spec.n_vocab, 13)};

    // A decode of three sequences against three decodes of one.
    vkllm_session *s = session(m, 128, VKLLM_KV_F16, 0, 3);
    std::vector<float> together(kSeqs * n_vocab), alone(kSeqs * n_vocab);
    for (uint32_t q = 0; q < kSeqs; ++q)
        ASSERT_EQ(vkllm_session_eval(s, q, prompts[q].data(), prompts[q].size(), nullptr),
                  VKLLM_OK);
    uint32_t seqs[] = {0, 1, 2};
    int32_t next[] = {5, 6, 7};
    ASSERT_EQ(vkllm_session_decode(s, seqs, next, kSeqs, together.data()), VKLLM_OK);
    for (uint32_t q = 0; q < kSeqs; ++q) {
        ASSERT_EQ(vkllm_session_truncate(s, q, uint32_t(prompts[q].size())), VKLLM_OK);
        ASSERT_EQ(vkllm_session_decode(s, &q, &next[q], 1, alone.data() + q * n_vocab), VKLLM_OK);
    }
    double worst = 0;
    for (size_t i = 0; i < together.size(); ++i)
        worst = std::max(worst, double(std::fabs(together[i] - alone[i])));
    std::printf("batched decode rows vs single decodes: max |difference| %.3g\n", worst);
    ASSERT_EQ(worst, 0.0) << "batched rows differ from single steps on this device";
    ASSERT_EQ(vkllm_session_reset(s, -1), VKLLM_OK);

    // Sequence 1 greedy (no sampler), 0 and 2 sampled with seeds 100 and 102.
    auto run_batch = [&](std::vector<std::vector<int32_t>> &out) {
        vkllm_sampling_params p0 = sampling(100), p2 = sampling(102);
        vkllm_sampler *a = nullptr, *c = nullptr;
        EXPECT_EQ(vkllm_sampler_create(vkllm_model_get_tokenizer(m), &p0, &a), VKLLM_OK);
        EXPECT_EQ(vkllm_sampler_create(vkllm_model_get_tokenizer(m), &p2, &c), VKLLM_OK);
        out.assign(kSeqs, std::vector<int32_t>(kMax, -1));
        vkllm_sampler *samplers[] = {a, nullptr, c};
        std::vector<vkllm_batch_sequence> b(kSeqs);
        for (uint32_t q = 0; q < kSeqs; ++q) {
            b[q] = vkllm_batch_sequence{};
            b[q].struct_size = sizeof b[q];
            b[q].seq = 2 - q;  // any sequence of the session, in any order
            b[q].prompt = prompts[q].data();
            b[q].n_prompt = prompts[q].size();
            b[q].sampler = samplers[q];
            b[q].tokens = out[q].data();
        }
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = uint32_t(kMax);
        gp.ignore_eog = 1;
        EXPECT_EQ(vkllm_session_reset(s, -1), VKLLM_OK);
        EXPECT_EQ(vkllm_session_generate_batch(s, b.data(), kSeqs, &gp), VKLLM_OK)
            << vkllm_last_error();
        for (uint32_t q = 0; q < kSeqs; ++q) {
            EXPECT_EQ(b[q].n_generated, kMax);
            EXPECT_EQ(b[q].stop_reason, VKLLM_STOP_MAX_TOKENS);
            uint32_t pos = 0;
            EXPECT_EQ(vkllm_session_get_position(s, 2 - q, &pos), VKLLM_OK);
            EXPECT_EQ(pos, prompts[q].size() + kMax - 1);
        }
        vkllm_sampler_destroy(a);
        vkllm_sampler_destroy(c);
    };
    std::vector<std::vector<int32_t>> first, second;
    run_batch(first);
    run_batch(second);
    EXPECT_EQ(first, second) << "the same seeds gave other tokens";
    EXPECT_NE(first[0], first[2]);

    vkllm_session *single = session(m, 128);
    for (uint32_t q = 0; q < kSeqs; ++q) {
        std::vector<int32_t> got;
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = uint32_t(kMax);
        gp.ignore_eog = 1;
        gp.user_data = &got;
        gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
            if (token >= 0) static_cast<std::vector<int32_t> *>(user)->push_back(token);
            return 0;
        };
        vkllm_sampling_params p = q == 1 ? sampling(0, 0.0f) : sampling(100 + q);
        ASSERT_EQ(vkllm_session_reset(single, 0), VKLLM_OK);
        ASSERT_EQ(
            vkllm_session_generate(single, prompts[q].data(), prompts[q].size(), &p, &gp, nullptr),
            VKLLM_OK);
        EXPECT_EQ(got, first[q]) << "sequence " << q << " alone";
    }
}

// The same on a real model (SmolLM2: heads of 64, the kernels real models take). Here a batched
// step's rows are not bit-identical to single steps on lavapipe (measured: up to 6.8e-4 on
// SmolLM2's logits: float rounding differs between a 3-row and a 1-row step),
// so they are checked within a tolerance; the sampled tokens still equal each sequence's alone
// (no draw lands that close to a boundary in these 8 tokens; deterministic on one device).
TEST_F(SessionControl, BatchedSamplingOnSmolLM2MatchesEachSequenceAlone) {
    std::string path = cached_model("SmolLM2-135M-Instruct.Q4_1.gguf");
    if (path.empty()) GTEST_SKIP() << "SmolLM2-135M-Instruct.Q4_1.gguf is not cached; skipped";
    vkllm_model *m = load(path);
    ASSERT_NE(m, nullptr);
    const uint32_t n_vocab = vocab(m);
    const vkllm_tokenizer *tok = vkllm_model_get_tokenizer(m);
    const char *texts[] = {"The capital of France is", "Once upon a time, a fox",
                           "def fibonacci(n):"};
    const size_t kSeqs = 3, kMax = 8;
    std::vector<std::vector<int32_t>> prompts;
    for (const char *t : texts) {
        std::vector<int32_t> ids(64);
        size_t n = 0;
        ASSERT_EQ(vkllm_tokenizer_encode(tok, t, std::strlen(t), 0, ids.data(), ids.size(), &n),
                  VKLLM_OK);
        ids.resize(n);
        prompts.push_back(ids);
    }
    vkllm_session *s = session(m, 128, VKLLM_KV_F16, 0, 3);
    std::vector<float> together(kSeqs * n_vocab), alone(kSeqs * n_vocab);
    for (uint32_t q = 0; q < kSeqs; ++q)
        ASSERT_EQ(vkllm_session_eval(s, q, prompts[q].data(), prompts[q].size(), nullptr),
                  VKLLM_OK);
    uint32_t seqs[] = {0, 1, 2};
    int32_t next[] = {279, 314, 198};
    ASSERT_EQ(vkllm_session_decode(s, seqs, next, kSeqs, together.data()), VKLLM_OK);
    for (uint32_t q = 0; q < kSeqs; ++q) {
        ASSERT_EQ(vkllm_session_truncate(s, q, uint32_t(prompts[q].size())), VKLLM_OK);
        ASSERT_EQ(vkllm_session_decode(s, &q, &next[q], 1, alone.data() + q * n_vocab), VKLLM_OK);
    }
    double worst = 0;
    for (size_t i = 0; i < together.size(); ++i)
        worst = std::max(worst, double(std::fabs(together[i] - alone[i])));
    double largest = 0;
    for (float v : alone)
        largest = std::max(largest, double(std::fabs(v)));
    std::printf(
        "SmolLM2: batched decode rows vs single decodes: max |difference| %.3g, max "
        "|logit| %.3g\n",
        worst, largest);
    EXPECT_LE(worst, 1e-4 * std::max(1.0, largest)) << "batched rows far from single steps";

    ASSERT_EQ(vkllm_session_reset(s, -1), VKLLM_OK);
    std::vector<std::vector<int32_t>> out(kSeqs, std::vector<int32_t>(kMax));
    std::vector<vkllm_sampler *> samplers(kSeqs);
    std::vector<vkllm_batch_sequence> b(kSeqs);
    for (uint32_t q = 0; q < kSeqs; ++q) {
        vkllm_sampling_params p = sampling(700 + q, 0.9f);
        ASSERT_EQ(vkllm_sampler_create(tok, &p, &samplers[q]), VKLLM_OK);
        b[q] = vkllm_batch_sequence{};
        b[q].struct_size = sizeof b[q];
        b[q].seq = q;
        b[q].prompt = prompts[q].data();
        b[q].n_prompt = prompts[q].size();
        b[q].sampler = samplers[q];
        b[q].tokens = out[q].data();
    }
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = uint32_t(kMax);
    gp.ignore_eog = 1;
    ASSERT_EQ(vkllm_session_generate_batch(s, b.data(), kSeqs, &gp), VKLLM_OK)
        << vkllm_last_error();
    for (vkllm_sampler *x : samplers)
        vkllm_sampler_destroy(x);
    vkllm_session *single = session(m, 128);
    for (uint32_t q = 0; q < kSeqs; ++q) {
        std::vector<int32_t> got;
        gp.user_data = &got;
        gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
            if (token >= 0) static_cast<std::vector<int32_t> *>(user)->push_back(token);
            return 0;
        };
        vkllm_sampling_params p = sampling(700 + q, 0.9f);
        ASSERT_EQ(vkllm_session_reset(single, 0), VKLLM_OK);
        ASSERT_EQ(
            vkllm_session_generate(single, prompts[q].data(), prompts[q].size(), &p, &gp, nullptr),
            VKLLM_OK);
        EXPECT_EQ(got, out[q]) << "sequence " << q << " alone";
    }
}

TEST_F(SessionControl, BatchedGenerationRefusesBadSequencesBeforeRunningAndStopsOnCancel) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "batch_errors", false);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 128, VKLLM_KV_F16, 0, 2);
    std::vector<int32_t> prompt = some_tokens(4, spec.n_vocab, 3);
    std::vector<int32_t> out0(8), out1(8);
    auto batch = [&] {
        std::vector<vkllm_batch_sequence> b(2);
        for (uint32_t q = 0; q < 2; ++q) {
            b[q] = vkllm_batch_sequence{};
            b[q].struct_size = sizeof b[q];
            b[q].seq = q;
            b[q].prompt = prompt.data();
            b[q].n_prompt = prompt.size();
            b[q].tokens = q ? out1.data() : out0.data();
        }
        return b;
    };
    auto refused = [&](std::vector<vkllm_batch_sequence> b, const char *what) {
        EXPECT_EQ(vkllm_session_generate_batch(s, b.data(), b.size(), nullptr),
                  VKLLM_ERR_INVALID_ARGUMENT)
            << what;
        for (uint32_t q = 0; q < 2; ++q) {
            uint32_t pos = 1;
            EXPECT_EQ(vkllm_session_get_position(s, q, &pos), VKLLM_OK);
            EXPECT_EQ(pos, 0u) << what << ": something ran";
        }
    };
    auto b = batch();
    b[1].seq = 0;
    refused(b, "a sequence twice");
    b = batch();
    b[1].seq = 2;
    refused(b, "a sequence the session lacks");
    b = batch();
    b[0].n_prompt = 0;
    refused(b, "an empty prompt");
    b = batch();
    b[1].tokens = nullptr;
    refused(b, "no room for tokens");
    b = batch();
    b[1].struct_size = 8;
    refused(b, "a stride that changes");
    vkllm_sampling_params p = sampling(1);
    vkllm_sampler *shared = nullptr;
    ASSERT_EQ(vkllm_sampler_create(nullptr, &p, &shared), VKLLM_OK);
    b = batch();
    b[0].sampler = b[1].sampler = shared;
    refused(b, "a shared sampler");
    vkllm_sampler_destroy(shared);
    std::vector<int32_t> outside = {1, 1 << 20};
    b = batch();
    b[1].prompt = outside.data();
    b[1].n_prompt = outside.size();
    refused(b, "an id outside the vocabulary");
    // Room for the prompt and max_tokens - 1 generated tokens, in every sequence, or nothing runs.
    vkllm_generate_params room;
    vkllm_generate_params_init(&room);
    room.max_tokens = 128 - 4 + 2;
    std::vector<int32_t> big0(room.max_tokens), big1(room.max_tokens);
    b = batch();
    b[0].tokens = big0.data();
    b[1].tokens = big1.data();
    EXPECT_EQ(vkllm_session_generate_batch(s, b.data(), 2, &room), VKLLM_ERR_CONTEXT_FULL);
    for (uint32_t q = 0; q < 2; ++q) {
        uint32_t pos = 1;
        EXPECT_EQ(vkllm_session_get_position(s, q, &pos), VKLLM_OK);
        EXPECT_EQ(pos, 0u) << "a context too small: something ran";
    }
    b = batch();
    EXPECT_EQ(vkllm_session_generate_batch(s, b.data(), 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_generate_batch(nullptr, b.data(), 2, nullptr),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_generate_batch(s, nullptr, 2, nullptr), VKLLM_ERR_INVALID_ARGUMENT);

    // Defaults: greedy, up to 256 tokens unless an end token comes; here 8 at most.
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 8;
    b = batch();
    ASSERT_EQ(vkllm_session_generate_batch(s, b.data(), 2, &gp), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(b[0].n_generated, b[1].n_generated) << "two greedy runs of one prompt";
    EXPECT_TRUE(std::equal(out0.begin(), out0.begin() + long(b[0].n_generated), out1.begin()));

    // Cancelled from another thread: the tokens so far come back.
    ASSERT_EQ(vkllm_session_reset(s, -1), VKLLM_OK);
    gp.max_tokens = 100;
    gp.ignore_eog = 1;
    std::vector<int32_t> long0(100), long1(100);
    b = batch();
    b[0].tokens = long0.data();
    b[1].tokens = long1.data();
    std::atomic<bool> running{true};
    std::thread t([&] {
        while (running.load())
            vkllm_session_cancel(s);
    });
    vkllm_status st = vkllm_session_generate_batch(s, b.data(), 2, &gp);
    running.store(false);
    t.join();
    EXPECT_EQ(st, VKLLM_ERR_CANCELLED);
    EXPECT_EQ(b[0].stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_LT(b[0].n_generated, 100u);
}
