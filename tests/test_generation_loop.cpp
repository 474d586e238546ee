// The generation loop and the session's bookkeeping on tiny random models: cancellation,
// the recordings a session makes and replays, the profile, greedy generation's stops and
// options (max_tokens 0, end tokens ignored), load progress and abort.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "tiny_model_fixture.h"

using Generation = TinyModelTest;

TEST_F(Generation, CancellingAPrefillLeavesAUsableSession) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "cancel");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(30, spec.n_vocab, 13);
    vkllm_session *s = session(m, 64, VKLLM_KV_F16, 0, 1, 8);
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    int calls = 0;
    gp.user_data = &calls;
    gp.on_prefill = [](void *user, size_t done, size_t total) -> int32_t {
        ++*static_cast<int *>(user);
        return done >= 8 && done < total ? 1 : 0;
    };
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    EXPECT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), nullptr, &gp, &r),
              VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(calls, 1);
    uint32_t pos = 0;
    ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
    EXPECT_EQ(pos, 8u) << "the first chunk stays in the cache";
    // The rest of the prompt gives the logits an uninterrupted prefill gives.
    std::vector<float> resumed(spec.n_vocab), whole(spec.n_vocab);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data() + 8, 22, resumed.data()), VKLLM_OK);
    vkllm_session *other = session(m, 64, VKLLM_KV_F16, 0, 1, 8);
    ASSERT_EQ(vkllm_session_eval(other, 0, prompt.data(), 30, whole.data()), VKLLM_OK);
    EXPECT_LE(max_abs_diff(resumed, whole), 1e-5);
}

// The ablation flag records every step anew (what the founding write-up measured against) and
// changes no result.
TEST_F(Generation, RecordEveryStepAblationRecordsEachStepAndGivesTheSameLogits) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "record_every_step", false);
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(12, spec.n_vocab, 4);
    vkllm_session *replayed = session(m, 64, VKLLM_KV_F32);
    vkllm_session *recorded = session(m, 64, VKLLM_KV_F32, VKLLM_SESSION_RECORD_EVERY_STEP);
    std::vector<std::vector<float>> a = decode_each(replayed, tokens, spec.n_vocab);
    std::vector<std::vector<float>> b = decode_each(recorded, tokens, spec.n_vocab);
    for (size_t i = 0; i < tokens.size(); ++i)
        EXPECT_EQ(a[i], b[i]) << "step " << i;
    vkllm_session_stats sa, sb;
    sa.struct_size = sb.struct_size = sizeof sa;
    ASSERT_EQ(vkllm_session_get_stats(replayed, &sa), VKLLM_OK);
    ASSERT_EQ(vkllm_session_get_stats(recorded, &sb), VKLLM_OK);
    EXPECT_LE(sa.command_buffers_recorded, 2u);
    EXPECT_GE(sb.command_buffers_recorded, uint64_t(tokens.size()));
}

