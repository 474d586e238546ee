// Greedy decode steps chained in one submission (vkllm_session_decode_greedy and
// vkllm_session_generate's steps_per_submit): the same tokens and the same cache as one step at a
// time, rewinds that leave the cache as step-by-step decoding would, and the truncation rule that
// keeps a rewind from losing keys a ring overwrote.
#include <string>
#include <vector>

#include "tiny_model_fixture.h"

namespace {

using ChainedDecode = TinyModelTest;
using ChainedDecodeOnSharedModels = SharedModelTest;

uint32_t position(vkllm_session *s, uint32_t seq) {
    uint32_t pos = 0;
    EXPECT_EQ(vkllm_session_get_position(s, seq, &pos), VKLLM_OK);
    return pos;
}

struct Generated {
    std::vector<int32_t> ids;
    std::string text;
    vkllm_generate_result result{};
    vkllm_status status = VKLLM_OK;
    uint32_t position = 0;  // of the sequence afterwards
};

// Generates with `steps_per_submit`, greedily unless `sampling` says otherwise; the callback
// cancels after `cancel_after` tokens (0: never).
Generated generate(vkllm_session *s, const std::vector<int32_t> &prompt, uint32_t max_tokens,
                   uint32_t steps_per_submit, const char *stop = nullptr, size_t cancel_after = 0,
                   const vkllm_sampling_params *sampling = nullptr) {
    struct Ctx {
        Generated *g;
        size_t cancel_after;
    };
    Generated g;
    Ctx ctx{&g, cancel_after};
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 0;
    if (sampling) sp = *sampling;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = max_tokens;
    gp.steps_per_submit = steps_per_submit;
    gp.user_data = &ctx;
    gp.on_token = [](void *user, int32_t token, const char *text, size_t len) -> int32_t {
        auto *c = static_cast<Ctx *>(user);
        if (token >= 0) c->g->ids.push_back(token);
        c->g->text.append(text, len);
        return c->cancel_after && c->g->ids.size() >= c->cancel_after;
    };
    const char *stops[] = {stop};
    if (stop) {
        gp.stop = stops;
        gp.n_stop = 1;
    }
    g.result.struct_size = sizeof g.result;
    g.status = vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &g.result);
    g.position = position(s, 0);
    return g;
}

}  // namespace

