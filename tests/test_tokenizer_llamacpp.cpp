// vkllm's tokenizer against llama.cpp's on the whole tokenizer corpus (the 107 strings of
// tests/data/tokenizer/reference-corpus.json and those of
// tests/data/tokenizer_corpus.json): the ids llama.cpp (node-llama-cpp 3.22.1) gives for the real
// SmolLM2 and Gemma 3 vocabularies, special-token parsing off and on, and for every
// tokenizer.ggml.pre name with two real BPE vocabularies. The data files come from
// tools/llamacpp_reference/tokenize.mjs; each says the command that wrote it. Every string must
// match exactly, unless the table of known differences below says why not.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "format/gguf.h"
#include "json.h"
#include "model_cache.h"
#include "test_data.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/tokenizer.h"

using vkllm::tokenizer::EncodeOptions;
using vkllm::tokenizer::Tokenizer;
using vkllm::tokenizer::Vocab;

namespace {

const std::string kData = VKLLM_TEST_DATA_DIR;

// Where vkllm follows the model's own tokenizer and llama.cpp does not: (name, index into the
// corpus, why). The string is then not compared with llama.cpp for that name; each is an input
// of tests/data/pretokenize_golden.json, where Python's `regex` module, running the model's
// own pattern on each piece as the Hugging Face tokenizers do, gives vkllm's split.
struct KnownDifference {
    const char *name;
    size_t index;
    const char *reason;
};
const char kMarks[] =
    "llama.cpp's rewrite of the pattern for std::regex leaves combining marks (\\p{M}) out of "
    "the letter runs, so it splits Devanagari words";
const char kPieces[] =
    "llama.cpp's lookaheads and \\b look past the piece an earlier regex cut (spaces before a "
    "digit, digits before a Han character), where Hugging Face matches each piece alone";
const char kCase[] =
    "llama.cpp's std::regex does not honour \\p{Lu}/\\p{Ll} here, so 0xDEAD does not split at "
    "the case change";
const std::vector<KnownDifference> kKnownDifferences = {
    {"gpt-4o", 117, kMarks},      {"llama4", 117, kMarks},      {"kanana2", 117, kMarks},
    {"talkie", 117, kMarks},      {"minimax-m2", 117, kMarks},  {"tekken", 117, kMarks},
    {"kimi-k2", 117, kMarks},     {"kimi-k2", 179, kCase},      {"youtu", 179, kCase},
    {"afmoe", 42, kPieces},       {"tiny_aya", 42, kPieces},    {"tiny_aya", 63, kPieces},
    {"tiny_aya", 107, kPieces},   {"tiny_aya", 179, kPieces},   {"tiny_aya", 290, kPieces},
    {"tiny_aya", 292, kPieces},   {"tiny_aya", 295, kPieces},   {"tiny_aya", 297, kPieces},
    {"tiny_aya", 301, kPieces},   {"tiny_aya", 303, kPieces},   {"cohere2moe", 42, kPieces},
    {"cohere2moe", 63, kPieces},  {"cohere2moe", 107, kPieces}, {"cohere2moe", 179, kPieces},
    {"cohere2moe", 290, kPieces}, {"cohere2moe", 292, kPieces}, {"cohere2moe", 295, kPieces},
    {"cohere2moe", 297, kPieces}, {"cohere2moe", 301, kPieces}, {"cohere2moe", 303, kPieces},
};

// The same for the real models' vocabularies: (label, text, why), with special parsing off.
struct KnownModelDifference {
    const char *label;
    const char *text;
    const char *reason;
};
const KnownModelDifference kKnownModelDifferences[] = {
    {"gemma3", "<s> [INST] hello [/INST] </s>",
     "</s> is a user-defined token (212) in Gemma's file, which SentencePiece always matches; "
     "llama.cpp's end-of-generation list makes it a control token"},
};

using Ids = std::vector<int32_t>;

std::string ids_text(const Ids &ids) {
    std::string s = "[";
    for (size_t i = 0; i < ids.size(); ++i)
        s += (i ? " " : "") + std::to_string(ids[i]);
    return s + "]";
}

// The text with its invisible characters spelled out, for failure messages.
std::string shown(const std::string &text) {
    std::string s = "\"";
    for (unsigned char c : text) {
        if (c == '\n')
            s += "\\n";
        else if (c == '\r')
            s += "\\r";
        else if (c == '\t')
            s += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            s += buf;
        } else
            s += char(c);
    }
    return s + "\"";
}

