// The float64 BERT reference (reference/bert_forward.h) and the tiny bert models it runs on
// (reference/tiny_model.h): the file the writer makes reads back key by key and tensor by tensor,
// the reference's embeddings agree with llama.cpp's embedding context on the same files
// (tests/data/llamacpp_embed_tiny.json, made by tools/llamacpp_reference/tiny_embed.mjs) for
// every pooling type, and batching, padding and pooling behave as their definitions say.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>

#include "format/gguf.h"
#include "json.h"
#include "reference/bert_forward.h"
#include "reference/tiny_archs.h"

namespace {

using vkllm::format::GgufFile;
using vkllm::format::TensorInfo;

// The bound, for every GELU form. llama.cpp runs F32 weights in F32 (flash attention off,
// see tiny_embed.mjs) with a tanh GELU read from a table of F16 inputs and outputs: directions
// agree far inside it.
constexpr double kMinCosine = 0.99999;
// With that table's GELU (Gelu::tanh_f16_table) what is left is F32 summation and the table's
// rounding of rows the reference does not round alike: 3.1e-4 at most on these vectors, whose
// entries reach ~2.5 (the erf and the exact tanh GELU leave 1.3e-3 and 1.2e-3).
constexpr double kMaxTableDifference = 5e-4;

class TempFile {
  public:
    explicit TempFile(const std::string &name)
        : path_(::testing::TempDir() + "vkllm_" + name + "_" + std::to_string(::getpid()) +
                ".gguf") {}
    ~TempFile() { std::remove(path_.c_str()); }
    const std::string &path() const { return path_; }

  private:
    std::string path_;
};

std::string read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string fnv1a64(const std::string &path) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : read_bytes(path))
        h = (h ^ uint8_t(c)) * 0x100000001b3ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    return hex;
}

const TinyArch &embed_arch(const std::string &name) {
    for (const TinyArch &a : tiny_embed_archs())
        if (a.name == name) return a;
    throw std::runtime_error("no tiny embedding model " + name);
}

std::unique_ptr<ref::ModelRef> load_tiny(const std::string &name) {
    TempFile f(name);
    write_tiny_model(f.path(), embed_arch(name).spec);
    return ref::load_model_ref(f.path());
}

std::vector<int32_t> sequence(size_t n, uint32_t vocab, uint32_t seed) {
    std::vector<int32_t> t = {kBertCls};
    uint32_t s = seed;
    while (t.size() + 1 < n) {
        s = s * 1664525u + 1013904223u;
        t.push_back(int32_t(kBertMask + 1 + (s >> 8) % (vocab - kBertMask - 1)));
    }
    t.push_back(kBertSep);
    return t;
}

double max_abs_diff(const ref::Rows &a, const ref::Rows &b) {
    EXPECT_EQ(a.size(), b.size());
    double d = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        for (size_t c = 0; c < a[i].size(); ++c)
            d = std::max(d, std::abs(a[i][c] - b[i][c]));
    return d;
}

}  // namespace