// Three sequences of different lengths, 7 steps in one submission: each step's token is the
// argmax step-by-step decoding picks (and the CPU reference's greedy continuation), and the
// cache afterwards gives the same logits as the step-by-step one.
TEST_F(ChainedDecode, ChainOfBatchedSequencesEqualsStepByStepArgmax) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "chain_batched");
    ASSERT_NE(m, nullptr);
    const uint32_t n = 3, steps = 7;
    vkllm_session *chained = session(m, 64, VKLLM_KV_F32, 0, n);
    vkllm_session *stepwise = session(m, 64, VKLLM_KV_F32, 0, n);
    std::vector<std::vector<int32_t>> prompts;
    uint32_t seqs[n] = {2, 0, 1};  // not in order: out[] follows seqs[]
    int32_t first[n];
    for (uint32_t q = 0; q < n; ++q) {
        prompts.push_back(some_tokens(4 + 5 * q, spec.n_vocab, 31 + q));
        std::vector<float> l(spec.n_vocab);
        for (vkllm_session *s : {chained, stepwise})
            ASSERT_EQ(vkllm_session_eval(s, q, prompts[q].data(), prompts[q].size(), l.data()),
                      VKLLM_OK);
    }
    // The first token of each: the reference's greedy pick after its prompt.
    for (uint32_t i = 0; i < n; ++i)
        first[i] = ref::greedy(*reference_, prompts[seqs[i]], 1).at(0);
    std::vector<int32_t> out(steps * n, -1);
    ASSERT_EQ(vkllm_session_decode_greedy(chained, seqs, first, n, steps, out.data()), VKLLM_OK)
        << vkllm_last_error();

    std::vector<int32_t> toks(first, first + n);
    std::vector<float> logits(n * spec.n_vocab);
    for (uint32_t step = 0; step < steps; ++step) {
        ASSERT_EQ(vkllm_session_decode(stepwise, seqs, toks.data(), n, logits.data()), VKLLM_OK);
        for (uint32_t i = 0; i < n; ++i) {
            std::vector<float> row(logits.begin() + i * spec.n_vocab,
                                   logits.begin() + (i + 1) * spec.n_vocab);
            toks[i] = argmax_of(row);
            EXPECT_EQ(out[step * n + i], toks[i]) << "step " << step << ", sequence " << seqs[i];
        }
    }
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t q = seqs[i];
        EXPECT_EQ(position(chained, q), prompts[q].size() + steps);
        std::vector<int32_t> want = ref::greedy(*reference_, prompts[q], steps + 1);
        for (uint32_t step = 0; step < steps; ++step)
            EXPECT_EQ(out[step * n + i], want[step + 1]) << "reference, sequence " << q;
    }
    // The caches hold the same keys: one more step gives the same logits.
    std::vector<float> a(n * spec.n_vocab), b(n * spec.n_vocab);
    std::vector<int32_t> last(out.end() - n, out.end());
    ASSERT_EQ(vkllm_session_decode(chained, seqs, last.data(), n, a.data()), VKLLM_OK);
    ASSERT_EQ(vkllm_session_decode(stepwise, seqs, last.data(), n, b.data()), VKLLM_OK);
    EXPECT_LE(max_abs_diff(a, b), 1e-5);

    // A second chain replays the recording from the new positions.
    vkllm_session_stats st;
    st.struct_size = sizeof st;
    ASSERT_EQ(vkllm_session_get_stats(chained, &st), VKLLM_OK);
    uint64_t recorded = st.command_buffers_recorded, submits = st.submits;
    ASSERT_EQ(vkllm_session_decode_greedy(chained, seqs, last.data(), n, steps, out.data()),
              VKLLM_OK);
    ASSERT_EQ(vkllm_session_get_stats(chained, &st), VKLLM_OK);
    EXPECT_EQ(st.command_buffers_recorded, recorded);
    EXPECT_EQ(st.submits, submits + 1);
}