Vocab load_vocab(const std::string &path) {
    vkllm::format::GgufFile file(path);
    return vkllm::tokenizer::load_vocab(file);
}

// Compares one encoding; a mismatch is a failure that shows the string and both id lists.
struct Tally {
    size_t compared = 0, mismatched = 0;

    void check(const Tokenizer &tok, const std::string &text, const Ids &want,
               EncodeOptions options, const std::string &what) {
        Ids got = tok.encode(text, options);
        ++compared;
        if (got == want) return;
        ++mismatched;
        ADD_FAILURE() << what << " " << shown(text) << "\n  llama.cpp " << ids_text(want)
                      << "\n  vkllm     " << ids_text(got);
    }
};

// The real models' vocabularies: llamacpp_tokenize_<label>.json has every string's ids with
// special-token parsing off (ids) and on (ids_special).
void check_model(const char *label, const char *model_file) {
    std::string path = cached_model(model_file);
    if (path.empty())
        GTEST_SKIP() << model_file << " is not in " << model_cache_dir()
                     << " (scripts/fetch-models downloads it)";
    Json ref = Json::load(kData + "/llamacpp_tokenize_" + label + ".json");
    ASSERT_EQ(ref["model"]["file"].str, model_file);
    Tokenizer tok(load_vocab(path));
    Tally plain, special;
    for (const Json &c : ref["cases"].arr) {
        const char *known = nullptr;
        for (const KnownModelDifference &d : kKnownModelDifferences)
            if (d.label == std::string(label) && d.text == c["text"].str) known = d.reason;
        if (known)
            std::printf("%s: %s not compared with special parsing off: %s\n", label,
                        shown(c["text"].str).c_str(), known);
        else
            plain.check(tok, c["text"].str, c["ids"].ints(), EncodeOptions{false, false},
                        std::string(label) + " (parse_special off)");
        special.check(tok, c["text"].str, c["ids_special"].ints(), EncodeOptions{false, true},
                      std::string(label) + " (parse_special on)");
    }
    std::printf("%s: %zu strings; parse_special off: %zu mismatches, on: %zu mismatches\n", label,
                plain.compared, plain.mismatched, special.mismatched);
    EXPECT_GE(plain.compared, 300u);
}

TEST(TokenizerLlamaCpp, SmolLM2MatchesLlamaCppOnTheWholeCorpus) {
    check_model("smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf");
}

TEST(TokenizerLlamaCpp, Gemma3MatchesLlamaCppOnTheWholeCorpus) {
    check_model("gemma3", "gemma-3-270m-q4_k_m.gguf");
}

// llamacpp_pretokenizers.json, parsed once into plain vectors (the file holds a few million
// ids; Json nodes for all of them would be large).
struct PretokenizerReference {
    std::vector<std::string> strings;
    std::vector<std::string> vocab_labels;
    std::set<std::string> nfc_names;
    std::map<size_t, size_t> nfc_slot;  // corpus index -> position in ids_nfc
    // By vocabulary label; none where llama.cpp aborts on the string under these names.
    struct Group {
        std::map<std::string, std::vector<std::optional<Ids>>> ids, ids_nfc;
    };
    std::vector<Group> groups;
    std::map<std::string, size_t> group_of;  // name -> group
    std::vector<std::string> names;          // in file order

