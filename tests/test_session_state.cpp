// Saving, restoring and forking sequences (vkllm_session_state_*, vkllm_session_fork): a
// restored or forked sequence continues with logits bit-identical (memcmp) to a sequence that
// computed the same positions itself, on tiny models of several architectures (rings that
// wrapped, a streaming window, a Q8_0 cache), GPT-OSS's sliding-window rings and SmolLM2; bytes
// that are not an intact state of this model and session are refused and change nothing.
#include <cstring>
#include <fstream>

#include "model_cache.h"
#include "reference/tiny_archs.h"
#include "tiny_model_fixture.h"

namespace {

struct Config {
    uint32_t n_ctx = 64, flags = 0, n_seq = 1, n_batch = 8, n_sink = 4;
    vkllm_kv_type kv = VKLLM_KV_F16;
};

uint32_t position(vkllm_session *s, uint32_t seq) {
    uint32_t pos = 0;
    EXPECT_EQ(vkllm_session_get_position(s, seq, &pos), VKLLM_OK) << vkllm_last_error();
    return pos;
}

std::vector<uint8_t> save(vkllm_session *s, uint32_t seq) {
    size_t size = 0;
    EXPECT_EQ(vkllm_session_get_state_size(s, seq, &size), VKLLM_OK) << vkllm_last_error();
    std::vector<uint8_t> bytes(size);
    size_t length = 0;
    EXPECT_EQ(vkllm_session_state_save(s, seq, bytes.data(), bytes.size(), &length), VKLLM_OK)
        << vkllm_last_error();
    EXPECT_EQ(length, size);
    return bytes;
}

std::vector<int32_t> tokens_of(vkllm_session *s, uint32_t seq) {
    size_t n = 0;
    vkllm_session_get_tokens(s, seq, nullptr, 0, &n);
    std::vector<int32_t> ids(n);
    EXPECT_EQ(vkllm_session_get_tokens(s, seq, ids.data(), ids.size(), &n), VKLLM_OK)
        << vkllm_last_error();
    return ids;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
}

// The spec of the tiny architecture `name` (reference/tiny_archs.cpp).
TinyModelSpec tiny_arch(const std::string &name) {
    for (const TinyArch &a : tiny_archs())
        if (a.name == name) return a.spec;
    ADD_FAILURE() << "no tiny " << name;
    return {};
}

}  // namespace

class SessionState : public TinyModelTest {
  protected:
    vkllm_session *open(vkllm_model *m, const Config &c) {
        return session(m, c.n_ctx, c.kv, c.flags, c.n_seq, c.n_batch, c.n_sink);
    }

    // The logits of a prefill of `more` then of `steps` decode steps (each feeding the argmax
    // back), one after another in a vector.
    std::vector<float> go_on(vkllm_session *s, uint32_t seq, const std::vector<int32_t> &more,
                             int steps, uint32_t n_vocab) {
        std::vector<float> all(n_vocab);
        EXPECT_EQ(vkllm_session_eval(s, seq, more.data(), more.size(), all.data()), VKLLM_OK)
            << vkllm_last_error();
        for (int i = 0; i < steps; ++i) {
            int32_t next = argmax_of(std::vector<float>(all.end() - n_vocab, all.end()));
            std::vector<float> l(n_vocab);
            EXPECT_EQ(vkllm_session_decode(s, &seq, &next, 1, l.data()), VKLLM_OK)
                << vkllm_last_error();
            all.insert(all.end(), l.begin(), l.end());
        }
        return all;
    }