TEST(ReferenceBert, WrittenFileReadsBackEveryTensorAndKey) {
    const TinyModelSpec &spec = embed_arch("bert-cls").spec;
    TempFile tmp("bert_keys");
    write_tiny_model(tmp.path(), spec);
    GgufFile f(tmp.path());
    EXPECT_EQ(f.get_string("general.architecture").value_or(""), "bert");
    const std::map<std::string, int64_t> ints = {
        {"bert.context_length", spec.n_ctx},
        {"bert.embedding_length", spec.n_embd},
        {"bert.feed_forward_length", spec.n_ff},
        {"bert.block_count", spec.n_layer},
        {"bert.attention.head_count", spec.n_head},
        {"bert.pooling_type", 2},
        {"tokenizer.ggml.token_type_count", 2},
        {"tokenizer.ggml.bos_token_id", kBertCls},
        {"tokenizer.ggml.cls_token_id", kBertCls},
        {"tokenizer.ggml.seperator_token_id", kBertSep},
        {"tokenizer.ggml.unknown_token_id", kBertUnk},
        {"tokenizer.ggml.padding_token_id", kBertPad},
        {"tokenizer.ggml.mask_token_id", kBertMask},
    };
    for (const auto &[key, value] : ints)
        EXPECT_EQ(f.get_int(key), std::optional<int64_t>(value)) << key;
    EXPECT_FALSE(f.get_int("bert.attention.head_count_kv").has_value());
    EXPECT_EQ(f.get_float("bert.attention.layer_norm_epsilon"), double(1e-12f));
    EXPECT_EQ(f.get_bool("bert.attention.causal"), std::optional<bool>(false));
    EXPECT_EQ(f.get_string("tokenizer.ggml.model").value_or(""), "bert");
    std::vector<std::string_view> tokens = f.get_string_array("tokenizer.ggml.tokens");
    std::vector<std::string> expected = tiny_wordpiece_vocab(spec.n_vocab);
    ASSERT_EQ(tokens.size(), expected.size());
    for (size_t i = 0; i < tokens.size(); ++i)
        EXPECT_EQ(tokens[i], expected[i]);
    EXPECT_EQ(expected[kBertCls], "[CLS]");
    EXPECT_EQ(expected[kBertMask + 1],
              "\xe2\x96\x81"
              "a");                            // a word-start piece
    EXPECT_EQ(expected[kBertMask + 27], "a");  // a continuation piece

    // Every tensor llama.cpp's LLM_ARCH_BERT loads, with its shape ([cols, rows]), and no other.
    const uint64_t d = spec.n_embd, ff = spec.n_ff;
    std::map<std::string, std::vector<uint64_t>> shapes = {
        {"token_embd.weight", {d, spec.n_vocab}},
        {"token_types.weight", {d, 2}},
        {"position_embd.weight", {d, spec.n_ctx}},
        {"token_embd_norm.weight", {d}},
        {"token_embd_norm.bias", {d}},
    };
    for (uint32_t i = 0; i < spec.n_layer; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        for (const char *m : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
            shapes[b + m + ".weight"] = {d, d};
            shapes[b + m + ".bias"] = {d};
        }
        for (const char *n : {"attn_output_norm", "layer_output_norm"}) {
            shapes[b + n + ".weight"] = {d};
            shapes[b + n + ".bias"] = {d};
        }
        shapes[b + "ffn_up.weight"] = {d, ff};
        shapes[b + "ffn_up.bias"] = {ff};
        shapes[b + "ffn_down.weight"] = {ff, d};
        shapes[b + "ffn_down.bias"] = {d};
    }
    ASSERT_EQ(f.tensors().size(), shapes.size());
    for (const auto &[name, dims] : shapes) {
        const TensorInfo *t = f.find_tensor(name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->type->id, 0u) << name;  // F32
        ASSERT_EQ(t->n_dims, dims.size()) << name;
        for (size_t k = 0; k < dims.size(); ++k)
            EXPECT_EQ(t->dims[k], dims[k]) << name;
    }

    std::unique_ptr<ref::ModelRef> m = ref::load_model_ref(tmp.path());
    EXPECT_TRUE(m->bert);
    EXPECT_EQ(m->pooling_type, 2u);
    EXPECT_EQ(m->n_head_kv, m->n_head);
    EXPECT_EQ(m->head_dim, spec.n_embd / spec.n_head);
    EXPECT_EQ(m->norm_eps, double(1e-12f));
    EXPECT_EQ(m->token_types.rows, 2u);
    ASSERT_EQ(m->layers.size(), spec.n_layer);
    // Biases and norms hold values, not zeros and ones, so a kernel that dropped one would show.
    EXPECT_NE(m->layers[1].bo[0], 0.0);
    EXPECT_NE(m->layers[1].post_ffn_norm_b[3], 0.0);
    EXPECT_NE(m->layers[1].post_attn_norm[5], 1.0);
}

TEST(ReferenceBert, WriterIsDeterministicAndPoolingTypeOnlyChangesOneKey) {
    TempFile a("bert_a"), b("bert_b"), c("bert_c");
    write_tiny_model(a.path(), embed_arch("bert-mean").spec);
    write_tiny_model(b.path(), embed_arch("bert-mean").spec);
    write_tiny_model(c.path(), embed_arch("bert-last").spec);
    EXPECT_EQ(read_bytes(a.path()), read_bytes(b.path()));
    std::string x = read_bytes(a.path()), y = read_bytes(c.path());
    ASSERT_EQ(x.size(), y.size());
    size_t differing = 0;
    for (size_t i = 0; i < x.size(); ++i)
        differing += x[i] != y[i];
    EXPECT_EQ(differing, 1u);  // the pooling_type value's low byte
}

TEST(ReferenceBert, BadSpecsAndInputsAreRefused) {
    TinyModelSpec spec = embed_arch("bert-mean").spec;
    TempFile tmp("bert_bad");
    spec.n_head_kv = 2;  // BERT has no grouped-query attention
    EXPECT_THROW(write_tiny_model(tmp.path(), spec), std::runtime_error);
    spec = embed_arch("bert-mean").spec;
    spec.pooling_type = 5;
    EXPECT_THROW(write_tiny_model(tmp.path(), spec), std::runtime_error);

    std::unique_ptr<ref::ModelRef> m = load_tiny("bert-mean");
    EXPECT_THROW(ref::bert_hidden_states(*m, {{}}), std::invalid_argument);
    EXPECT_THROW(ref::bert_hidden_states(*m, {std::vector<int32_t>(m->n_ctx_train + 1, 5)}),
                 std::invalid_argument);
    EXPECT_THROW(ref::bert_hidden_states(*m, {{kBertCls, int32_t(m->n_vocab), kBertSep}}),
                 std::invalid_argument);
    EXPECT_THROW(
        ref::bert_hidden_states(*m, {{kBertCls, kBertSep}}, ref::Gelu::erf, m->n_ctx_train + 1),
        std::invalid_argument);
    EXPECT_NO_THROW(ref::bert_hidden_states(*m, {std::vector<int32_t>(m->n_ctx_train, 5)}));
}

