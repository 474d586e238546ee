// Grammars through the C API on a tiny model whose vocabulary has every byte: generation under
// a grammar gives sentences of it and stops when it is finished, greedy generation equals a
// step-by-step argmax over the masked logits (also when chained steps were asked for), the
// sampler's calls do what the header says, and bad grammars and misuse give errors.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "grammar_test_util.h"
#include "tiny_model_fixture.h"

namespace {

using vkllm::grammar::testing::matches;

class GrammarApi : public TinyModelTest {
  protected:
    void SetUp() override {
        TinyModelTest::SetUp();
        TinyModelSpec spec;
        spec.n_vocab = 300;
        spec.byte_tokens = true;
        spec.n_ctx = 256;
        model_ = tiny(spec, "grammar", false);
        ASSERT_NE(model_, nullptr);
        tok_ = vkllm_model_get_tokenizer(model_);
        n_vocab_ = vocab(model_);
    }

    vkllm_grammar *grammar(const char *gbnf) {
        vkllm_grammar *g = nullptr;
        EXPECT_EQ(vkllm_grammar_create(tok_, gbnf, nullptr, &g), VKLLM_OK) << vkllm_last_error();
        return g;
    }

    std::string piece(int32_t id) {
        char buf[64];
        size_t n = 0;
        EXPECT_EQ(vkllm_tokenizer_get_piece(tok_, id, 0, buf, sizeof buf, &n), VKLLM_OK);
        return std::string(buf, n);
    }

    struct Generated {
        std::string text;
        std::vector<int32_t> tokens;
        vkllm_generate_result result{};
    };

    Generated generate(vkllm_session *s, const vkllm_sampling_params &sp,
                       uint32_t steps_per_submit = 1, uint32_t max_tokens = 120) {
        Generated g;
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.max_tokens = max_tokens;
        gp.steps_per_submit = steps_per_submit;
        gp.user_data = &g;
        gp.on_token = [](void *user, int32_t token, const char *text, size_t n) -> int32_t {
            auto *out = static_cast<Generated *>(user);
            if (token >= 0) out->tokens.push_back(token);
            out->text.append(text, n);
            return 0;
        };
        g.result.struct_size = sizeof g.result;
        std::vector<int32_t> prompt = some_tokens(5, 300, 7);
        EXPECT_EQ(vkllm_session_generate(s, prompt.data(), prompt.size(), &sp, &gp, &g.result),
                  VKLLM_OK)
            << vkllm_last_error();
        return g;
    }