    static const PretokenizerReference &get() {
        static const PretokenizerReference ref = load();
        return ref;
    }

  private:
    static std::vector<std::optional<Ids>> lists(const Json &j) {
        std::vector<std::optional<Ids>> out;
        for (const Json &l : j.arr)
            out.push_back(l.kind == Json::Null ? std::nullopt : std::optional<Ids>(l.ints()));
        return out;
    }
    static PretokenizerReference load() {
        Json j = Json::load(kData + "/llamacpp_pretokenizers.json");
        PretokenizerReference r;
        for (const Json &s : j["strings"].arr)
            r.strings.push_back(s.str);
        for (const auto &v : j["vocabularies"].obj)
            r.vocab_labels.push_back(v.first);
        for (const Json &n : j["nfc"]["names"].arr)
            r.nfc_names.insert(n.str);
        const std::vector<Json> &nfc = j["nfc_strings"].arr;
        for (size_t k = 0; k < nfc.size(); ++k)
            r.nfc_slot[size_t(nfc[k].arr.at(0).num)] = k;
        for (const Json &g : j["groups"].arr) {
            Group group;
            for (const auto &v : g["ids"].obj)
                group.ids[v.first] = lists(v.second);
            for (const auto &v : g["ids_nfc"].obj)
                group.ids_nfc[v.first] = lists(v.second);
            for (const Json &n : g["names"].arr) {
                r.group_of[n.str] = r.groups.size();
                r.names.push_back(n.str);
            }
            r.groups.push_back(std::move(group));
        }
        return r;
    }
};

// The BPE vocabularies the names are tried with, loaded once each; "" when absent.
const Vocab *reference_vocab(const std::string &label, std::string &missing) {
    static std::map<std::string, std::unique_ptr<Vocab>> cache;
    std::string path;
    if (label == "smollm2") {
        path = cached_model("SmolLM2-135M-Instruct.Q4_1.gguf");
        if (path.empty()) missing = "SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-models)";
    } else if (label == "llama3") {
        path = test_data_dir() + "/tokenizer/generated-vocab/ggml-vocab-llama3.gguf";
    } else {
        missing = "an unknown vocabulary label " + label;
    }
    if (path.empty()) return nullptr;
    auto &slot = cache[label];
    if (!slot) slot = std::make_unique<Vocab>(load_vocab(path));
    return slot.get();
}

class PretokenizerMatchesLlamaCpp : public ::testing::TestWithParam<std::string> {};

