// A model whose embedding has more rows than its tokenizer has tokens (a padded vocabulary, as
// Qwen's files have, and as `vkllm make-model` writes by default) loads and runs: the ids past
// the tokens have logits but no text, so no path chooses one (greedy on the device and on the
// host, sampling, chained and batched greedy steps, streaming sessions), and every call that
// takes an id refuses one it cannot serve, with a message, instead of using it as an index.
#include <climits>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "format/gguf.h"
#include "tiny_model_fixture.h"
#include "tokenizer/tokenizer.h"

namespace {

// 64 embedding rows for 16 tokens; the padded rows' logits outweigh the tokens' (tiny_model.h).
const uint32_t kRows = 64, kTokens = 16;

struct Generation {
    std::vector<int32_t> ids;
    vkllm_status status = VKLLM_OK;
    std::string error;
};

struct Sampling {
    float temperature = 0;
    float repeat_penalty = 1;
    uint64_t seed = 0;
    uint32_t steps_per_submit = 1;
};

// Generates `max_tokens` tokens (end tokens do not stop it) and collects their ids.
Generation generate(vkllm_session *s, const std::vector<int32_t> &prompt, uint32_t max_tokens,
                    const Sampling &how, uint32_t seq = 0) {
    vkllm_sampling_params sp;
    vkllm_sampling_params_init(&sp);
    sp.temperature = how.temperature;
    sp.repeat_penalty = how.repeat_penalty;
    sp.seed = how.seed;
    // Every candidate kept: the padded rows would be among them if they were candidates.
    sp.top_k = 0, sp.top_p = 1, sp.min_p = 0;
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.seq = seq;
    gp.max_tokens = max_tokens;
    gp.ignore_eog = 1;
    gp.steps_per_submit = how.steps_per_submit;
    Generation run;
    gp.user_data = &run.ids;
    gp.on_token = [](void *user, int32_t token, const char *, size_t) -> int32_t {
        if (token >= 0) static_cast<std::vector<int32_t> *>(user)->push_back(token);
        return 0;
    };
    run.status = vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, nullptr);
    if (run.status != VKLLM_OK) run.error = vkllm_last_error();
    return run;
}

// The first argmax of the first `n` entries of row `row` of [rows][kRows] logits.
int32_t argmax_first(const std::vector<float> &logits, size_t row, uint32_t n) {
    auto first = logits.begin() + long(row * kRows);
    return int32_t(std::max_element(first, first + n) - first);
}

uint32_t position(vkllm_session *s, uint32_t seq = 0) {
    uint32_t pos = 0;
    EXPECT_EQ(vkllm_session_get_position(s, seq, &pos), VKLLM_OK) << vkllm_last_error();
    return pos;
}

class PaddedVocabulary : public TinyModelTest {
  protected:
    void SetUp() override {
        TinyModelTest::SetUp();
        TinyModelSpec spec;
        spec.n_vocab = kRows;
        spec.n_tokens = kTokens;
        path_ = temp_path("padded_vocabulary");
        write_tiny_model(path_, spec);
        model_ = load(path_);
        ASSERT_NE(model_, nullptr);
        ASSERT_EQ(vocab(model_), kRows);
        tok_ = vkllm_model_get_tokenizer(model_);
        vkllm_tokenizer_info info;
        info.struct_size = sizeof info;
        ASSERT_EQ(vkllm_tokenizer_get_info(tok_, &info), VKLLM_OK);
        ASSERT_EQ(info.n_vocab, kTokens);
    }

    // Every id generated is one of the tokenizer's.
    static void expect_tokens(const Generation &run, size_t n, const std::string &what) {
        ASSERT_EQ(run.status, VKLLM_OK) << what << ": " << run.error;
        EXPECT_EQ(run.ids.size(), n) << what;
        for (size_t i = 0; i < run.ids.size(); ++i)
            EXPECT_TRUE(run.ids[i] >= 0 && run.ids[i] < int32_t(kTokens))
                << what << ": token " << i << " is " << run.ids[i];
    }