    // Prefix, then continuation, in a session that never saved; against the same prefix saved,
    // restored into the same sequence after other work, into another session and into another
    // sequence: every one bit-identical.
    void check_round_trip(vkllm_model *m, const Config &c, size_t n_prefix) {
        uint32_t n_vocab = vocab(m);
        std::vector<int32_t> prefix = some_tokens(n_prefix, n_vocab, 7);
        std::vector<int32_t> more = some_tokens(11, n_vocab, 8);
        vkllm_session *never = open(m, c);
        ASSERT_EQ(vkllm_session_eval(never, 0, prefix.data(), prefix.size(), nullptr), VKLLM_OK)
            << vkllm_last_error();
        std::vector<float> want = go_on(never, 0, more, 5, n_vocab);

        vkllm_session *saver = open(m, c);
        ASSERT_EQ(vkllm_session_eval(saver, 0, prefix.data(), prefix.size(), nullptr), VKLLM_OK);
        std::vector<uint8_t> state = save(saver, 0);
        EXPECT_EQ(tokens_of(saver, 0), prefix);
        // The same sequence, after other work replaced its content.
        std::vector<int32_t> other = some_tokens(9, n_vocab, 9);
        ASSERT_EQ(vkllm_session_reset(saver, 0), VKLLM_OK);
        ASSERT_EQ(vkllm_session_eval(saver, 0, other.data(), other.size(), nullptr), VKLLM_OK);
        ASSERT_EQ(vkllm_session_state_load(saver, 0, state.data(), state.size()), VKLLM_OK)
            << vkllm_last_error();
        EXPECT_EQ(position(saver, 0), n_prefix);
        EXPECT_EQ(tokens_of(saver, 0), prefix);
        EXPECT_TRUE(same_bits(go_on(saver, 0, more, 5, n_vocab), want)) << "same sequence";
        // Another session.
        vkllm_session *other_session = open(m, c);
        ASSERT_EQ(vkllm_session_state_load(other_session, 0, state.data(), state.size()), VKLLM_OK)
            << vkllm_last_error();
        EXPECT_TRUE(same_bits(go_on(other_session, 0, more, 5, n_vocab), want))
            << "another session";
        // Another sequence of a two-sequence session, against that session computing it there.
        Config two = c;
        two.n_seq = 2;
        vkllm_session *pair_never = open(m, two), *pair = open(m, two);
        ASSERT_EQ(vkllm_session_eval(pair_never, 1, prefix.data(), prefix.size(), nullptr),
                  VKLLM_OK);
        ASSERT_EQ(vkllm_session_state_load(pair, 1, state.data(), state.size()), VKLLM_OK)
            << vkllm_last_error();
        EXPECT_EQ(position(pair, 0), 0u);
        EXPECT_TRUE(
            same_bits(go_on(pair, 1, more, 5, n_vocab), go_on(pair_never, 1, more, 5, n_vocab)))
            << "another sequence";
        // A state saved by a sequence that was itself restored is the same bytes.
        EXPECT_EQ(save(other_session, 0).size(), save(pair, 1).size());
    }
};

TEST_F(SessionState, LlamaRestoresBitIdentically) {
    vkllm_model *m = tiny(tiny_arch("llama"), "state_llama", false);
    ASSERT_NE(m, nullptr);
    check_round_trip(m, Config{}, 21);
}

// Gemma 3's local layers keep a ring of window + n_batch - 1 = 15 slots: 40 positions wrap it.
TEST_F(SessionState, Gemma3WithWrappedLocalRingsRestoresBitIdentically) {
    vkllm_model *m = tiny(tiny_arch("gemma3"), "state_gemma3", false);
    ASSERT_NE(m, nullptr);
    check_round_trip(m, Config{}, 40);
}

TEST_F(SessionState, Gemma3WithAQ8_0CacheRestoresBitIdentically) {
    vkllm_model *m = tiny(tiny_arch("gemma3"), "state_gemma3_q8", false);
    ASSERT_NE(m, nullptr);
    Config c;
    c.kv = VKLLM_KV_Q8_0;
    check_round_trip(m, c, 30);
}

// A streaming window of 24 positions with 4 sinks, wrapped by 40 positions.
TEST_F(SessionState, WrappedStreamingWindowRestoresBitIdentically) {
    vkllm_model *m = tiny(tiny_arch("qwen2"), "state_streaming", false);
    ASSERT_NE(m, nullptr);
    Config c;
    c.n_ctx = 24;
    c.flags = VKLLM_SESSION_STREAMING;
    check_round_trip(m, c, 40);
}

TEST_F(SessionState, MixtureOfExpertsRestoresBitIdentically) {
    vkllm_model *m = tiny(tiny_arch("qwen3moe"), "state_moe", false);
    ASSERT_NE(m, nullptr);
    check_round_trip(m, Config{}, 17);
}