// A profiled session times every dispatch: each kernel the step runs is listed, the dispatch
// counts grow by the same amount every decode step, and no logit changes.
TEST_F(Generation, ProfileCountsEveryKernelsDispatchesAndChangesNoLogit) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "profile", false);
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> tokens = some_tokens(6, spec.n_vocab, 9);
    vkllm_session *plain = session(m, 64, VKLLM_KV_F32);
    vkllm_session *profiled = session(m, 64, VKLLM_KV_F32, VKLLM_SESSION_PROFILE);
    size_t count = 0;
    EXPECT_EQ(vkllm_session_get_profile(plain, nullptr, 0, &count), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_get_profile(profiled, nullptr, 1, &count), VKLLM_ERR_INVALID_ARGUMENT);
    ASSERT_EQ(vkllm_session_get_profile(profiled, nullptr, 0, &count), VKLLM_OK);
    EXPECT_EQ(count, 0u) << "nothing has run yet";

    std::vector<std::vector<float>> a = decode_each(plain, tokens, spec.n_vocab);
    auto dispatches = [&](std::map<std::string, uint64_t> &out) {
        size_t n = 0;
        ASSERT_EQ(vkllm_session_get_profile(profiled, nullptr, 0, &n), VKLLM_OK);
        std::vector<vkllm_kernel_time> k(n);
        ASSERT_EQ(vkllm_session_get_profile(profiled, k.data(), k.size(), &n), VKLLM_OK);
        out.clear();
        for (size_t i = 0; i < n; ++i) {
            EXPECT_GE(k[i].ms, 0.0) << k[i].kernel;
            if (i > 0) {
                EXPECT_LE(k[i].ms, k[i - 1].ms) << "most time first";
            }
            out[k[i].kernel] = k[i].dispatches;
        }
    };
    std::vector<std::map<std::string, uint64_t>> after(tokens.size());
    std::vector<float> l(spec.n_vocab);
    uint32_t seq = 0;
    for (size_t i = 0; i < tokens.size(); ++i) {
        ASSERT_EQ(vkllm_session_decode(profiled, &seq, &tokens[i], 1, l.data()), VKLLM_OK);
        EXPECT_EQ(l, a[i]) << "step " << i;
        dispatches(after[i]);
    }
    // Per layer one matvec for q, k and v together (their stacked matrix), which also stores
    // K and V into the cache and rotates Q and K (no kv_store, no RoPE of their own), one each
    // for the o and down projections, one for gate and up together with the SwiGLU fused in;
    // and the output head. Nothing element-wise is left (the residual adds are the o and down
    // projections' epilogues) and no RMS norm (each is applied by the projections that read
    // it).
    EXPECT_EQ(after[0]["matvec"] + after[0]["matvec_subgroup"] + after[0]["matvec_texel"] +
                  after[0]["matvec_texel_subgroup"],
              3u * spec.n_layer + 1);
    EXPECT_EQ(after[0]["matvec_texel_kv"] + after[0]["matvec_texel_kv_subgroup"], spec.n_layer);
    EXPECT_EQ(after[0].count("eltwise"), 0u);
    EXPECT_EQ(after[0].count("rms_norm"), 0u);
    EXPECT_GT(after[0]["get_rows"], 0u);
    EXPECT_EQ(after[0].count("rope"), 0u);
    EXPECT_EQ(after[0].count("kv_store"), 0u);
    EXPECT_EQ(after[0]["attention"] + after[0]["attention_small_head"], spec.n_layer);
    for (size_t i = 1; i < tokens.size(); ++i)
        for (const auto &[kernel, n] : after[0])
            EXPECT_EQ(after[i][kernel], (i + 1) * n) << kernel << " after step " << i;
}