    // What greedy decoding must give: the prompt, then each generated token, run step by step
    // through a fresh session, the argmax of the tokenizer's ids after each. Also counts the
    // steps whose argmax over all rows lies in the padding (where an unmasked pick would go).
    std::vector<int32_t> greedy_replay(const std::vector<int32_t> &prompt,
                                       const std::vector<int32_t> &generated, size_t *padded_wins) {
        vkllm_session *s = session(model_, 64);
        std::vector<float> logits(kRows);
        EXPECT_EQ(vkllm_session_eval(s, 0, prompt.data(), prompt.size(), logits.data()), VKLLM_OK)
            << vkllm_last_error();
        std::vector<int32_t> want;
        *padded_wins = 0;
        for (size_t i = 0; i < generated.size(); ++i) {
            want.push_back(argmax_first(logits, 0, kTokens));
            *padded_wins += argmax_first(logits, 0, kRows) >= int32_t(kTokens);
            uint32_t seq = 0;
            EXPECT_EQ(vkllm_session_decode(s, &seq, &generated[i], 1, logits.data()), VKLLM_OK)
                << vkllm_last_error();
        }
        return want;
    }

    std::string path_;
    vkllm_model *model_ = nullptr;
    const vkllm_tokenizer *tok_ = nullptr;
    const std::vector<int32_t> prompt_ = {1, 5, 9, 3};
};

TEST_F(PaddedVocabulary, GreedyDecodingChoosesOnlyTheTokenizersIds) {
    // Device argmax (no penalty) and host argmax (a repetition penalty reads the logits).
    for (float penalty : {1.0f, 1.3f}) {
        Sampling how;
        how.repeat_penalty = penalty;
        Generation run = generate(session(model_, 64), prompt_, 24, how);
        std::string what = "greedy, repeat penalty " + std::to_string(penalty);
        expect_tokens(run, 24, what);
        if (penalty != 1.0f) continue;  // the penalty changes the logits the replay compares
        size_t padded_wins = 0;
        EXPECT_EQ(run.ids, greedy_replay(prompt_, run.ids, &padded_wins)) << what;
        // The model is one where an unmasked argmax would pick padding.
        EXPECT_GT(padded_wins, run.ids.size() / 2) << what;
    }
}

TEST_F(PaddedVocabulary, SamplingChoosesOnlyTheTokenizersIds) {
    for (uint64_t seed : {1u, 2u, 3u}) {
        Sampling how;
        how.temperature = 1.0f;
        how.seed = seed;
        expect_tokens(generate(session(model_, 64), prompt_, 24, how), 24,
                      "sampled, seed " + std::to_string(seed));
    }
}

TEST_F(PaddedVocabulary, ChainedGreedyStepsChooseOnlyTheTokenizersIds) {
    Sampling how;
    how.steps_per_submit = 8;
    Generation run = generate(session(model_, 64), prompt_, 24, how);
    expect_tokens(run, 24, "generate, 8 steps per submission");
    size_t padded_wins = 0;
    EXPECT_EQ(run.ids, greedy_replay(prompt_, run.ids, &padded_wins));

    // The low-level chain: its argmax is fed back on the device, so a padded pick would be
    // decoded too.
    vkllm_session *s = session(model_, 64);
    ASSERT_EQ(vkllm_session_eval(s, 0, prompt_.data(), prompt_.size(), nullptr), VKLLM_OK);
    uint32_t seq = 0;
    int32_t first = 7;
    std::vector<int32_t> out(16, -1);
    ASSERT_EQ(vkllm_session_decode_greedy(s, &seq, &first, 1, 16, out.data()), VKLLM_OK)
        << vkllm_last_error();
    std::vector<int32_t> fed = {first};
    fed.insert(fed.end(), out.begin(), out.end() - 1);
    std::vector<int32_t> want = greedy_replay(prompt_, fed, &padded_wins);
    want.erase(want.begin());  // the replay's first pick is the prompt's, not a chain output
    out.pop_back();
    EXPECT_EQ(std::vector<int32_t>(out.begin(), out.end()), want);
    EXPECT_GT(padded_wins, fed.size() / 2);
}