TEST_P(PretokenizerMatchesLlamaCpp, OnBothVocabularies) {
    const std::string &name = GetParam();
    const PretokenizerReference &ref = PretokenizerReference::get();
    const PretokenizerReference::Group &group = ref.groups[ref.group_of.at(name)];
    std::map<size_t, const char *> known;
    for (const KnownDifference &d : kKnownDifferences)
        if (name == d.name) known[d.index] = d.reason;
    // vkllm's own rules say which names normalise; llama.cpp's ids for the normalised text are
    // then the reference.
    const vkllm::tokenizer::PreTokenizerRules *rules = vkllm::tokenizer::find_pretokenizer(name);
    ASSERT_NE(rules, nullptr) << "vkllm does not know " << name;
    bool nfc = rules->has(vkllm::tokenizer::kNfc);
    ASSERT_TRUE(!nfc || ref.nfc_names.count(name)) << "no NFC reference for " << name;
    size_t compared = 0, mismatched = 0, aborted = 0, skipped_vocabs = 0;
    for (const std::string &label : ref.vocab_labels) {
        std::string missing;
        const Vocab *base = reference_vocab(label, missing);
        if (!base) {
            std::printf("%s: %s vocabulary skipped: %s is not here\n", name.c_str(), label.c_str(),
                        missing.c_str());
            ++skipped_vocabs;
            continue;
        }
        Vocab vocab = *base;
        vocab.pre = name;
        std::unique_ptr<Tokenizer> tok;
        try {
            tok = std::make_unique<Tokenizer>(std::move(vocab));
        } catch (const vkllm::Error &e) {
            ADD_FAILURE() << "vkllm refuses pre-tokenizer " << name
                          << ", llama.cpp accepts it: " << e.what();
            return;
        }
        Tally tally;
        const auto &ids = group.ids.at(label);
        const auto &ids_nfc = group.ids_nfc.at(label);
        ASSERT_EQ(ids.size(), ref.strings.size());
        for (size_t i = 0; i < ref.strings.size(); ++i) {
            if (auto k = known.find(i); k != known.end()) {
                std::printf("%s: string %zu not compared: %s\n", name.c_str(), i, k->second);
                continue;
            }
            auto slot = ref.nfc_slot.find(i);
            const std::optional<Ids> &want =
                nfc && slot != ref.nfc_slot.end() ? ids_nfc.at(slot->second) : ids[i];
            if (!want) {
                ++aborted;
                continue;
            }
            tally.check(*tok, ref.strings[i], *want, EncodeOptions{false, false},
                        name + " on " + label + " vocab, string " + std::to_string(i));
        }
        compared += tally.compared;
        mismatched += tally.mismatched;
    }
    // Strings on which llama.cpp aborts under this name have no reference to compare with.
    std::printf("%s: %zu encodings compared, %zu mismatches, %zu not compared (llama.cpp aborts)\n",
                name.c_str(), compared, mismatched, aborted);
    if (skipped_vocabs == ref.vocab_labels.size()) GTEST_SKIP() << "no vocabulary is here";
}

// gtest names allow letters, digits and '_' only ("a.x-4.0" -> "a_x_4_0").
std::string test_name(const ::testing::TestParamInfo<std::string> &info) {
    std::string s = info.param;
    for (char &c : s)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
}

INSTANTIATE_TEST_SUITE_P(EveryNameLlamaCppAccepts, PretokenizerMatchesLlamaCpp,
                         ::testing::ValuesIn(PretokenizerReference::get().names), test_name);

// "" when the data file's strings are the corpus, else where they part.
std::string difference(const std::vector<std::string> &data,
                       const std::vector<std::string> &corpus) {
    for (size_t i = 0; i < data.size() && i < corpus.size(); ++i)
        if (data[i] != corpus[i])
            return "string " + std::to_string(i) + ": " + shown(data[i]) + " in the data, " +
                   shown(corpus[i]) + " in the corpus";
    if (data.size() != corpus.size())
        return std::to_string(data.size()) + " strings in the data, " +
               std::to_string(corpus.size()) + " in the corpus";
    return "";
}

// The data files were written from the corpus as it is now: a string added to (or changed in)
// tokenizer_corpus.json needs tokenize.mjs to be run again.
TEST(TokenizerLlamaCpp, ReferenceDataIsForTheCurrentCorpus) {
    std::string dir = test_data_dir();
    Json shared = Json::load(dir + "/tokenizer/reference-corpus.json");
    Json ours = Json::load(kData + "/tokenizer_corpus.json");
    std::vector<std::string> corpus;
    for (const Json &s : shared.arr)
        corpus.push_back(s.str);
    for (const Json &s : ours["strings"].arr)
        corpus.push_back(s.str);
    EXPECT_GE(corpus.size(), 300u);
    EXPECT_EQ(difference(PretokenizerReference::get().strings, corpus), "")
        << "llamacpp_pretokenizers.json";
    for (const char *label : {"smollm2", "gemma3"}) {
        Json ref = Json::load(kData + "/llamacpp_tokenize_" + label + ".json");
        std::vector<std::string> texts;
        for (const Json &c : ref["cases"].arr)
            texts.push_back(c["text"].str);
        EXPECT_EQ(difference(texts, corpus), "") << "llamacpp_tokenize_" << label << ".json";
    }
}

}  // namespace