// llama.cpp's embedding context on the same files: per pooling type, per sequence, the
// reference's vector points the same way as llama.cpp's (llama.cpp returns unnormalized vectors;
// pooling none gives the last token's hidden state), with any GELU; with llama.cpp's own (the tanh
// form from an F16 table), element by element too, and closer than with BERT's erf form.
TEST(ReferenceBert, EmbeddingsMatchLlamaCppForEveryPoolingType) {
    const Json ref_json =
        Json::load(std::string(VKLLM_TEST_DATA_DIR) + "/llamacpp_embed_tiny.json");
    const ref::Gelu forms[3] = {ref::Gelu::erf, ref::Gelu::tanh, ref::Gelu::tanh_f16_table};
    const char *form_names[3] = {"erf", "tanh", "tanh F16 table"};
    std::set<std::string> seen;
    for (const Json &entry : ref_json["models"].arr) {
        const std::string name = entry["name"].str;
        const TinyArch &arch = embed_arch(name);
        TempFile tmp(name);
        write_tiny_model(tmp.path(), arch.spec);
        ASSERT_EQ(fnv1a64(tmp.path()), entry["fnv1a64"].str)
            << "the tiny " << name << " model changed since llama.cpp's reference was made: "
            << "regenerate it (" << ref_json["generated_by"].str << ")";
        std::unique_ptr<ref::ModelRef> m = ref::load_model_ref(tmp.path());
        ASSERT_EQ(m->pooling_type, uint32_t(entry["pooling_type"].num));
        auto pooling = ref::Pooling(m->pooling_type);
        double worst[3] = {1, 1, 1}, worst_diff[3] = {0, 0, 0};
        for (const Json &s : entry["sequences"].arr) {
            std::vector<int32_t> ids = s["ids"].ints();
            std::vector<double> expected;
            for (const Json &v : s["embedding"].arr)
                expected.push_back(v.num);
            ASSERT_EQ(expected.size(), m->n_embd);
            for (int g = 0; g < 3; ++g) {
                ref::Rows rows = ref::bert_embed(*m, {ids}, pooling, false, forms[g])[0];
                double c = ref::cosine(rows.back(), expected);
                double diff = max_abs_diff({rows.back()}, {expected});
                worst[g] = std::min(worst[g], c);
                worst_diff[g] = std::max(worst_diff[g], diff);
                EXPECT_GE(c, kMinCosine)
                    << name << " ids of " << ids.size() << ", GELU " << form_names[g];
                if (forms[g] == ref::Gelu::tanh_f16_table) {
                    EXPECT_LE(diff, kMaxTableDifference) << name << " ids of " << ids.size();
                }
            }
        }
        for (int g = 0; g < 3; ++g)
            std::printf("%s, GELU %s: lowest cosine with llama.cpp %.9f, largest difference %.2e\n",
                        name.c_str(), form_names[g], worst[g], worst_diff[g]);
        EXPECT_LT(worst_diff[2], worst_diff[0]) << name << ": llama.cpp's GELU is its table's";
        seen.insert(name);
    }
    EXPECT_EQ(seen.size(), tiny_embed_archs().size()) << "a tiny model with no llama.cpp reference";
}