TEST_F(PaddedVocabulary, BatchedDecodeChoosesOnlyTheTokenizersIds) {
    // Three sequences decoded together, chained on the device, against each one's logits from
    // batched vkllm_session_decode steps.
    const uint32_t n = 3, steps = 6;
    vkllm_session *chained = session(model_, 64, VKLLM_KV_F16, 0, n);
    vkllm_session *stepped = session(model_, 64, VKLLM_KV_F16, 0, n);
    std::vector<uint32_t> seqs = {0, 1, 2};
    for (uint32_t q = 0; q < n; ++q) {
        std::vector<int32_t> p = some_tokens(3 + q, kTokens, q + 1);
        ASSERT_EQ(vkllm_session_eval(chained, q, p.data(), p.size(), nullptr), VKLLM_OK);
        ASSERT_EQ(vkllm_session_eval(stepped, q, p.data(), p.size(), nullptr), VKLLM_OK);
    }
    std::vector<int32_t> next = {4, 8, 12};
    std::vector<int32_t> out(size_t(steps) * n);
    ASSERT_EQ(vkllm_session_decode_greedy(chained, seqs.data(), next.data(), n, steps, out.data()),
              VKLLM_OK)
        << vkllm_last_error();
    std::vector<float> logits(size_t(n) * kRows);
    size_t padded_wins = 0;
    for (uint32_t step = 0; step < steps; ++step) {
        ASSERT_EQ(vkllm_session_decode(stepped, seqs.data(), next.data(), n, logits.data()),
                  VKLLM_OK)
            << vkllm_last_error();
        for (uint32_t q = 0; q < n; ++q) {
            next[q] = argmax_first(logits, q, kTokens);
            padded_wins += argmax_first(logits, q, kRows) >= int32_t(kTokens);
            EXPECT_EQ(out[step * n + q], next[q]) << "step " << step << ", sequence " << q;
        }
    }
    EXPECT_GT(padded_wins, size_t(steps) * n / 2);

    // Generation in one sequence of a batched session, greedy and sampled.
    vkllm_session *s = session(model_, 64, VKLLM_KV_F16, 0, n);
    expect_tokens(generate(s, prompt_, 16, Sampling{}, 2), 16, "greedy, sequence 2");
    Sampling sampled;
    sampled.temperature = 1.0f;
    expect_tokens(generate(s, prompt_, 16, sampled, 1), 16, "sampled, sequence 1");
}

TEST_F(PaddedVocabulary, StreamingSessionsChooseOnlyTheTokenizersIds) {
    // A ring of 16 with 4 sinks, generated well past its wrap.
    Sampling chained;
    chained.steps_per_submit = 8;
    Sampling sampled;
    sampled.temperature = 1.0f;
    for (const Sampling &how : {Sampling{}, chained, sampled}) {
        vkllm_session *s = session(model_, 16, VKLLM_KV_F16, VKLLM_SESSION_STREAMING, 1, 4, 4);
        Generation run = generate(s, prompt_, 48, how);
        expect_tokens(run, 48,
                      "streaming, temperature " + std::to_string(how.temperature) + ", " +
                          std::to_string(how.steps_per_submit) + " steps per submission");
        EXPECT_EQ(position(s), prompt_.size() + 48 - 1);
    }
}

// Ids from every class a caller could pass: the tokenizer's, the padding, past the embedding,
// negative and the extremes.
int32_t random_id(std::mt19937 &rng) {
    switch (rng() % 7) {
        case 0:
        case 1:
            return int32_t(rng() % kTokens);
        case 2:
            return int32_t(kTokens + rng() % (kRows - kTokens));
        case 3:
            return int32_t(kRows + rng() % 1000);
        case 4:
            return -1 - int32_t(rng() % 1000);
        case 5:
            return rng() % 2 ? INT32_MIN : INT32_MAX;
        default:
            return int32_t(rng());
    }
}

bool is_token(int32_t id) {
    return id >= 0 && id < int32_t(kTokens);
}
bool has_row(int32_t id) {
    return id >= 0 && id < int32_t(kRows);
}

// A refusal is INVALID_ARGUMENT with a message naming the id.
void expect_refused(vkllm_status status, int32_t id, const char *call) {
    EXPECT_EQ(status, VKLLM_ERR_INVALID_ARGUMENT) << call << "(" << id << ")";
    if (status == VKLLM_ERR_INVALID_ARGUMENT) {
        EXPECT_NE(std::string(vkllm_last_error()).find(std::to_string(id)), std::string::npos)
            << call << ": " << vkllm_last_error();
    }
}

