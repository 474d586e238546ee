// The sampler under a grammar, on the CPU with random logits over a small vocabulary of single
// bytes, multi-byte words and pieces of UTF-8 characters: whatever it draws, the text always
// ends as a sentence of the grammar, and the check-first path chooses what masking first would.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "grammar/json_schema.h"
#include "grammar_test_util.h"

namespace vkllm::grammar {
namespace {

using testing::compile;
using testing::matches;

constexpr int32_t kEnd = 0;  // the vocabulary's end-of-generation token (no text)

// Id 0 ends generation; then every byte; then words and the halves of two-byte and four-byte
// characters, so tokens span grammar elements and end inside characters.
std::vector<std::string> small_vocabulary() {
    std::vector<std::string> pieces = {""};
    for (int b = 0; b < 256; ++b)
        pieces.push_back(std::string(1, char(b)));
    for (const char *w :
         {"yes",       "no",   "ye",  "s ",  "\": ", "{\"",  "\"}",  "true", "false",    "null",
          "12",        "345",  "-0",  ".5",  "e+",   "caf",  "\xC3", "\xA9", "\xF0\x9F", "\x98\x80",
          "\xC3\xA9!", ", \"", "\"a", "b\"", "[1",   ", 2]", "  ",   "\n"})
        pieces.push_back(w);
    return pieces;
}

std::shared_ptr<const CompiledGrammar> compiled(const std::string &gbnf) {
    auto c = std::make_shared<CompiledGrammar>();
    c->grammar = compile(gbnf);
    c->trie = std::make_shared<const TokenTrie>(small_vocabulary());
    c->end_tokens = {kEnd};
    return c;
}

engine::SamplingOptions random_sampling(std::shared_ptr<const CompiledGrammar> g, uint64_t seed) {
    engine::SamplingOptions o;
    o.temperature = 1.0f;
    o.top_k = 0;
    o.top_p = 1.0f;
    o.min_p = 0.0f;
    o.seed = seed;
    o.grammar = std::move(g);
    return o;
}

// Draws until the end token or the grammar is finished; the text so far.
std::string draw(engine::Sampler &sampler, const TokenTrie &trie, std::mt19937 &rng, bool &ended) {
    std::normal_distribution<float> noise(0.0f, 3.0f);
    std::vector<float> logits(trie.vocab_size());
    std::string text;
    ended = false;
    for (int step = 0; step < 400; ++step) {
        if (sampler.progress() == Progress::Finished) {
            ended = true;
            break;
        }
        for (float &l : logits)
            l = noise(rng);
        int32_t t = sampler.sample(logits.data(), logits.size(), 0);
        if (t == kEnd) {
            ended = true;
            break;
        }
        sampler.accept(t);
        text += trie.piece(t);
    }
    return text;
}

const char *const kGrammars[] = {
    "root ::= \"yes\" | \"no\" | \"maybe so\"",
    "root ::= \"{\" ws \"\\\"a\\\"\" ws \":\" ws (\"true\" | \"false\" | \"null\" | num) ws "
    "\"}\"\nnum ::= \"-\"? [0-9]{1,4} (\".\" [0-9]{1,3})?\nws ::= [ \\n]{0,2}",
    "root ::= \"[\" item (\", \" item){0,3} \"]\"\nitem ::= [0-9]{1,3}",
    "root ::= \"caf\" [\\u00E9\\u00E8] \"!\"? | [\\U0001F600-\\U0001F64F]{1,2}",
    "root ::= [a-z]{2,6} (\" \" [a-z]{2,6}){0,2} \".\"",
};

TEST(GrammarSampling, RandomLogitsAlwaysGiveASentenceOfTheGrammar) {
    std::mt19937 rng(2027);
    int total = 0;
    for (const char *gbnf : kGrammars) {
        auto g = compiled(gbnf);
        for (uint64_t seed = 0; seed < 600; ++seed, ++total) {
            engine::Sampler sampler(random_sampling(g, seed));
            bool ended = false;
            std::string text = draw(sampler, *g->trie, rng, ended);
            ASSERT_TRUE(ended) << gbnf << ": no end after '" << text << "'";
            ASSERT_TRUE(matches(g->grammar, text)) << gbnf << ": '" << text << "'";
        }
    }
    EXPECT_EQ(total, 3000);
}

TEST(GrammarSampling, GreedyChoosesTheBestAllowedToken) {
    // The unconstrained best is refused, so the answer comes from the mask: the best of the
    // tokens that continue the text.
    auto g = compiled("root ::= \"yes\" | \"no\"");
    engine::SamplingOptions o = random_sampling(g, 1);
    o.temperature = 0.0f;
    engine::Sampler sampler(o);
    std::vector<float> logits(g->trie->vocab_size(), 0.0f);
    const std::vector<std::string> pieces = small_vocabulary();
    auto id_of = [&](const std::string &p) {
        for (size_t i = 0; i < pieces.size(); ++i)
            if (pieces[i] == p) return int32_t(i);
        return int32_t(-1);
    };
    logits[size_t(id_of("true"))] = 9.0f;
    logits[size_t(id_of("ye"))] = 5.0f;
    logits[size_t(id_of("no"))] = 4.0f;
    logits[size_t(id_of("yes"))] = 3.0f;
    EXPECT_EQ(sampler.sample(logits.data(), logits.size(), 0), id_of("ye"));
    sampler.accept(id_of("ye"));
    EXPECT_EQ(sampler.progress(), Progress::Incomplete);
    // End is the best now, but only "s" (the byte) or "s " could follow; "s " leaves the text
    // impossible, so only the byte is allowed.
    logits.assign(logits.size(), 0.0f);
    logits[size_t(kEnd)] = 9.0f;
    logits[size_t(id_of("s "))] = 8.0f;
    int32_t s = sampler.sample(logits.data(), logits.size(), 0);
    EXPECT_EQ(pieces[size_t(s)], "s");
    sampler.accept(s);
    EXPECT_EQ(sampler.progress(), Progress::Finished);
    EXPECT_EQ(sampler.sample(logits.data(), logits.size(), 0), kEnd);
}

TEST(GrammarSampling, ATokenTheGrammarRefusesIsNotAcceptedAndChangesNothing) {
    auto g = compiled("root ::= \"yes\"");
    engine::Sampler sampler(random_sampling(g, 1));
    const std::vector<std::string> pieces = small_vocabulary();
    int32_t no = 0, yes = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i] == "no") no = int32_t(i);
        if (pieces[i] == "yes") yes = int32_t(i);
    }
    EXPECT_THROW(sampler.accept(no), Error);
    EXPECT_THROW(sampler.accept(kEnd), Error);  // the text is not complete yet
    EXPECT_EQ(sampler.progress(), Progress::Incomplete);
    sampler.accept(yes);
    EXPECT_EQ(sampler.progress(), Progress::Finished);
    sampler.reset();
    EXPECT_EQ(sampler.progress(), Progress::Incomplete);
}