TEST_F(Generation, CommandBuffersAreRecordedOnceNotPerToken) {
    TinyModelSpec spec;
    spec.n_ctx = 512;
    vkllm_model *m = tiny(spec, "recording");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 256);
    std::vector<int32_t> prompt = some_tokens(10, spec.n_vocab, 17);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    uint32_t seq = 0;
    int32_t token = prompt.back();
    vkllm_session_stats st;
    st.struct_size = sizeof st;
    uint64_t after_first = 0;
    std::vector<float> l(spec.n_vocab);
    for (int i = 0; i < 200; ++i) {
        ASSERT_EQ(vkllm_session_decode(s, &seq, &token, 1, l.data()), VKLLM_OK);
        token = argmax_of(l);
        if (i == 0) {
            ASSERT_EQ(vkllm_session_get_stats(s, &st), VKLLM_OK);
            after_first = st.command_buffers_recorded;
        }
    }
    ASSERT_EQ(vkllm_session_get_stats(s, &st), VKLLM_OK);
    EXPECT_EQ(st.command_buffers_recorded, after_first) << "the decode step is replayed";
    EXPECT_LE(st.command_buffers_recorded, 2u);
    EXPECT_EQ(st.tokens_decoded, 200u);
    EXPECT_GE(st.submits, 201u);
    vkllm_session *second = session(m, 64);
    ASSERT_EQ(vkllm_session_eval(second, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    uint64_t rope_table_builds = 0;
    ASSERT_EQ(vkllm_model_get_rope_table_builds(m, &rope_table_builds), VKLLM_OK);
    EXPECT_EQ(rope_table_builds, 1u) << "the RoPE table is computed once per model";
}

TEST_F(Generation, GreedyGenerateFollowsTheArgmaxAndStopsAsAsked) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "generate");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(6, spec.n_vocab, 19);
    std::vector<int32_t> want = ref::greedy(*reference_, prompt, 12);
    struct Seen {
        std::vector<int32_t> ids;
        std::string text;
    } seen;
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 12;
    gp.user_data = &seen;
    gp.on_token = [](void *user, int32_t token, const char *text, size_t len) -> int32_t {
        auto *s = static_cast<Seen *>(user);
        if (token >= 0) s->ids.push_back(token);
        s->text.append(text, len);
        return 0;
    };
    vkllm_session *s = session(m, 64, VKLLM_KV_F32);
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    ASSERT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK)
        << vkllm_last_error();
    // The tiny vocabulary's end token (2) may end it early: compare what was generated.
    ASSERT_GE(want.size(), seen.ids.size());
    std::vector<int32_t> head(want.begin(), want.begin() + long(seen.ids.size()));
    EXPECT_EQ(seen.ids, head);
    EXPECT_EQ(r.n_generated, seen.ids.size());
    EXPECT_TRUE(r.stop_reason == VKLLM_STOP_MAX_TOKENS ||
                r.stop_reason == VKLLM_STOP_END_OF_GENERATION);

    // A stop string ends generation before it: the text up to it, nothing of it.
    ASSERT_GE(seen.ids.size(), 4u) << "the tiny model ended too early for this check";
    char piece[64];
    size_t len = 0;
    ASSERT_EQ(vkllm_tokenizer_get_piece(vkllm_model_get_tokenizer(m), seen.ids[2], 0, piece,
                                        sizeof piece, &len),
              VKLLM_OK);
    std::string stop(piece, len);
    const char *stops[] = {stop.c_str()};
    Seen stopped;
    gp.user_data = &stopped;
    gp.stop = stops;
    gp.n_stop = 1;
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    ASSERT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_STRING);
    EXPECT_EQ(stopped.text, seen.text.substr(0, seen.text.find(stop)));
    gp.stop = nullptr;
    gp.n_stop = 0;

    // Sampling with a seed reproduces; another seed differs (over 16 tokens at temperature 2).
    auto sample = [&](uint64_t seed) {
        Seen out;
        vkllm_sampling_params p;
        vkllm_sampling_params_init(&p);
        p.temperature = 2.0f;
        p.top_k = 0, p.top_p = 1.0f, p.min_p = 0.0f;
        p.seed = seed;
        gp.user_data = &out;
        gp.max_tokens = 16;
        EXPECT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
        EXPECT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &p, &gp, nullptr),
                  VKLLM_OK);
        return out.ids;
    };
    EXPECT_EQ(sample(42), sample(42));
    EXPECT_NE(sample(42), sample(43));

    // A callback that says stop cancels, with the result filled in.
    gp.on_token = [](void *, int32_t, const char *, size_t) -> int32_t { return 1; };
    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    EXPECT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r),
              VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(r.n_generated, 1u);
}

// max_tokens 0 prefills the prompt and nothing else: no token sampled or streamed, the position
// moved on by the prompt. A prompt prefilled so, in two parts, then answered, gives the tokens
// one generate of the whole prompt gives.
TEST_F(Generation, GenerateWithZeroMaxTokensOnlyPrefills) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "prefill_only", false);
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(9, spec.n_vocab, 31);
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    std::vector<int32_t> calls;  // every on_token call's token (-1: held text at the end)
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.user_data = &calls;
    gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
        static_cast<std::vector<int32_t> *>(user)->push_back(token);
        return 0;
    };
    vkllm_session *s = session(m, 64, VKLLM_KV_F32);
    vkllm_generate_result r;
    r.struct_size = sizeof r;

    gp.max_tokens = 4;
    ASSERT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK)
        << vkllm_last_error();
    std::vector<int32_t> want = calls;
    ASSERT_FALSE(want.empty());

    ASSERT_EQ(vkllm_session_reset(s, 0), VKLLM_OK);
    calls.clear();
    gp.max_tokens = 0;
    const size_t parts[][2] = {{0, 4}, {4, 7}};  // [first, last) of the prompt
    for (const auto &part : parts) {
        ASSERT_EQ(
            vkllm_session_generate(s, prompt.data() + part[0], part[1] - part[0], &sp, &gp, &r),
            VKLLM_OK)
            << vkllm_last_error();
        EXPECT_TRUE(calls.empty()) << "a token was streamed";
        EXPECT_EQ(r.n_prompt, part[1] - part[0]);
        EXPECT_EQ(r.n_generated, 0u);
        EXPECT_EQ(r.stop_reason, VKLLM_STOP_MAX_TOKENS);
        uint32_t pos = 0;
        ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
        EXPECT_EQ(pos, part[1]) << "the previous position plus the prompt";
    }

    gp.max_tokens = 4;
    ASSERT_EQ(vkllm_session_generate(s, prompt.data() + 7, prompt.size() - 7, &sp, &gp, &r),
              VKLLM_OK)
        << vkllm_last_error();
    EXPECT_EQ(calls, want);
}