    vkllm_model *model_ = nullptr;
    const vkllm_tokenizer *tok_ = nullptr;
    uint32_t n_vocab_ = 0;
};

vkllm_sampling_params random_params(uint64_t seed, const vkllm_grammar *g) {
    vkllm_sampling_params p;
    vkllm_sampling_params_init(&p);
    p.temperature = 1.5f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    p.grammar = g;
    return p;
}

const char *kLabels = "root ::= \"positive\" | \"negative\" | \"neutral\"";
const char *kRecord =
    "root ::= \"{\\\"id\\\": \" [1-9] [0-9]{0,3} \", \\\"ok\\\": \" (\"true\" | \"false\") "
    "\", \\\"tag\\\": \\\"\" [a-z]{1,8} \"\\\"}\"";

TEST_F(GrammarApi, SampledTextIsOneOfTheLabelsAndEndsThere) {
    vkllm_grammar *g = grammar(kLabels);
    std::set<std::string> seen;
    for (uint64_t seed = 0; seed < 8; ++seed) {
        vkllm_session *s = session(model_);
        vkllm_sampling_params p = random_params(seed, g);
        Generated out = generate(s, p);
        EXPECT_TRUE(out.text == "positive" || out.text == "negative" || out.text == "neutral")
            << out.text;
        EXPECT_EQ(out.result.stop_reason, VKLLM_STOP_END_OF_GENERATION);
        seen.insert(out.text);
    }
    EXPECT_GE(seen.size(), 2u) << "eight seeds at temperature 1.5 all chose one label";
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, SampledRecordsAreSentencesOfTheGrammar) {
    vkllm_grammar *g = grammar(kRecord);
    auto compiled = vkllm::grammar::testing::compile(kRecord);
    for (uint64_t seed = 0; seed < 6; ++seed) {
        vkllm_session *s = session(model_);
        vkllm_sampling_params p = random_params(seed, g);
        Generated out = generate(s, p);
        EXPECT_TRUE(matches(compiled, out.text)) << out.text;
        EXPECT_EQ(out.result.stop_reason, VKLLM_STOP_END_OF_GENERATION) << out.text;
    }
    vkllm_grammar_destroy(g);
}

// vkllm_generate_result.grammar_progress (issue 37): whether the text is a finished string of
// the grammar, so that an app can tell a cut answer from a whole one.
TEST_F(GrammarApi, AnAnswerCutByMaxTokensIsReportedIncomplete) {
    vkllm_grammar *g = grammar(kRecord);
    auto compiled = vkllm::grammar::testing::compile(kRecord);
    vkllm_sampling_params p = random_params(3, g);
    Generated cut = generate(session(model_), p, 1, 5);
    EXPECT_EQ(cut.result.stop_reason, VKLLM_STOP_MAX_TOKENS);
    EXPECT_EQ(cut.result.grammar_progress, VKLLM_GRAMMAR_INCOMPLETE) << cut.text;
    EXPECT_FALSE(matches(compiled, cut.text)) << cut.text;
    Generated whole = generate(session(model_), p);
    EXPECT_EQ(whole.result.stop_reason, VKLLM_STOP_END_OF_GENERATION);
    EXPECT_EQ(whole.result.grammar_progress, VKLLM_GRAMMAR_FINISHED) << whole.text;
    EXPECT_TRUE(matches(compiled, whole.text)) << whole.text;
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, WithoutAGrammarTheTextIsComplete) {
    vkllm_sampling_params p = random_params(3, nullptr);
    Generated out = generate(session(model_), p, 1, 5);
    EXPECT_EQ(out.result.stop_reason, VKLLM_STOP_MAX_TOKENS);
    EXPECT_EQ(out.result.grammar_progress, VKLLM_GRAMMAR_COMPLETE);
}

// A stop string leaves the text shorter than what the grammar accepted: its progress is that
// of the text given, parsed again. "ab" is a whole sentence of this grammar, "ab-c" is not;
// banning the end tokens makes the model go on past "ab" into the stop string.
TEST_F(GrammarApi, AStopStringReportsTheProgressOfTheTextBeforeIt) {
    vkllm_grammar *g = grammar("root ::= \"ab\" | \"ab-cd\"");
    vkllm_tokenizer_info info;
    info.struct_size = sizeof info;
    ASSERT_EQ(vkllm_tokenizer_get_info(tok_, &info), VKLLM_OK);
    std::vector<vkllm_logit_bias> ban;
    for (int32_t id : {info.eos, info.eot})
        if (id >= 0) ban.push_back({id, -INFINITY});
    vkllm_sampling_params p = random_params(5, g);
    p.logit_bias = ban.data();
    p.n_logit_bias = ban.size();
    for (const char *stop : {"-", "c"}) {
        vkllm_generate_params gp;
        vkllm_generate_params_init(&gp);
        gp.stop = &stop;
        gp.n_stop = 1;
        Generated out;
        gp.user_data = &out;
        gp.on_token = [](void *user, int32_t, const char *text, size_t n) -> int32_t {
            static_cast<Generated *>(user)->text.append(text, n);
            return 0;
        };
        out.result.struct_size = sizeof out.result;
        std::vector<int32_t> prompt = some_tokens(5, 300, 7);
        ASSERT_EQ(vkllm_session_generate(session(model_), prompt.data(), prompt.size(), &p, &gp,
                                         &out.result),
                  VKLLM_OK)
            << vkllm_last_error();
        EXPECT_EQ(out.result.stop_reason, VKLLM_STOP_STRING) << stop;
        EXPECT_EQ(out.text, std::string(stop) == "-" ? "ab" : "ab-");
        EXPECT_EQ(out.result.grammar_progress,
                  std::string(stop) == "-" ? VKLLM_GRAMMAR_COMPLETE : VKLLM_GRAMMAR_INCOMPLETE)
            << stop;
    }
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, ACancelledAnswerIsReportedIncomplete) {
    vkllm_grammar *g = grammar(kRecord);
    vkllm_sampling_params p = random_params(3, g);
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    int calls = 0;
    gp.user_data = &calls;
    gp.on_token = [](void *user, int32_t, const char *, size_t) -> int32_t {
        return ++*static_cast<int *>(user) >= 3 ? 1 : 0;
    };
    vkllm_generate_result r;
    r.struct_size = sizeof r;
    std::vector<int32_t> prompt = some_tokens(5, 300, 7);
    EXPECT_EQ(vkllm_session_generate(session(model_), prompt.data(), prompt.size(), &p, &gp, &r),
              VKLLM_ERR_CANCELLED);
    EXPECT_EQ(r.stop_reason, VKLLM_STOP_CANCELLED);
    EXPECT_EQ(r.grammar_progress, VKLLM_GRAMMAR_INCOMPLETE);
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, GreedyUnderAGrammarIsTheArgmaxOfTheMaskedLogitsAtEachStep) {
    vkllm_grammar *g = grammar(kRecord);
    vkllm_sampling_params p;
    vkllm_sampling_params_init(&p);
    p.temperature = 0.0f;
    p.grammar = g;
    // The reference: decode step by step, mask with vkllm_sampler_apply_grammar, take the
    // argmax, until the grammar is finished.
    vkllm_session *ref = session(model_);
    vkllm_sampler *masker = nullptr;
    ASSERT_EQ(vkllm_sampler_create(tok_, &p, &masker), VKLLM_OK) << vkllm_last_error();
    std::vector<int32_t> prompt = some_tokens(5, 300, 7);
    std::vector<float> logits(n_vocab_);
    ASSERT_EQ(vkllm_session_eval(ref, 0, prompt.data(), prompt.size(), logits.data()), VKLLM_OK);
    std::vector<int32_t> expected;
    vkllm_grammar_progress progress = VKLLM_GRAMMAR_INCOMPLETE;
    while (progress != VKLLM_GRAMMAR_FINISHED && expected.size() < 120) {
        ASSERT_EQ(vkllm_sampler_apply_grammar(masker, logits.data(), logits.size()), VKLLM_OK);
        int32_t t = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
        ASSERT_NE(logits[size_t(t)], -INFINITY);
        int32_t eog = 0;
        vkllm_tokenizer_is_end_of_generation(tok_, t, &eog);
        if (eog) break;
        ASSERT_EQ(vkllm_sampler_accept(masker, t), VKLLM_OK) << vkllm_last_error();
        expected.push_back(t);
        ASSERT_EQ(vkllm_sampler_get_grammar_progress(masker, &progress), VKLLM_OK);
        if (progress == VKLLM_GRAMMAR_FINISHED) break;
        uint32_t seq = 0;
        ASSERT_EQ(vkllm_session_decode(ref, &seq, &t, 1, logits.data()), VKLLM_OK);
    }
    vkllm_sampler_destroy(masker);
    ASSERT_FALSE(expected.empty());
    // One step per submission, and chains of 8 asked for: a grammar needs the host each step.
    for (uint32_t chain : {1u, 8u}) {
        vkllm_session *s = session(model_);
        Generated out = generate(s, p, chain);
        EXPECT_EQ(out.tokens, expected) << "steps_per_submit " << chain;
        EXPECT_EQ(out.result.stop_reason, VKLLM_STOP_END_OF_GENERATION);
        uint32_t pos = 0;
        ASSERT_EQ(vkllm_session_get_position(s, 0, &pos), VKLLM_OK);
        // The prompt and every generated token but the last, as after an end token.
        EXPECT_EQ(pos, prompt.size() + expected.size() - 1);
    }
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, ApplyGrammarKeepsExactlyTheTokensThatContinueTheText) {
    vkllm_grammar *g = grammar("root ::= \"t2\" [5-9] \"!\"");
    vkllm_sampler *s = nullptr;
    vkllm_sampling_params p = random_params(1, g);
    ASSERT_EQ(vkllm_sampler_create(tok_, &p, &s), VKLLM_OK);
    vkllm_grammar_destroy(g);  // the sampler keeps its own reference
    for (const char *prefix : {"", "t", "t2", "t27"}) {
        std::vector<float> logits(n_vocab_, 1.0f);
        ASSERT_EQ(vkllm_sampler_apply_grammar(s, logits.data(), logits.size()), VKLLM_OK);
        for (int32_t id = 0; id < int32_t(n_vocab_); ++id) {
            std::string text = std::string(prefix) + piece(id);
            bool allowed =
                id >= 3 &&
                vkllm::grammar::testing::is_prefix(
                    vkllm::grammar::testing::compile("root ::= \"t2\" [5-9] \"!\""), text);
            EXPECT_EQ(std::isfinite(logits[size_t(id)]), allowed)
                << "after '" << prefix << "', token " << id << " '" << piece(id) << "'";
        }
        // Advance by one byte token: ids 3.. are the bytes.
        std::string next = std::string("t27!").substr(std::string(prefix).size(), 1);
        ASSERT_EQ(vkllm_sampler_accept(s, 3 + int32_t(uint8_t(next[0]))), VKLLM_OK)
            << vkllm_last_error();
    }
    vkllm_grammar_progress progress;
    ASSERT_EQ(vkllm_sampler_get_grammar_progress(s, &progress), VKLLM_OK);
    EXPECT_EQ(progress, VKLLM_GRAMMAR_FINISHED);
    vkllm_sampler_destroy(s);
}

TEST_F(GrammarApi, GeneratingABatchEndsEachSequenceWhenItsGrammarIsFinished) {
    vkllm_grammar *g = grammar(kLabels);
    vkllm_session *s = session(model_, 0, VKLLM_KV_F16, 0, 3);
    std::vector<vkllm_sampler *> samplers(3);
    std::vector<std::vector<int32_t>> prompts, tokens(3, std::vector<int32_t>(64));
    std::vector<vkllm_batch_sequence> seqs(3);
    for (uint32_t i = 0; i < 3; ++i) {
        vkllm_sampling_params p = random_params(10 + i, g);
        ASSERT_EQ(vkllm_sampler_create(tok_, &p, &samplers[i]), VKLLM_OK);
        prompts.push_back(some_tokens(4, 300, i + 1));
    }
    for (uint32_t i = 0; i < 3; ++i) {
        seqs[i] = vkllm_batch_sequence{sizeof(vkllm_batch_sequence),
                                       i,
                                       prompts[i].data(),
                                       prompts[i].size(),
                                       samplers[i],
                                       tokens[i].data(),
                                       0,
                                       VKLLM_STOP_MAX_TOKENS};
    }
    vkllm_generate_params gp;
    vkllm_generate_params_init(&gp);
    gp.max_tokens = 64;
    ASSERT_EQ(vkllm_session_generate_batch(s, seqs.data(), seqs.size(), &gp), VKLLM_OK)
        << vkllm_last_error();
    for (uint32_t i = 0; i < 3; ++i) {
        std::string text;
        for (size_t k = 0; k < seqs[i].n_generated; ++k)
            text += piece(tokens[i][k]);
        EXPECT_TRUE(text == "positive" || text == "negative" || text == "neutral") << text;
        EXPECT_EQ(seqs[i].stop_reason, VKLLM_STOP_END_OF_GENERATION);
        vkllm_sampler_destroy(samplers[i]);
    }
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, PromptTokensGoToThePenaltiesNotTheGrammar) {
    vkllm_grammar *g = grammar("root ::= \"ok\"");
    vkllm_sampler *s = nullptr;
    vkllm_sampling_params p = random_params(1, g);
    ASSERT_EQ(vkllm_sampler_create(tok_, &p, &s), VKLLM_OK);
    std::vector<int32_t> prompt = some_tokens(6, 300, 3);
    ASSERT_EQ(vkllm_sampler_accept_prompt(s, prompt.data(), prompt.size()), VKLLM_OK);
    vkllm_grammar_progress progress;
    ASSERT_EQ(vkllm_sampler_get_grammar_progress(s, &progress), VKLLM_OK);
    EXPECT_EQ(progress, VKLLM_GRAMMAR_INCOMPLETE);
    // The same tokens as generated ones are refused, one by one, and change nothing.
    EXPECT_EQ(vkllm_sampler_accept(s, 3 + 'x'), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("not allowed by the grammar"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(vkllm_sampler_accept(s, 3 + 'o'), VKLLM_OK);
    EXPECT_EQ(vkllm_sampler_accept(s, 3 + 'k'), VKLLM_OK);
    ASSERT_EQ(vkllm_sampler_get_grammar_progress(s, &progress), VKLLM_OK);
    EXPECT_EQ(progress, VKLLM_GRAMMAR_FINISHED);
    ASSERT_EQ(vkllm_sampler_reset(s), VKLLM_OK);
    ASSERT_EQ(vkllm_sampler_get_grammar_progress(s, &progress), VKLLM_OK);
    EXPECT_EQ(progress, VKLLM_GRAMMAR_INCOMPLETE);
    vkllm_sampler_destroy(s);
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, ABadGrammarIsRefusedWithItsLineAndColumn) {
    vkllm_grammar *g = reinterpret_cast<vkllm_grammar *>(1);
    EXPECT_EQ(vkllm_grammar_create(tok_, "root ::= \"a\"\nitem ::= [z-a]", nullptr, &g),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(g, nullptr);
    EXPECT_NE(std::string(vkllm_last_error()).find("line 2, column"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(
        vkllm_grammar_create(tok_, "root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"", nullptr, &g),
        VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("left-recursive"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(vkllm_grammar_create(tok_, "start ::= \"a\"", nullptr, &g),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_grammar_create(tok_, "start ::= \"a\"", "start", &g), VKLLM_OK);
    vkllm_grammar_destroy(g);
    EXPECT_EQ(vkllm_grammar_create(nullptr, "root ::= \"a\"", nullptr, &g),
              VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_grammar_create(tok_, nullptr, nullptr, &g), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_grammar_create(tok_, "root ::= \"a\"", nullptr, nullptr),
              VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_grammar_destroy(nullptr);
}

TEST_F(GrammarApi, SamplerCallsRefuseNullsAndShortRows) {
    vkllm_grammar_progress progress;
    EXPECT_EQ(vkllm_sampler_get_grammar_progress(nullptr, &progress), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_accept_prompt(nullptr, nullptr, 0), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_grammar *g = grammar(kLabels);
    vkllm_sampler *s = nullptr;
    vkllm_sampling_params p = random_params(1, g);
    ASSERT_EQ(vkllm_sampler_create(tok_, &p, &s), VKLLM_OK);
    std::vector<float> row(10, 0.0f);
    EXPECT_EQ(vkllm_sampler_apply_grammar(s, row.data(), row.size()), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_apply_grammar(s, nullptr, n_vocab_), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_accept_prompt(s, nullptr, 3), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(vkllm_sampler_get_grammar_progress(s, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_sampler_destroy(s);
    // Without a grammar: complete, and the row is left alone.
    vkllm_sampling_params plain = random_params(1, nullptr);
    ASSERT_EQ(vkllm_sampler_create(tok_, &plain, &s), VKLLM_OK);
    ASSERT_EQ(vkllm_sampler_get_grammar_progress(s, &progress), VKLLM_OK);
    EXPECT_EQ(progress, VKLLM_GRAMMAR_COMPLETE);
    std::vector<float> full(n_vocab_, 0.5f);
    ASSERT_EQ(vkllm_sampler_apply_grammar(s, full.data(), full.size()), VKLLM_OK);
    EXPECT_EQ(full, std::vector<float>(n_vocab_, 0.5f));
    vkllm_sampler_destroy(s);
    vkllm_grammar_destroy(g);
}

TEST_F(GrammarApi, AGrammarForAnotherVocabularyIsRefused) {
    TinyModelSpec other;
    other.n_vocab = 280;
    other.byte_tokens = true;
    vkllm_model *m2 = tiny(other, "grammar_other", false);
    ASSERT_NE(m2, nullptr);
    vkllm_grammar *g = nullptr;
    ASSERT_EQ(vkllm_grammar_create(vkllm_model_get_tokenizer(m2), kLabels, nullptr, &g), VKLLM_OK);
    vkllm_sampler *s = nullptr;
    vkllm_sampling_params p = random_params(1, g);
    EXPECT_EQ(vkllm_sampler_create(tok_, &p, &s), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("vocabulary"), std::string::npos);
    vkllm_session *sess = session(model_);
    std::vector<int32_t> prompt = some_tokens(3, 300, 1);
    EXPECT_EQ(vkllm_session_generate(sess, prompt.data(), prompt.size(), &p, nullptr, nullptr),
              VKLLM_ERR_INVALID_ARGUMENT);
    vkllm_grammar_destroy(g);
}

}  // namespace