TEST(GrammarSampling, PromptTokensDoNotAdvanceTheGrammar) {
    auto g = compiled("root ::= \"yes\"");
    engine::Sampler sampler(random_sampling(g, 1));
    for (int32_t t : {1, 2, 3, 200})
        sampler.accept_prompt(t);
    EXPECT_EQ(sampler.progress(), Progress::Incomplete);
}

TEST(GrammarSampling, AVocabularyThatCannotSpellTheNextCharacterIsAnErrorNotAHang) {
    auto c = std::make_shared<CompiledGrammar>();
    c->grammar = compile("root ::= \"ab\" \"c\"");
    c->trie = std::make_shared<const TokenTrie>(std::vector<std::string>{"", "a", "b", "ab"});
    c->end_tokens = {kEnd};
    engine::Sampler sampler(random_sampling(c, 1));
    std::vector<float> logits = {0.0f, 1.0f, 2.0f, 3.0f};
    int32_t t = sampler.sample(logits.data(), logits.size(), 0);
    ASSERT_EQ(t, 3);  // "ab" beats "a"; "b" cannot start the text
    sampler.accept(t);
    EXPECT_THROW(sampler.sample(logits.data(), logits.size(), 0), Error);
}

TEST(GrammarSampling, AGrammarThatMatchesNothingIsAClearErrorAtTheFirstToken) {
    // {"enum": []} is a valid JSON Schema that no value satisfies.
    auto g = compiled(json_schema_to_gbnf(R"({"enum": []})"));
    for (float temperature : {0.0f, 1.0f}) {
        engine::SamplingOptions o = random_sampling(g, 1);
        o.temperature = temperature;
        engine::Sampler sampler(o);
        EXPECT_EQ(sampler.progress(), Progress::Incomplete);
        std::vector<float> logits(small_vocabulary().size(), 0.0f);
        try {
            sampler.sample(logits.data(), logits.size(), 0);
            ADD_FAILURE() << "a token was sampled from a grammar that matches nothing";
        } catch (const Error &e) {
            EXPECT_EQ(e.status(), VKLLM_ERR_INVALID_ARGUMENT);
            EXPECT_NE(std::string(e.what()).find("matches no text"), std::string::npos) << e.what();
        }
    }
}

TEST(GrammarSampling, ALogitBiasThatBansEveryAllowedTokenIsAnError) {
    auto g = compiled("root ::= \"yes\"");
    engine::SamplingOptions o = random_sampling(g, 1);
    const std::vector<std::string> pieces = small_vocabulary();
    for (size_t i = 0; i < pieces.size(); ++i)
        if (!pieces[i].empty() && pieces[i][0] == 'y')
            o.logit_bias.emplace_back(int32_t(i), -INFINITY);
    engine::Sampler sampler(o);
    std::vector<float> logits(pieces.size(), 0.0f);
    EXPECT_THROW(sampler.sample(logits.data(), logits.size(), 0), Error);
}

}  // namespace
}  // namespace vkllm::grammar
