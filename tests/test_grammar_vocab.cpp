// The grammar engine over vocabularies: the token trie, the mask (every token the state can take
// next, from one walk of the trie) against a check of each token alone, and the real
// vocabularies of tests/data (GPT-2, Llama SentencePiece, Llama 3, Qwen2.5, GPT-OSS):
// texts fed token by token as their tokenizers split them, and random sampling under a grammar,
// which must always end in a sentence of the grammar.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "format/gguf.h"
#include "grammar/token_mask.h"
#include "grammar/token_trie.h"
#include "grammar_test_util.h"
#include "model_cache.h"
#include "realistic_grammars.h"
#include "test_data.h"
#include "tokenizer/tokenizer.h"

namespace vkllm::grammar {
namespace {

using testing::compile;
using testing::kGrammarCases;
using testing::kJson;
using testing::matches;

// Every token's verdict from the mask equals running that token's bytes alone.
void expect_mask_matches_each_token(const GrammarState &state, const TokenTrie &trie) {
    std::vector<uint8_t> mask;
    MaskStats stats = token_mask(state, trie, mask);
    size_t allowed = 0;
    for (size_t id = 0; id < trie.vocab_size(); ++id) {
        bool alone = token_allowed(state, trie, int32_t(id));
        ASSERT_EQ(mask[id] != 0, alone) << "token " << id << " '" << trie.piece(int32_t(id)) << "'";
        allowed += alone;
    }
    EXPECT_EQ(stats.allowed, allowed);
}

TEST(TokenTrie, TokensSharingBytesShareNodes) {
    TokenTrie trie({"ab", "a", "", "abc", "b", "ab"});
    // root -> a -> b -> c, root -> b: five nodes; "ab" twice (ids 0 and 5) at one node.
    EXPECT_EQ(trie.nodes().size(), 5u);
    const auto &n = trie.nodes();
    const auto &e = trie.edges();
    ASSERT_EQ(n[0].edge_count, 2u);
    EXPECT_EQ(e[n[0].first_edge].byte, 'a');
    uint32_t a = e[n[0].first_edge].child;
    uint32_t ab = e[n[a].first_edge].child;
    ASSERT_EQ(n[ab].token_count, 2u);
    EXPECT_EQ(trie.tokens()[n[ab].first_token], 0);
    EXPECT_EQ(trie.tokens()[n[ab].first_token + 1], 5);
    EXPECT_EQ(n[0].token_count, 0u);  // the empty piece is nowhere
}

TEST(TokenTrie, EachSubtreeIsOneRangeOfThePreorder) {
    std::vector<std::string> pieces = {"ab", "a", "", "abc", "b", "ab", "\xFF", "ba", "abd", "c"};
    TokenTrie trie(pieces);
    const auto &order = trie.preorder();
    ASSERT_EQ(order.size(), trie.nodes().size() + 1);
    EXPECT_EQ(order.back().first_token, trie.tokens().size());
    // Each node's bytes rebuilt from depth and byte alone: the parent of a node is the last
    // node before it one level up.
    std::vector<std::string> prefix(trie.nodes().size());
    std::vector<size_t> last_at_depth(trie.max_depth() + 1, 0);
    for (size_t i = 1; i < trie.nodes().size(); ++i) {
        prefix[i] = prefix[last_at_depth[order[i].depth - 1]] + char(order[i].byte);
        last_at_depth[order[i].depth] = i;
    }
    for (size_t i = 0; i < trie.nodes().size(); ++i) {
        std::vector<int32_t> below(trie.tokens().begin() + order[i].first_token,
                                   trie.tokens().begin() + order[order[i].subtree_end].first_token);
        std::sort(below.begin(), below.end());
        std::vector<int32_t> expected;
        for (size_t id = 0; id < pieces.size(); ++id)
            if (!pieces[id].empty() && pieces[id].compare(0, prefix[i].size(), prefix[i]) == 0)
                expected.push_back(int32_t(id));
        EXPECT_EQ(below, expected) << "node " << i << " '" << prefix[i] << "'";
    }
}

TEST(TokenMask, AgreesWithEachTokenAloneOnASmallVocabulary) {
    std::vector<std::string> pieces = {
        "a", "b", "ab", "abc", "\xC3", "\xA9", "\xC3\xA9", "", "{", "}", "\"", "\"a", "1", "12",
        " ", "e\"", "\xE2\x82", "\xAC", "\xE2\x82\xAC",
        // Never UTF-8: a surrogate's start, an overlong form, past U+10FFFF, a lone 0xFF.
        "\xED\xA0", "\xE0\x80", "\xF4\x90", "\xFF", "\xED\x9F\xBF"};
    TokenTrie trie(pieces);
    auto g = compile(kJson);
    GrammarState s(g);
    expect_mask_matches_each_token(s, trie);
    ASSERT_TRUE(s.accept_bytes("{\"k"));
    expect_mask_matches_each_token(s, trie);
    ASSERT_TRUE(s.accept_bytes("\xC3"));  // half an é: only its second byte may follow
    expect_mask_matches_each_token(s, trie);
    std::vector<uint8_t> mask;
    token_mask(s, trie, mask);
    EXPECT_EQ(mask[5], 1);  // \xA9
    EXPECT_EQ(mask[0], 0);  // 'a'
}

TEST(TokenMask, AgreesWithEachTokenAloneUnderClassesThatSplitTheCodePoints) {
    // Classes whose bounds fall inside the multi-byte ranges (U+00E8 splits the characters that
    // start with C3): the mask's table cuts the code points into intervals at those bounds and
    // checks unfinished characters against them.
    std::vector<std::string> pieces = {
        "a",        "z",        "\xC3",         "\xA9",         "\xC3\xA9",
        "\xC3\xBF", "\xC3\xA0", "\xA0",         "\xC4\x80",     "\xCE\xB1",
        "\xCE",     "\xE4\xB8", "\xAD",         "\xE4\xB8\xAD", "\xE2\x82",
        "\xAC",     "\xF0\x9F", "\x98\x80",     "\xF0",         "\xED\xA0",
        "\xE0\x80", "a\xC3",    "a\xE6\x96\x87"};
    TokenTrie trie(pieces);
    auto g = compile(
        "root ::= ([a-z] | [\\u0080-\\u00E8] | [\\u4E00-\\u9FFF] | "
        "[^\\x00-\\u07FF\\u4E00-\\u9FFF])+");
    GrammarState s(g);
    for (const char *text : {"", "a", "\xC3", "\xE4", "\xE4\xB8", "\xF0\x9F", "\xE2"}) {
        GrammarState at = s;
        ASSERT_TRUE(at.accept_bytes(text)) << text;
        expect_mask_matches_each_token(at, trie);
        // Again from the same state: the second mask reads the table the first one built.
        expect_mask_matches_each_token(at, trie);
    }
}

TEST(TokenMask, AChoiceAllowsOnlyTheTokensThatSpellIt) {
    TokenTrie trie({"pos", "neg", "itive", "ative", "p", "positive", "x", "neutral", "i"});
    auto g = compile("root ::= \"positive\" | \"negative\"");
    GrammarState s(g);
    std::vector<uint8_t> mask;
    token_mask(s, trie, mask);
    EXPECT_EQ(mask, (std::vector<uint8_t>{1, 1, 0, 0, 1, 1, 0, 0, 0}));
    ASSERT_TRUE(s.accept_bytes("pos"));
    token_mask(s, trie, mask);
    EXPECT_EQ(mask, (std::vector<uint8_t>{0, 0, 1, 0, 0, 0, 0, 0, 1}));
}

// ---- real vocabularies ---------------------------------------------------------------------

struct Vocabulary {
    const char *name;
    const char *path;  // under tests/data, or a model of the cache (model_cache.h)
    bool cached_model = false;
};

const Vocabulary kVocabularies[] = {
    {"gpt2", "tokenizer/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"},
    {"llama_spm", "tokenizer/llama.cpp-vocab/ggml-vocab-llama-spm.gguf"},
    {"llama3", "tokenizer/generated-vocab/ggml-vocab-llama3.gguf"},
    {"qwen2_5", "tokenizer/generated-vocab/ggml-vocab-qwen2.5.gguf"},
    {"gpt_oss", "tokenizer/generated-vocab/ggml-vocab-gpt-oss.gguf"},
    // Gemma 3's SentencePiece vocabulary (262,144 pieces, byte fallback) has no vocab-only
    // file in tests/data: it is read from the real model scripts/fetch-models caches.
    {"gemma3", "gemma-3-270m-q4_k_m.gguf", true},
};

struct Loaded {
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;
    std::unique_ptr<TokenTrie> trie;
};

// Loaded once per vocabulary for the whole run (the biggest takes a second).
const Loaded *load(const Vocabulary &v) {
    static std::vector<std::pair<std::string, Loaded>> cache;
    for (auto &[name, l] : cache)
        if (name == v.name) return &l;
    std::string path;
    if (v.cached_model) {
        path = cached_model(v.path);
    } else {
        path = test_data_dir() + "/" + v.path;
    }
    if (path.empty()) return nullptr;
    format::GgufFile f(path);
    Loaded l;
    l.tokenizer = std::make_unique<tokenizer::Tokenizer>(tokenizer::load_vocab(f));
    l.trie = std::make_unique<TokenTrie>(TokenTrie::from_tokenizer(*l.tokenizer));
    cache.emplace_back(v.name, std::move(l));
    return &cache.back().second;
}

class RealVocabulary : public ::testing::TestWithParam<Vocabulary> {
  protected:
    void SetUp() override {
        loaded_ = load(GetParam());
        if (!loaded_)
            GTEST_SKIP() << GetParam().path
                         << " is absent (tests/data, or the model cache scripts/fetch-models "
                            "fills): this vocabulary is not checked";
    }
    const Loaded *loaded_ = nullptr;
};

// SentencePiece vocabularies that add a "dummy prefix": the text's first piece starts with a
// space the text has not (or one more than it has).
bool adds_dummy_prefix(const Loaded &l) {
    const tokenizer::Vocab &v = l.tokenizer->vocab();
    return v.model == tokenizer::VocabModel::Spm && v.add_space_prefix;
}

// The text as the tokenizer splits it, fed token by token: each token is allowed alone and in
// the mask, and the grammar is complete at the end.
void feed_tokens(const Loaded &l, const std::shared_ptr<const Grammar> &g, const std::string &text,
                 bool check_masks) {
    std::vector<int32_t> ids = l.tokenizer->encode(text, {});
    GrammarState s(g);
    std::vector<uint8_t> mask;
    std::string so_far;
    for (size_t i = 0; i < ids.size(); ++i) {
        const int32_t id = ids[i];
        const std::string &piece = l.trie->piece(id);
        if (i == 0 && adds_dummy_prefix(l) && !piece.empty() && piece[0] == ' ') {
            // SentencePiece's dummy prefix: a text's first word carries a space the text has
            // not. Generated text continues a prompt and keeps it; this test feeds the text
            // without it.
            ASSERT_TRUE(s.accept_bytes(piece.substr(1))) << text;
            so_far += piece.substr(1);
            continue;
        }
        ASSERT_TRUE(token_allowed(s, *l.trie, id))
            << text << ": after '" << so_far << "', '" << piece << "'";
        if (check_masks) {
            token_mask(s, *l.trie, mask);
            ASSERT_EQ(mask[size_t(id)], 1) << text << ": mask lacks '" << piece << "'";
        }
        ASSERT_TRUE(s.accept_bytes(piece));
        so_far += piece;
    }
    EXPECT_EQ(so_far, text);
    EXPECT_TRUE(s.is_complete()) << text;
}

// Whether the grammar takes the text token by token as the tokenizer splits it, and is
// complete at the end (the dummy-prefix space of SentencePiece dropped as above).
bool takes_tokens(const Loaded &l, const std::shared_ptr<const Grammar> &g,
                  const std::string &text) {
    GrammarState s(g);
    bool first = true;
    for (int32_t id : l.tokenizer->encode(text, {})) {
        std::string piece = l.trie->piece(id);
        if (first && adds_dummy_prefix(l) && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
        first = false;
        if (!s.accept_bytes(piece)) return false;
    }
    return s.is_complete();
}

TEST_P(RealVocabulary, EveryRealisticGrammarTakesItsSentencesTokenByTokenAndRefusesTheRest) {
    for (const auto &c : kGrammarCases) {
        auto g = compile(c.grammar);
        for (const std::string &text : c.accept)
            feed_tokens(*loaded_, g, text, true);
        for (const std::string &text : c.reject)
            EXPECT_FALSE(takes_tokens(*loaded_, g, text)) << c.name << ": '" << text << "'";
    }
}

TEST_P(RealVocabulary, JsonTextsPassTokenByToken) {
    auto g = compile(kJson);
    for (const char *text : {"{\"name\": \"Ada Lovelace\", \"born\": 1815, \"tags\": [\"math\", "
                             "\"poetry\"], \"alive\": false}",
                             "[1, 2.5, -3e10, null, {\"k\": \"caf\xC3\xA9 \xF0\x9F\x98\x80\"}]",
                             "{\"a\":{\"b\":{\"c\":[]}}}"})
        feed_tokens(*loaded_, g, text, true);
}

TEST_P(RealVocabulary, MaskAgreesWithEachTokenAloneInsideAJsonString) {
    auto g = compile(kJson);
    GrammarState s(g);
    ASSERT_TRUE(s.accept_bytes("{\"key\": \"caf"));
    expect_mask_matches_each_token(s, *loaded_->trie);
    ASSERT_TRUE(s.accept_bytes("\xC3"));
    expect_mask_matches_each_token(s, *loaded_->trie);
}

std::string read_test_file(const std::string &name) {
    std::ifstream in(std::string(VKLLM_TEST_DATA_DIR) + "/" + name, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST_P(RealVocabulary, MasksFromAWarmTableEqualMasksFromAnEmptyOne) {
    // The state keeps the mask's configuration table from token to token; a copy of the state
    // starts with an empty one. Along JSON texts, token by token as the tokenizer splits them,
    // both masks agree, and they allow the token that comes next.
    std::string sample = read_test_file("grammar/sample.json");
    ASSERT_FALSE(sample.empty());
    auto g = compile(read_test_file("grammar/json.gbnf"));
    const bool spm = loaded_->tokenizer->vocab().model == tokenizer::VocabModel::Spm;
    for (const std::string &text :
         {sample,
          std::string("[1, 2.5, -3e10, null, {\"k\": \"caf\xC3\xA9 \xF0\x9F\x98\x80\"}]")}) {
        std::vector<int32_t> ids = loaded_->tokenizer->encode(text, {});
        GrammarState warm(g);
        std::vector<uint8_t> warm_mask, cold_mask;
        for (size_t i = 0; i < ids.size(); ++i) {
            std::string piece = loaded_->trie->piece(ids[i]);
            if (i == 0 && spm && piece[0] == ' ' && text[0] != ' ') {
                piece.erase(0, 1);  // SentencePiece's dummy prefix, as in feed_tokens
            } else {
                MaskStats warm_stats = token_mask(warm, *loaded_->trie, warm_mask);
                GrammarState cold = warm;
                MaskStats cold_stats = token_mask(cold, *loaded_->trie, cold_mask);
                ASSERT_EQ(warm_mask, cold_mask) << "before token " << i << " '" << piece << "'";
                EXPECT_EQ(warm_stats.allowed, cold_stats.allowed);
                EXPECT_EQ(warm_stats.nodes_visited, cold_stats.nodes_visited);
                ASSERT_EQ(warm_mask[size_t(ids[i])], 1) << "token " << i << " '" << piece << "'";
            }
            ASSERT_TRUE(warm.accept_bytes(piece)) << "token " << i << " '" << piece << "'";
        }
        EXPECT_TRUE(warm.is_complete());
    }
}

TEST_P(RealVocabulary, RandomSamplingUnderAGrammarAlwaysEndsInASentence) {
    // Uniform choices among the allowed tokens stand for random logits; at a complete state the
    // sampler may pick the end (here: one chance in three), and must when nothing else fits.
    const char *grammars[] = {
        "root ::= \"positive\" | \"negative\" | \"neutral\" | \"mixed feelings\"",
        "root ::= [0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" (\"0\" [1-9] | [12] [0-9] | "
        "\"3\" [01])",
        "root ::= \"{\\\"ok\\\": \" (\"true\" | \"false\") \", \\\"n\\\": \" [1-9] [0-9]{0,3} "
        "\"}\"",
    };
    std::mt19937 rng(27);
    std::vector<uint8_t> mask;
    for (const char *text : grammars) {
        auto g = compile(text);
        for (int sample = 0; sample < 40; ++sample) {
            GrammarState s(g);
            std::string out;
            for (int step = 0; step < 64; ++step) {
                token_mask(s, *loaded_->trie, mask);
                std::vector<int32_t> allowed;
                for (size_t id = 0; id < mask.size(); ++id)
                    if (mask[id]) allowed.push_back(int32_t(id));
                if (s.is_complete() && (allowed.empty() || rng() % 3 == 0)) break;
                ASSERT_FALSE(allowed.empty()) << text << " stuck after '" << out << "'";
                int32_t id = allowed[rng() % allowed.size()];
                ASSERT_TRUE(s.accept_bytes(loaded_->trie->piece(id)));
                out += loaded_->trie->piece(id);
            }
            EXPECT_TRUE(s.is_complete()) << out;
            EXPECT_TRUE(matches(g, out)) << out;
        }
    }
}

TEST_P(RealVocabulary, ReportsWhatAMaskCosts) {
    // Figures for the design, printed, never asserted: the nodes a mask visits and its time in
    // the cheapest place (a choice, where the first byte prunes nearly everything) and the
    // dearest (inside a JSON string, where nearly every token fits).
    auto json = compile(kJson);
    GrammarState in_string(json);
    ASSERT_TRUE(in_string.accept_bytes("{\"key\": \"va"));
    std::string labels = "root ::= \"label-0\"";
    for (int i = 1; i < 200; ++i)
        labels += " | \"label-" + std::to_string(i) + "\"";
    GrammarState choice(compile(labels));
    std::vector<uint8_t> mask;
    for (auto [what, state] : {std::pair<const char *, GrammarState *>{"json string", &in_string},
                               {"200 labels", &choice}}) {
        auto start = std::chrono::steady_clock::now();
        MaskStats stats = token_mask(*state, *loaded_->trie, mask);
        double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        std::printf("%s, %s: %zu tokens, %zu trie nodes (%zu visited), %zu allowed, %.2f ms\n",
                    GetParam().name, what, loaded_->trie->vocab_size(),
                    loaded_->trie->nodes().size(), stats.nodes_visited, stats.allowed, ms);
    }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, RealVocabulary, ::testing::ValuesIn(kVocabularies),
                         [](const ::testing::TestParamInfo<Vocabulary> &param) {
                             return std::string(param.param.name);
                         });

}  // namespace
}  // namespace vkllm::grammar