// Each sequence attends only to itself: packing sequences of different lengths into one batch,
// in any order, and padding them to a common length give each the rows it gets alone.
TEST(ReferenceBert, BatchingOrderAndPaddingDoNotChangeASequence) {
    std::unique_ptr<ref::ModelRef> m = load_tiny("bert-none");
    std::vector<std::vector<int32_t>> seqs = {
        sequence(7, m->n_vocab, 1), sequence(2, m->n_vocab, 2), sequence(19, m->n_vocab, 3)};
    std::vector<ref::Rows> alone;
    for (const auto &s : seqs)
        alone.push_back(ref::bert_hidden_states(*m, {s})[0]);
    std::vector<ref::Rows> batch = ref::bert_hidden_states(*m, seqs);
    std::vector<ref::Rows> reversed = ref::bert_hidden_states(*m, {seqs[2], seqs[1], seqs[0]});
    std::vector<ref::Rows> padded = ref::bert_hidden_states(*m, seqs, ref::Gelu::erf, 24, kBertPad);
    std::vector<ref::Rows> padded_other =
        ref::bert_hidden_states(*m, seqs, ref::Gelu::erf, 20, kBertMask);
    for (size_t i = 0; i < seqs.size(); ++i) {
        ASSERT_EQ(alone[i].size(), seqs[i].size());
        EXPECT_LE(max_abs_diff(batch[i], alone[i]), 1e-12) << i;
        EXPECT_LE(max_abs_diff(reversed[2 - i], alone[i]), 1e-12) << i;
        EXPECT_LE(max_abs_diff(padded[i], alone[i]), 1e-12) << i;
        EXPECT_LE(max_abs_diff(padded_other[i], alone[i]), 1e-12) << i;
    }
}

// No causal mask: the last token changes the first token's hidden state.
TEST(ReferenceBert, AttentionIsBidirectional) {
    std::unique_ptr<ref::ModelRef> m = load_tiny("bert-none");
    std::vector<int32_t> a = sequence(9, m->n_vocab, 5), b = a;
    b[7] = b[7] == 40 ? 41 : 40;
    ref::Rows ha = ref::bert_hidden_states(*m, {a})[0], hb = ref::bert_hidden_states(*m, {b})[0];
    EXPECT_GT(max_abs_diff({ha[0]}, {hb[0]}), 1e-3);
}

TEST(ReferenceBert, PoolingsAreTheirDefinitions) {
    std::unique_ptr<ref::ModelRef> m = load_tiny("bert-none");
    std::vector<int32_t> s = sequence(11, m->n_vocab, 9);
    ref::Rows none = ref::bert_embed(*m, {s}, ref::Pooling::none, false)[0];
    ASSERT_EQ(none.size(), s.size());
    std::vector<double> mean(m->n_embd);
    for (const auto &r : none)
        for (size_t c = 0; c < mean.size(); ++c)
            mean[c] += r[c] / double(none.size());
    ref::Rows pooled_mean = ref::bert_embed(*m, {s}, ref::Pooling::mean, false)[0];
    ASSERT_EQ(pooled_mean.size(), 1u);
    EXPECT_LE(max_abs_diff(pooled_mean, {mean}), 1e-12);
    EXPECT_LE(max_abs_diff(ref::bert_embed(*m, {s}, ref::Pooling::cls, false)[0], {none.front()}),
              0.0);
    EXPECT_LE(max_abs_diff(ref::bert_embed(*m, {s}, ref::Pooling::last, false)[0], {none.back()}),
              0.0);
    for (auto p : {ref::Pooling::none, ref::Pooling::mean, ref::Pooling::cls, ref::Pooling::last}) {
        ref::Rows rows = ref::bert_embed(*m, {s}, p, true)[0];
        for (const auto &r : rows) {
            double ss = 0;
            for (double v : r)
                ss += v * v;
            EXPECT_NEAR(std::sqrt(ss), 1.0, 1e-12);
        }
    }
    ref::Rows normalized = ref::bert_embed(*m, {s}, ref::Pooling::mean, true)[0];
    EXPECT_NEAR(ref::cosine(normalized[0], mean), 1.0, 1e-12);
}

// Half-precision matrices (norms and biases stay F32) read back widened exactly, and move the
// embedding by no more than F16 rounding does.
TEST(ReferenceBert, HalfPrecisionWeightsTrackTheF32Model) {
    TinyModelSpec spec = embed_arch("bert-mean").spec;
    spec.weight_type = 1;  // F16
    TempFile tmp("bert_f16");
    write_tiny_model(tmp.path(), spec);
    GgufFile f(tmp.path());
    EXPECT_EQ(f.find_tensor("blk.0.ffn_up.weight")->type->id, 1u);
    EXPECT_EQ(f.find_tensor("blk.0.ffn_up.bias")->type->id, 0u);
    EXPECT_EQ(f.find_tensor("token_embd_norm.weight")->type->id, 0u);
    std::unique_ptr<ref::ModelRef> half = ref::load_model_ref(tmp.path());
    std::unique_ptr<ref::ModelRef> full = load_tiny("bert-mean");
    std::vector<int32_t> s = sequence(13, full->n_vocab, 4);
    std::vector<double> a = ref::bert_embed(*half, {s}, ref::Pooling::mean, true)[0][0];
    std::vector<double> b = ref::bert_embed(*full, {s}, ref::Pooling::mean, true)[0][0];
    double c = ref::cosine(a, b);
    EXPECT_GT(c, 0.9999);
    EXPECT_LT(c, 1.0);  // the weights did change
}