TEST_F(ChainedDecode, BadArgumentsAndFullContextsAreRefusedAndChangeNothing) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "chain_refused");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 16, VKLLM_KV_F16, 0, 2);
    std::vector<int32_t> prompt = some_tokens(10, spec.n_vocab, 3);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    uint32_t seq = 0, both[2] = {0, 0};
    int32_t tok = 5, toks[2] = {5, 6}, bad = int32_t(spec.n_vocab);
    std::vector<int32_t> out(2 * (VKLLM_MAX_CHAINED_STEPS + 1));
    EXPECT_EQ(vkllm_session_decode_greedy(s, &seq, &tok, 1, 0, out.data()),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(
        vkllm_session_decode_greedy(s, &seq, &tok, 1, VKLLM_MAX_CHAINED_STEPS + 1, out.data()),
        VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_decode_greedy(s, &seq, &tok, 1, 7, out.data()),
              VKLLM_ERR_CONTEXT_FULL);  // 10 + 7 > 16
    EXPECT_NE(std::string(vkllm_last_error()).find("context"), std::string::npos);
    EXPECT_EQ(vkllm_session_decode_greedy(s, &seq, &bad, 1, 2, out.data()),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_decode_greedy(s, both, toks, 2, 2, out.data()),
              VKLLM_ERR_INVALID_ARGUMENT);  // the same sequence twice
    EXPECT_EQ(vkllm_session_decode_greedy(s, &seq, &tok, 3, 2, out.data()),
              VKLLM_ERR_INVALID_ARGUMENT);  // more sequences than the session has
    EXPECT_EQ(vkllm_session_decode_greedy(s, &seq, &tok, 1, 2, nullptr),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_decode_greedy(nullptr, &seq, &tok, 1, 2, out.data()),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(position(s, 0), 10u);
    EXPECT_EQ(position(s, 1), 0u);
    EXPECT_EQ(vkllm_session_decode_greedy(s, &seq, &tok, 1, 6, out.data()), VKLLM_OK);
    EXPECT_EQ(position(s, 0), 16u);
}

// Whatever the steps per submission, generation gives the same tokens, ends for the same
// reason and leaves the same positions in the cache, whether it ends at the token limit, a
// stop string or a cancelling callback, inside a chain or at its end; and the cache left
// behind continues the conversation the same way.
TEST_F(ChainedDecode, GenerateIsTheSameWhateverTheStepsPerSubmit) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "chain_generate");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(6, spec.n_vocab, 19);
    std::vector<int32_t> follow_up = some_tokens(3, spec.n_vocab, 23);
    vkllm_session *one = session(m, 64, VKLLM_KV_F32);
    Generated base = generate(one, prompt, 20, 1);
    ASSERT_EQ(base.status, VKLLM_OK) << vkllm_last_error();
    ASSERT_GE(base.ids.size(), 12u) << "the tiny model ended too early for this test";
    char piece[64];
    size_t len = 0;
    ASSERT_EQ(vkllm_tokenizer_get_piece(vkllm_model_get_tokenizer(m), base.ids[9], 0, piece,
                                        sizeof piece, &len),
              VKLLM_OK);
    std::string stop(piece, len);

    vkllm_session *a = session(m, 64, VKLLM_KV_F32);
    vkllm_session *b = session(m, 64, VKLLM_KV_F32);
    for (uint32_t steps : {3u, 8u, 64u}) {
        SCOPED_TRACE("steps_per_submit " + std::to_string(steps));
        struct Case {
            uint32_t max_tokens;
            const char *stop;
            size_t cancel_after;
        };
        for (Case c : {Case{20, nullptr, 0}, Case{11, nullptr, 0}, Case{20, stop.c_str(), 0},
                       Case{20, nullptr, 5}, Case{20, nullptr, 8}}) {
            SCOPED_TRACE("max " + std::to_string(c.max_tokens) + (c.stop ? ", stop" : "") +
                         ", cancel after " + std::to_string(c.cancel_after));
            ASSERT_EQ(vkllm_session_reset(a, -1), VKLLM_OK);
            ASSERT_EQ(vkllm_session_reset(b, -1), VKLLM_OK);
            Generated want = generate(a, prompt, c.max_tokens, 1, c.stop, c.cancel_after);
            Generated got = generate(b, prompt, c.max_tokens, steps, c.stop, c.cancel_after);
            EXPECT_EQ(got.status, want.status);
            EXPECT_EQ(got.ids, want.ids);
            EXPECT_EQ(got.text, want.text);
            EXPECT_EQ(got.result.stop_reason, want.result.stop_reason);
            EXPECT_EQ(got.result.n_generated, want.result.n_generated);
            EXPECT_EQ(got.position, want.position);
            // The conversation goes on from the same cache.
            Generated want2 = generate(a, follow_up, 6, 1);
            Generated got2 = generate(b, follow_up, 6, steps);
            EXPECT_EQ(got2.ids, want2.ids);
            EXPECT_EQ(got2.position, want2.position);
        }
    }
}

// Sampled generation: one step per submission draws on the host, chained steps on the device
// (sample.comp), both from the same chain and the same stream of numbers: the same seed gives
// the same tokens, stop reason and cache with one step per submission or several (8 and 3: the
// device's draws do not depend on the chain's length), in fewer submissions when chained;
// another seed other tokens.
TEST_F(ChainedDecode, SampledGenerateIsTheSameWhateverTheStepsPerSubmit) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "chain_sampled");
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(6, spec.n_vocab, 29);
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = 1.5f;
    sp.top_k = 30;
    sp.top_p = 0.97f;
    sp.repeat_penalty = 1.3f;
    sp.presence_penalty = 0.2f;
    sp.repeat_last_n = 16;
    sp.seed = 7;
    vkllm_session *a = session(m, 64, VKLLM_KV_F32);
    vkllm_session *b = session(m, 64, VKLLM_KV_F32);
    Generated want = generate(a, prompt, 24, 1, nullptr, 0, &sp);
    ASSERT_EQ(want.status, VKLLM_OK) << vkllm_last_error();
    ASSERT_GE(want.ids.size(), 12u) << "the tiny model ended too early for this test";
    vkllm_session_stats one{}, chained{};
    one.struct_size = chained.struct_size = sizeof one;
    ASSERT_EQ(vkllm_session_get_stats(a, &one), VKLLM_OK);
    for (uint32_t steps : {8u, 3u}) {
        SCOPED_TRACE("steps_per_submit " + std::to_string(steps));
        ASSERT_EQ(vkllm_session_reset(b, -1), VKLLM_OK);
        ASSERT_EQ(vkllm_session_get_stats(b, &chained), VKLLM_OK);
        uint64_t submits = chained.submits;
        Generated got = generate(b, prompt, 24, steps, nullptr, 0, &sp);
        EXPECT_EQ(got.status, want.status);
        EXPECT_EQ(got.ids, want.ids);
        EXPECT_EQ(got.result.stop_reason, want.result.stop_reason);
        EXPECT_EQ(got.position, want.position);
        ASSERT_EQ(vkllm_session_get_stats(b, &chained), VKLLM_OK);
        EXPECT_LT(chained.submits - submits, one.submits) << "the steps were not chained";
    }
    ASSERT_EQ(vkllm_session_reset(b, -1), VKLLM_OK);
    sp.seed = 8;
    EXPECT_NE(generate(b, prompt, 24, 8, nullptr, 0, &sp).ids, want.ids) << "another seed";
}