// GPT-OSS's sliding-window layers (window 16, chunks of 8: rings of 23 slots) wrapped twice.
TEST_F(SessionState, GptOssWithWrappedSlidingWindowsRestoresBitIdentically) {
    std::string dir = test_data_dir();
    vkllm_model *m = load(dir + "/models/tiny-gptoss-f32.gguf");
    ASSERT_NE(m, nullptr);
    Config c;
    c.n_ctx = 96;
    check_round_trip(m, c, 50);
    // The saved rings keep 23 positions: a session whose rings hold 31 (chunks of 16) would
    // need older ones and is refused; one holding 19 (chunks of 4) takes the most recent.
    vkllm_session *s = open(m, c);
    std::vector<int32_t> prefix = some_tokens(50, vocab(m), 7);
    ASSERT_EQ(vkllm_session_eval(s, 0, prefix.data(), prefix.size(), nullptr), VKLLM_OK);
    std::vector<uint8_t> state = save(s, 0);
    Config wider = c, narrower = c;
    wider.n_batch = 16;
    narrower.n_batch = 4;
    vkllm_session *w = open(m, wider), *n = open(m, narrower);
    EXPECT_EQ(vkllm_session_state_load(w, 0, state.data(), state.size()),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("kept fewer"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(position(w, 0), 0u);
    EXPECT_EQ(vkllm_session_state_load(n, 0, state.data(), state.size()), VKLLM_OK)
        << vkllm_last_error();
    EXPECT_EQ(position(n, 0), 50u);
}

TEST_F(SessionState, SmolLM2RestoresBitIdentically) {
    std::string path = cached_model("SmolLM2-135M-Instruct.Q4_1.gguf");
    vkllm_model *m = load(path);
    ASSERT_NE(m, nullptr);
    Config c;
    c.n_ctx = 256;
    c.n_batch = 32;
    check_round_trip(m, c, 100);
}

// Four samples of one prompt: prefilled once and forked three times, or prefilled four times;
// then each sequence decodes its own tokens, all four in one batched step.
TEST_F(SessionState, ForkedSequencesEqualIndependentPrefills) {
    vkllm_model *m = tiny(tiny_arch("llama"), "fork", false);
    ASSERT_NE(m, nullptr);
    uint32_t n_vocab = vocab(m);
    Config c;
    c.n_seq = 4;
    vkllm_session *forked = open(m, c), *prefilled = open(m, c);
    std::vector<int32_t> prompt = some_tokens(29, n_vocab, 3);
    ASSERT_EQ(vkllm_session_eval(forked, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    // dst's earlier content is replaced
    ASSERT_EQ(vkllm_session_eval(forked, 2, prompt.data(), 5, nullptr), VKLLM_OK);
    for (uint32_t s = 1; s < 4; ++s)
        ASSERT_EQ(vkllm_session_fork(forked, 0, s, 29), VKLLM_OK) << vkllm_last_error();
    for (uint32_t s = 0; s < 4; ++s) {
        ASSERT_EQ(vkllm_session_eval(prefilled, s, prompt.data(), prompt.size(), nullptr),
                  VKLLM_OK);
        EXPECT_EQ(position(forked, s), 29u);
        EXPECT_EQ(tokens_of(forked, s), prompt);
    }
    uint32_t seqs[4] = {0, 1, 2, 3};
    for (int step = 0; step < 6; ++step) {
        std::vector<int32_t> next = some_tokens(4, n_vocab, 100 + step);
        std::vector<float> a(4 * n_vocab), b(4 * n_vocab);
        ASSERT_EQ(vkllm_session_decode(forked, seqs, next.data(), 4, a.data()), VKLLM_OK);
        ASSERT_EQ(vkllm_session_decode(prefilled, seqs, next.data(), 4, b.data()), VKLLM_OK);
        EXPECT_TRUE(same_bits(a, b)) << "step " << step;
    }
}

// A fork of the first 16 positions (two whole chunks) continues as a prefill of just those.
TEST_F(SessionState, ForkOfAPrefixEqualsAPrefillOfThePrefix) {
    vkllm_model *m = tiny(tiny_arch("qwen3"), "fork_prefix", false);
    ASSERT_NE(m, nullptr);
    uint32_t n_vocab = vocab(m);
    Config c;
    c.n_seq = 2;
    vkllm_session *forked = open(m, c), *prefilled = open(m, c);
    std::vector<int32_t> prompt = some_tokens(20, n_vocab, 4);
    ASSERT_EQ(vkllm_session_eval(forked, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    ASSERT_EQ(vkllm_session_fork(forked, 0, 1, 16), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(position(forked, 1), 16u);
    EXPECT_EQ(position(forked, 0), 20u);
    ASSERT_EQ(vkllm_session_eval(prefilled, 1, prompt.data(), 16, nullptr), VKLLM_OK);
    std::vector<int32_t> more = some_tokens(7, n_vocab, 5);
    EXPECT_TRUE(
        same_bits(go_on(forked, 1, more, 4, n_vocab), go_on(prefilled, 1, more, 4, n_vocab)));
}

// Once a streaming ring wrapped, early positions are gone: a fork of them is refused and the
// target keeps what it had; the whole sequence still forks.
TEST_F(SessionState, ForkRefusesPositionsAWrappedRingLost) {
    vkllm_model *m = tiny(tiny_arch("llama"), "fork_wrapped", false);
    ASSERT_NE(m, nullptr);
    Config c;
    c.n_ctx = 16;
    c.n_seq = 2;
    c.flags = VKLLM_SESSION_STREAMING;
    vkllm_session *s = open(m, c);
    std::vector<int32_t> prompt = some_tokens(30, vocab(m), 6);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    ASSERT_EQ(vkllm_session_eval(s, 1, prompt.data(), 3, nullptr), VKLLM_OK);
    EXPECT_EQ(vkllm_session_fork(s, 0, 1, 20), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("overwritten"), std::string::npos);
    EXPECT_EQ(position(s, 1), 3u);
    EXPECT_EQ(vkllm_session_fork(s, 0, 1, 31), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_fork(s, 0, 0, 30), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_fork(s, 0, 2, 30), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_fork(nullptr, 0, 1, 30), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_fork(s, 0, 1, 30), VKLLM_OK) << vkllm_last_error();
    EXPECT_EQ(position(s, 1), 30u);
}

// Every refused load leaves the target as it was: its position, its tokens, and the logits of
// its next token.
TEST_F(SessionState, RefusedStatesChangeNothing) {
    TinyModelSpec spec = tiny_arch("llama");
    vkllm_model *m = tiny(spec, "hostile", false);
    TinyModelSpec reseeded = spec;
    reseeded.seed += 100;
    vkllm_model *same_shape = tiny(reseeded, "hostile_reseeded", false);
    vkllm_model *qwen = tiny(tiny_arch("qwen2"), "hostile_qwen", false);
    ASSERT_TRUE(m && same_shape && qwen);
    uint32_t n_vocab = vocab(m);
    Config c;
    vkllm_session *source = open(m, c);
    std::vector<int32_t> prompt = some_tokens(20, n_vocab, 10);
    ASSERT_EQ(vkllm_session_eval(source, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    std::vector<uint8_t> state = save(source, 0);

    vkllm_session *target = open(m, c), *untouched = open(m, c);
    std::vector<int32_t> own = some_tokens(6, n_vocab, 11);
    for (vkllm_session *s : {target, untouched})
        ASSERT_EQ(vkllm_session_eval(s, 0, own.data(), own.size(), nullptr), VKLLM_OK);
    auto refused = [&](const std::vector<uint8_t> &bytes, vkllm_status want, const char *what) {
        vkllm_status got = vkllm_session_state_load(target, 0, bytes.data(), bytes.size());
        EXPECT_EQ(got, want) << what;
        EXPECT_NE(std::string(vkllm_last_error()), "") << what;
        ASSERT_EQ(position(target, 0), own.size()) << what;
    };
    for (size_t n = 0; n < state.size(); ++n)
        refused(std::vector<uint8_t>(state.begin(), state.begin() + n), VKLLM_ERR_FORMAT,
                "truncated");
    std::vector<uint8_t> longer = state;
    longer.push_back(0);
    refused(longer, VKLLM_ERR_FORMAT, "a byte too many");
    for (size_t i = 0; i < state.size(); ++i) {
        std::vector<uint8_t> flipped = state;
        flipped[i] ^= 0x10;
        vkllm_status got = vkllm_session_state_load(target, 0, flipped.data(), flipped.size());
        EXPECT_TRUE(got == VKLLM_ERR_FORMAT || got == VKLLM_ERR_INVALID_ARGUMENT)
            << "byte " << i << ": " << got;
        ASSERT_EQ(position(target, 0), own.size()) << "byte " << i;
    }
    // Valid states that do not fit this target.
    Config f32_cache;
    f32_cache.kv = VKLLM_KV_F32;
    vkllm_session *f32 = open(m, f32_cache);
    vkllm_session *small = open(m, Config{16});
    vkllm_session *reseeded_session = open(same_shape, c), *qwen_session = open(qwen, c);
    for (vkllm_session *s : {f32, small, reseeded_session, qwen_session})
        ASSERT_EQ(vkllm_session_eval(s, 0, own.data(), own.size(), nullptr), VKLLM_OK);
    auto mismatch = [&](vkllm_session *s, const char *says) {
        EXPECT_EQ(vkllm_session_state_load(s, 0, state.data(), state.size()),
                  VKLLM_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::string(vkllm_last_error()).find(says), std::string::npos)
            << vkllm_last_error();
        EXPECT_EQ(position(s, 0), own.size());
    };
    mismatch(f32, "F16 KV cache");
    mismatch(small, "context holds 16");
    mismatch(reseeded_session, "fingerprint");
    mismatch(qwen_session, "another model");
    // NULL and out-of-range arguments.
    EXPECT_EQ(vkllm_session_state_load(nullptr, 0, state.data(), state.size()),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_state_load(target, 0, nullptr, state.size()),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_state_load(target, 1, state.data(), state.size()),
              VKLLM_ERR_INVALID_ARGUMENT);
    size_t size = 0, length = 0;
    EXPECT_EQ(vkllm_session_get_state_size(nullptr, 0, &size), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_get_state_size(target, 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_get_state_size(target, 3, &size), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_state_save(target, 0, nullptr, 10, &length),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_state_save(target, 0, nullptr, 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_state_save(target, 0, nullptr, 0, &length), VKLLM_ERR_BUFFER_TOO_SMALL);
    ASSERT_EQ(vkllm_session_get_state_size(target, 0, &size), VKLLM_OK);
    EXPECT_EQ(length, size);
    EXPECT_EQ(vkllm_session_state_save_file(target, 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_state_load_file(target, 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_get_tokens(target, 0, nullptr, 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_session_get_tokens(target, 0, nullptr, 0, &length), VKLLM_ERR_BUFFER_TOO_SMALL);
    EXPECT_EQ(length, own.size());

    // After all that, the target's next logits are those of a session that saw none of it.
    std::vector<int32_t> next{5};
    EXPECT_TRUE(
        same_bits(decode_each(target, next, n_vocab)[0], decode_each(untouched, next, n_vocab)[0]));
    EXPECT_EQ(tokens_of(target, 0), tokens_of(untouched, 0));
}

// Through files: a round trip, then a missing file, an unwritable path and a truncated file.
TEST_F(SessionState, FilesRoundTripAndRefuseTruncation) {
    vkllm_model *m = tiny(tiny_arch("llama"), "state_file", false);
    ASSERT_NE(m, nullptr);
    uint32_t n_vocab = vocab(m);
    Config c;
    vkllm_session *a = open(m, c), *b = open(m, c);
    std::vector<int32_t> prompt = some_tokens(12, n_vocab, 12);
    ASSERT_EQ(vkllm_session_eval(a, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    std::string path = temp_path("state_file");
    ASSERT_EQ(vkllm_session_state_save_file(a, 0, path.c_str()), VKLLM_OK) << vkllm_last_error();
    ASSERT_EQ(vkllm_session_state_load_file(b, 0, path.c_str()), VKLLM_OK) << vkllm_last_error();
    std::vector<int32_t> more{9, 10};
    EXPECT_TRUE(same_bits(go_on(a, 0, more, 2, n_vocab), go_on(b, 0, more, 2, n_vocab)));

    EXPECT_EQ(vkllm_session_state_load_file(b, 0, (path + ".missing").c_str()), VKLLM_ERR_IO);
    EXPECT_EQ(vkllm_session_state_save_file(a, 0, "/nonexistent-dir/state"), VKLLM_ERR_IO);
    std::vector<uint8_t> bytes = save(a, 0);
    uint32_t before = position(b, 0);
    for (size_t n : {size_t(0), size_t(10), size_t(200), bytes.size() - 1}) {
        std::ofstream(path, std::ios::binary | std::ios::trunc)
            .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(n));
        EXPECT_EQ(vkllm_session_state_load_file(b, 0, path.c_str()), VKLLM_ERR_FORMAT) << n;
        EXPECT_EQ(position(b, 0), before);
    }
}

// The ids in a sequence follow eval, chained greedy decoding and truncation.
TEST_F(SessionState, TokensFollowTheCache) {
    vkllm_model *m = tiny(tiny_arch("llama"), "state_tokens", false);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = open(m, Config{});
    std::vector<int32_t> prompt = some_tokens(5, vocab(m), 13);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), nullptr), VKLLM_OK);
    uint32_t seq = 0;
    int32_t first = 7, out[4];
    ASSERT_EQ(vkllm_session_decode_greedy(s, &seq, &first, 1, 4, out), VKLLM_OK);
    std::vector<int32_t> want = prompt;
    want.push_back(first);
    want.insert(want.end(), out, out + 3);  // the last choice is not fed yet
    EXPECT_EQ(tokens_of(s, 0), want);
    ASSERT_EQ(vkllm_session_truncate(s, 0, 3), VKLLM_OK);
    want.resize(3);
    EXPECT_EQ(tokens_of(s, 0), want);
}