// With ignore_eog an end token is streamed and decoded like any other: the tokens are the
// reference's greedy continuation straight through it, one step per submission or chained.
TEST_F(Generation, IgnoringEndTokensGeneratesThroughThemAsTheReferenceDoes) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "ignore_eog");
    ASSERT_NE(m, nullptr);
    const int32_t kEos = 2;  // the tiny vocabulary's end token
    const size_t kTokens = 16;
    // A prompt whose greedy continuation reaches the end token after a few tokens, found among
    // a few hundred.
    std::vector<int32_t> prompt, want;
    size_t end_at = kTokens;
    for (uint32_t seed = 1; seed < 400 && (end_at < 2 || end_at + 4 >= kTokens); ++seed) {
        prompt = some_tokens(4, spec.n_vocab, seed);
        want = ref::greedy(*reference_, prompt, int(kTokens));
        end_at = size_t(std::find(want.begin(), want.end(), kEos) - want.begin());
    }
    ASSERT_TRUE(end_at >= 2 && end_at + 4 < kTokens)
        << "no prompt of the tiny model reaches its end token early";
    int32_t is_eog = 0;
    ASSERT_EQ(vkllm_tokenizer_is_end_of_generation(vkllm_model_get_tokenizer(m), kEos, &is_eog),
              VKLLM_OK);
    ASSERT_EQ(is_eog, 1);

    vkllm_session *s = session(m, 64, VKLLM_KV_F32);
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    auto run = [&](int32_t ignore_eog, uint32_t steps_per_submit, vkllm_generate_result &r) {
        std::vector<int32_t> ids;
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = uint32_t(kTokens);
        gp.ignore_eog = ignore_eog;
        gp.steps_per_submit = steps_per_submit;
        gp.user_data = &ids;
        gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
            if (token >= 0) static_cast<std::vector<int32_t> *>(user)->push_back(token);
            return 0;
        };
        r.struct_size = sizeof r;
        EXPECT_EQ(vkllm_session_reset(s, -1), VKLLM_OK);
        EXPECT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &r), VKLLM_OK)
            << vkllm_last_error();
        return ids;
    };
    vkllm_generate_result r;
    std::vector<int32_t> head(want.begin(), want.begin() + long(end_at));
    EXPECT_EQ(run(0, 1, r), head) << "by default the end token ends it, unstreamed";
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_END_OF_GENERATION);
    for (uint32_t steps : {1u, 4u}) {
        EXPECT_EQ(run(1, steps, r), want) << steps << " steps per submission";
        EXPECT_EQ(r.stop_reason, VKLLM_STOP_MAX_TOKENS);
        EXPECT_EQ(r.n_generated, kTokens);
        uint32_t pos = 0;
        EXPECT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
        EXPECT_EQ(pos, prompt.size() + kTokens - 1) << "the end token was decoded too";
    }
}

TEST_F(Generation, LoadReportsProgressAndCanBeAbortedWithoutLeaking) {
    TinyModelSpec spec;
    std::string path = temp_path("progress");
    write_tiny_model(path, spec);
    vkllm_runtime_stats before;
    before.struct_size = sizeof before;
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &before), VKLLM_OK);
    std::vector<float> seen;
    vkllm_model_params mp;
    vkllm_model_params_init(&mp);
    mp.progress_user_data = &seen;
    mp.progress = [](void *user, float p) -> int32_t {
        static_cast<std::vector<float> *>(user)->push_back(p);
        return 0;
    };
    vkllm_model *m = nullptr;
    ASSERT_EQ(vkllm_model_load(rt_, path.c_str(), &mp, &m), VKLLM_OK);
    vkllm_model_destroy(m);
    ASSERT_GT(seen.size(), 5u);
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_FLOAT_EQ(seen.back(), 1.0f);
    mp.progress = [](void *, float p) -> int32_t { return p > 0.5f; };
    m = reinterpret_cast<vkllm_model *>(0x1);
    EXPECT_EQ(vkllm_model_load(rt_, path.c_str(), &mp, &m), VKLLM_ERR_CANCELLED);
    EXPECT_EQ(m, reinterpret_cast<vkllm_model *>(0x1));
    vkllm_runtime_stats after;
    after.struct_size = sizeof after;
    ASSERT_EQ(vkllm_runtime_get_stats(rt_, &after), VKLLM_OK);
    EXPECT_EQ(after.device_memory_allocated, before.device_memory_allocated);
    std::remove(path.c_str());
}