// GPT-OSS's sliding-window layers (a ring of window + n_batch - 1 slots) and a streaming
// session's ring wrap while chained; generation still equals one step at a time.
TEST_F(ChainedDecodeOnSharedModels, WrappingRingsChainTheSameTokens) {
    vkllm_model *m = load(model_path("tiny-gptoss-f32"));
    ASSERT_NE(m, nullptr);
    std::vector<int32_t> prompt = some_tokens(5, vocab(m), 41);
    for (bool streaming : {false, true}) {
        SCOPED_TRACE(streaming ? "streaming" : "sliding window");
        uint32_t flags = streaming ? VKLLM_SESSION_STREAMING : 0;
        uint32_t n_ctx = streaming ? 24 : 96;
        vkllm_session *a = session(m, n_ctx, VKLLM_KV_F16, flags, 1, 8);
        vkllm_session *b = session(m, n_ctx, VKLLM_KV_F16, flags, 1, 8);
        Generated want = generate(a, prompt, 50, 1);
        Generated got = generate(b, prompt, 50, 8);
        ASSERT_EQ(want.status, VKLLM_OK) << vkllm_last_error();
        EXPECT_EQ(got.ids, want.ids);
        EXPECT_EQ(got.position, want.position);
        EXPECT_GT(want.position, 16u + 8u);  // past the window's ring
    }
}

// Once a streaming ring has wrapped, dropping a position overwrote the oldest key the one
// before it still sees: only the last position (or everything) can go. A truncation that is
// allowed leaves exactly the keys a run without the dropped token has.
TEST_F(ChainedDecode, TruncatingAWrappedRingRefusesToLoseKeys) {
    TinyModelSpec spec;
    vkllm_model *m = tiny(spec, "chain_truncate");
    ASSERT_NE(m, nullptr);
    const uint32_t capacity = 12, sinks = 4;
    uint32_t flags = VKLLM_SESSION_STREAMING;
    vkllm_session *s = session(m, capacity, VKLLM_KV_F32, flags, 1, 0, sinks);
    vkllm_session *fresh = session(m, capacity, VKLLM_KV_F32, flags, 1, 0, sinks);
    std::vector<int32_t> tokens = some_tokens(20, spec.n_vocab, 13);
    // One token per step: what a token sees depends on its position only (a prefill chunk's
    // tokens would see the window of the chunk's last one).
    auto feed = [&](vkllm_session *into, size_t from, size_t to, std::vector<float> *logits) {
        uint32_t seq = 0;
        for (size_t i = from; i < to; ++i)
            ASSERT_EQ(
                vkllm_session_decode(into, &seq, &tokens[i], 1, logits ? logits->data() : nullptr),
                VKLLM_OK);
    };
    feed(s, 0, 11, nullptr);
    EXPECT_EQ(vkllm_session_truncate(s, 0, 5), VKLLM_OK);  // not wrapped yet: anything goes
    feed(s, 5, 20, nullptr);
    ASSERT_EQ(position(s, 0), 20u);
    EXPECT_EQ(vkllm_session_truncate(s, 0, 18), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("overwritten"), std::string::npos);
    EXPECT_EQ(position(s, 0), 20u);
    ASSERT_EQ(vkllm_session_truncate(s, 0, 19), VKLLM_OK);
    feed(fresh, 0, 19, nullptr);
    std::vector<float> a(spec.n_vocab), b(spec.n_vocab);
    tokens[19] = 7;  // another last token than the one dropped
    feed(s, 19, 20, &a);
    feed(fresh, 19, 20, &b);
    EXPECT_LE(max_abs_diff(a, b), 1e-5);
    EXPECT_EQ(vkllm_session_truncate(s, 0, 0), VKLLM_OK);
}