TEST_F(PaddedVocabulary, EveryCallTakingAnIdRefusesOneItCannotServe) {
    std::mt19937 rng(20261125);
    vkllm_detokenizer *d = nullptr;
    ASSERT_EQ(vkllm_detokenizer_create(tok_, 0, &d), VKLLM_OK);
    // Each library call sees a single id, so that the expectation is plain.
    for (int i = 0; i < 400; ++i) {
        int32_t id = random_id(rng);
        char buf[256];
        size_t len = 0;
        vkllm_status st = vkllm_tokenizer_get_piece(tok_, id, rng() % 2, buf, sizeof buf, &len);
        if (is_token(id))
            EXPECT_EQ(st, VKLLM_OK) << id << ": " << vkllm_last_error();
        else
            expect_refused(st, id, "vkllm_tokenizer_get_piece");

        std::vector<int32_t> ids = {3, id, 4};
        st = vkllm_tokenizer_decode(tok_, ids.data(), ids.size(), rng() % 2, buf, sizeof buf, &len);
        if (is_token(id))
            EXPECT_EQ(st, VKLLM_OK) << id << ": " << vkllm_last_error();
        else
            expect_refused(st, id, "vkllm_tokenizer_decode");

        st = vkllm_detokenizer_push(d, id, buf, sizeof buf, &len);
        if (is_token(id))
            EXPECT_EQ(st, VKLLM_OK) << id << ": " << vkllm_last_error();
        else
            expect_refused(st, id, "vkllm_detokenizer_push");

        int32_t eog = -1;
        st = vkllm_tokenizer_is_end_of_generation(tok_, id, &eog);
        if (is_token(id))
            EXPECT_EQ(st, VKLLM_OK) << id << ": " << vkllm_last_error();
        else
            expect_refused(st, id, "vkllm_tokenizer_is_end_of_generation");
    }
    size_t len = 0;
    char buf[64];
    EXPECT_EQ(vkllm_detokenizer_flush(d, buf, sizeof buf, &len), VKLLM_OK);
    vkllm_detokenizer_destroy(d);
}

TEST_F(PaddedVocabulary, TheTokenizerRefusesAnIdWithoutAToken) {
    // The library's own paths from an id to text (generation streams through StreamDecoder).
    vkllm::tokenizer::Tokenizer tok(vkllm::tokenizer::load_vocab(vkllm::format::GgufFile(path_)));
    vkllm::tokenizer::StreamDecoder stream(tok, false, false);
    std::mt19937 rng(7);
    auto refused = [](auto &&call) {
        try {
            call();
        } catch (const vkllm::Error &e) {
            return e.status() == VKLLM_ERR_INVALID_ARGUMENT &&
                   std::string(e.what()).find("outside the vocabulary") != std::string::npos;
        }
        return false;
    };
    for (int i = 0; i < 400; ++i) {
        int32_t id = random_id(rng);
        bool special = rng() % 2;
        EXPECT_EQ(refused([&] { tok.piece(id, special); }), !is_token(id)) << id;
        EXPECT_EQ(refused([&] { tok.decode({5, id}, special); }), !is_token(id)) << id;
        EXPECT_EQ(refused([&] { stream.push(id); }), !is_token(id)) << id;
    }
}

TEST_F(PaddedVocabulary, EverySessionCallTakingAnIdRefusesOneWithoutAnEmbedding) {
    // Session inputs may be any embedding row (padding included: it has an embedding); others
    // are refused before anything runs. Whatever is generated is a token.
    std::mt19937 rng(99);
    vkllm_session *s = session(model_, 128);
    for (int i = 0; i < 120; ++i) {
        if (position(s) > 100) {
            ASSERT_EQ(vkllm_session_reset(s, -1), VKLLM_OK);
        }
        int32_t id = random_id(rng);
        uint32_t before = position(s), seq = 0;
        std::vector<int32_t> tokens = {2, id};
        std::vector<float> logits(2 * kRows);
        int32_t out[2] = {-1, -1};
        Generation run;
        vkllm_status st;
        const char *call;
        uint32_t advance;
        switch (i % 4) {
            case 0:
                call = "vkllm_session_eval";
                st = vkllm_session_eval(s, 0, tokens.data(), tokens.size(), logits.data());
                advance = 2;
                break;
            case 1:
                call = "vkllm_session_decode";
                st = vkllm_session_decode(s, &seq, &id, 1, logits.data());
                advance = 1;
                break;
            case 2:
                call = "vkllm_session_decode_greedy";
                st = vkllm_session_decode_greedy(s, &seq, &id, 1, 2, out);
                advance = 2;
                if (st == VKLLM_OK) {
                    EXPECT_TRUE(is_token(out[0]) && is_token(out[1])) << out[0] << ", " << out[1];
                }
                break;
            default:
                call = "vkllm_session_generate";
                run = generate(s, tokens, 3, Sampling{uint32_t(rng() % 2) ? 1.0f : 0.0f});
                st = run.status;
                advance = 2 + 3 - 1;
                for (int32_t t : run.ids)
                    EXPECT_TRUE(is_token(t)) << t;
        }
        if (has_row(id)) {
            EXPECT_EQ(st, VKLLM_OK) << call << "(" << id << "): " << vkllm_last_error();
            EXPECT_EQ(position(s), before + advance) << call;
        } else {
            expect_refused(st, id, call);
            EXPECT_EQ(position(s), before) << call << " refused " << id << " but ran";
        }
    }
}

}  // namespace
