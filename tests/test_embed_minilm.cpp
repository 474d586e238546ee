// all-MiniLM-L6-v2 (scripts/fetch-models minilm converts it): vkllm's tokens and embeddings of
// 50 sentences against the float64 numpy forward pass on its model.safetensors
// (tests/data/embeddings/minilm_f64.json, tools/embeddings_reference.py) and against llama.cpp
// on the same GGUF (llamacpp_minilm.json, where llama.cpp's tokens are the reference's), and its
// top-1 passages of a retrieval set against the reference's.
#include <gtest/gtest.h>

#include <algorithm>

#include "api/objects.h"
#include "engine/embed.h"
#include "engine_fixture.h"
#include "json.h"
#include "model_cache.h"
#include "reference/bert_forward.h"
#include "test_data.h"

namespace {

using vkllm::engine::Pooling;

// sentence-transformers cuts inputs at max_seq_length 256 word pieces, [CLS] and [SEP] counted.
constexpr size_t kMaxTokens = 256;

class MiniLm : public EngineTest {
  protected:
    void SetUp() override {
        path_ = cached_model("all-MiniLM-L6-v2-f32.gguf");
        if (path_.empty())
            GTEST_SKIP() << "all-MiniLM-L6-v2-f32.gguf is not in " << model_cache_dir()
                         << " (scripts/fetch-models minilm makes it); skipped";
        EngineTest::SetUp();
        m_ = load(path_);
        ASSERT_NE(m_, nullptr);
        s_ = session(m_, 0, VKLLM_KV_F32, 0, 16);
        ASSERT_NE(s_, nullptr);
    }

    // The model's own tokens of `text` with [CLS] and [SEP], cut as sentence-transformers cuts.
    std::vector<int32_t> tokens(const std::string &text) {
        vkllm::tokenizer::EncodeOptions o;
        o.add_special = true;
        std::vector<int32_t> ids = m_->model->tokenizer()->encode(text, o);
        if (ids.size() > kMaxTokens) {
            int32_t sep = ids.back();
            ids.resize(kMaxTokens - 1);
            ids.push_back(sep);
        }
        return ids;
    }

    std::vector<std::vector<double>> embed(const std::vector<std::vector<int32_t>> &in) {
        uint32_t d = m_->model->config().n_embd;
        std::vector<float> out(in.size() * d);
        vkllm::engine::embed(*s_->session, in, {Pooling::Mean, true}, out.data());
        std::vector<std::vector<double>> rows;
        for (size_t i = 0; i < in.size(); ++i)
            rows.emplace_back(out.begin() + i * d, out.begin() + (i + 1) * d);
        return rows;
    }

    std::string path_;
    vkllm_model *m_ = nullptr;
    vkllm_session *s_ = nullptr;
};

TEST_F(MiniLm, FiftySentencesTokenizeAndEmbedAsTheFloat64Reference) {
    Json ref = Json::load(test_data_dir() + "/embeddings/minilm_f64.json");
    ASSERT_EQ(ref["sentences"].arr.size(), 50u);
    EXPECT_EQ(vkllm::engine::model_pooling(*m_->model), Pooling::Mean);
    std::vector<std::vector<int32_t>> in;
    for (const Json &s : ref["sentences"].arr) {
        in.push_back(s["ids"].ints());
        EXPECT_EQ(tokens(s["text"].str), in.back()) << s["text"].str;
    }
    std::vector<std::vector<double>> got = embed(in);
    Json llama = Json::load(test_data_dir() + "/embeddings/llamacpp_minilm.json");
    ASSERT_EQ(llama["sentences"].arr.size(), in.size());
    auto vector = [](const Json &v) {
        std::vector<double> out;
        for (const Json &x : v.arr)
            out.push_back(x.num);
        return out;
    };
    double worst = 1, worst_llama = 1;
    size_t same = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const std::string &text = ref["sentences"].arr[i]["text"].str;
        double c = ref::cosine(got[i], vector(ref["sentences"].arr[i]["vector"]));
        EXPECT_GE(c, 0.9999) << text;
        worst = std::min(worst, c);
        const Json &l = llama["sentences"].arr[i];
        if (!l["same_ids"].b) continue;  // llama.cpp's WordPiece differs (Hangul, long words)
        ++same;
        c = ref::cosine(got[i], vector(l["vector"]));
        EXPECT_GE(c, 0.9999) << text;
        worst_llama = std::min(worst_llama, c);
    }
    EXPECT_GE(same, 48u);
    std::printf(
        "all-MiniLM-L6-v2, 50 sentences: worst cosine %.7f vs float64, %.7f vs llama.cpp "
        "(%zu sentences it tokenizes alike)\n",
        worst, worst_llama, same);
}

TEST_F(MiniLm, EveryQueryFindsTheReferencesTopPassage) {
    Json set = Json::load(test_data_dir() + "/embeddings/retrieval.json");
    Json ref = Json::load(test_data_dir() + "/embeddings/minilm_f64.json");
    std::vector<std::vector<int32_t>> queries, passages;
    for (const Json &q : set["queries"].arr)
        queries.push_back(tokens(q.str));
    for (const Json &p : set["passages"].arr)
        passages.push_back(tokens(p.str));
    std::vector<std::vector<double>> q = embed(queries), p = embed(passages);
    const Json &top1 = ref["retrieval"]["top1"];
    ASSERT_EQ(top1.arr.size(), q.size());
    for (size_t i = 0; i < q.size(); ++i) {
        size_t best = 0;
        for (size_t j = 1; j < p.size(); ++j)
            if (ref::cosine(q[i], p[j]) > ref::cosine(q[i], p[best])) best = j;
        EXPECT_EQ(best, size_t(top1.arr[i].num)) << set["queries"].arr[i].str;
    }
}

}  // namespace