// GPT-OSS's sliding-window rings (16-position window, chunks of 8: 23 slots) once wrapped
// allow a rewind of at most n_batch (8) positions; one more would drop a key the window
// still needs. The allowed rewind leaves exactly the keys of a run that never had them.
TEST_F(ChainedDecodeOnSharedModels, SlidingWindowRingsRewindAtMostABatch) {
    vkllm_model *m = load(model_path("tiny-gptoss-f32"));
    ASSERT_NE(m, nullptr);
    uint32_t n_vocab = vocab(m);
    std::vector<int32_t> tokens = some_tokens(50, n_vocab, 43);
    vkllm_session *s = session(m, 96, VKLLM_KV_F16, 0, 1, 8);
    vkllm_session *fresh = session(m, 96, VKLLM_KV_F16, 0, 1, 8);
    decode_each(s, tokens, n_vocab);  // positions 0..49: the 23-slot rings wrapped twice
    EXPECT_EQ(vkllm_session_truncate(s, 0, 41), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(position(s, 0), 50u);
    ASSERT_EQ(vkllm_session_truncate(s, 0, 42), VKLLM_OK);
    std::vector<int32_t> head(tokens.begin(), tokens.begin() + 42);
    decode_each(fresh, head, n_vocab);
    std::vector<int32_t> next{5};
    std::vector<std::vector<float>> a = decode_each(s, next, n_vocab),
                                    b = decode_each(fresh, next, n_vocab);
    EXPECT_LE(max_abs_diff(a[0], b[0]), 1e-5);
}

// A rewind leaves the dropped positions in their slots, where they overwrote older keys: after
// 50 -> 42, the slots of 19..26 hold 42..49, so a second rewind to 34 (whose next token sees
// 19..34) is refused, as one straight from 50 to 34 is; a fork copies whole rings, and with them
// what they lost. After new tokens overwrite the slots again, the rule counts from the new
// high-water mark.
TEST_F(ChainedDecodeOnSharedModels, ASecondRewindCountsFromTheHighestPositionWritten) {
    vkllm_model *m = load(model_path("tiny-gptoss-f32"));
    ASSERT_NE(m, nullptr);
    uint32_t n_vocab = vocab(m);
    std::vector<int32_t> tokens = some_tokens(50, n_vocab, 43);
    vkllm_session *s = session(m, 96, VKLLM_KV_F16, 0, 2, 8);
    decode_each(s, tokens, n_vocab);
    ASSERT_EQ(vkllm_session_truncate(s, 0, 42), VKLLM_OK);
    EXPECT_EQ(vkllm_session_fork(s, 0, 1, 42), VKLLM_OK);
    for (uint32_t seq : {0u, 1u}) {
        EXPECT_EQ(vkllm_session_truncate(s, seq, 34), VKLLM_ERR_INVALID_ARGUMENT) << seq;
        EXPECT_EQ(position(s, seq), 42u);
        EXPECT_EQ(vkllm_session_truncate(s, seq, 43), VKLLM_ERR_INVALID_ARGUMENT)
            << "past the position: nothing to keep";
    }
    EXPECT_EQ(vkllm_session_truncate(s, 0, 0), VKLLM_OK);  // everything can go
    decode_each(s, std::vector<int32_t>(tokens.begin(), tokens.begin() + 40), n_vocab);
    EXPECT_EQ(vkllm_session_truncate(s, 0, 32), VKLLM_OK) << "emptied: counts from 40 again";
}
