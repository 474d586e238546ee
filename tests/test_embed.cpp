// Embeddings from the engine (engine/embed.h): the tiny bert models against the float64 BERT
// reference (reference/bert_forward.h) and llama.cpp's embedding context
// (tests/data/llamacpp_embed_tiny.json) for every pooling type, batched as one at a time, and a
// decoder's last-token pooling against its own logits; encoders refuse to make logits.
#include <gtest/gtest.h>

#include <cmath>

#include "api/objects.h"
#include "engine/embed.h"
#include "engine_fixture.h"
#include "json.h"
#include "reference/bert_forward.h"
#include "reference/tiny_archs.h"
#include "test_data.h"

namespace {

using vkllm::engine::EmbedRequest;
using vkllm::engine::Pooling;

// llama.cpp runs the same F32 weights in F32 with the same tanh GELU: the bound.
constexpr double kMinCosine = 0.99999;

std::vector<double> widen(const float *v, size_t n) {
    return std::vector<double>(v, v + n);
}

class EmbedTest : public EngineTest {
  protected:
    vkllm::engine::Session &engine(vkllm_session *s) { return *s->session; }

    // The tiny bert of `name` (reference/tiny_archs.cpp), written and loaded.
    vkllm_model *bert(const std::string &name, std::string *path_out = nullptr) {
        for (const TinyArch &a : tiny_embed_archs()) {
            if (a.name != name) continue;
            std::string path = temp_path(name);
            write_tiny_model(path, a.spec);
            if (path_out) *path_out = path;
            return load(path);
        }
        ADD_FAILURE() << "no tiny model " << name;
        return nullptr;
    }
};

struct Case {
    std::string name;
    Pooling pooling;
    std::vector<std::vector<int32_t>> ids;
    std::vector<std::vector<double>> llamacpp;
};

std::vector<Case> llamacpp_cases() {
    Json j = Json::load(test_data_dir() + "/llamacpp_embed_tiny.json");
    std::vector<Case> out;
    for (const Json &m : j["models"].arr) {
        Case c{m["name"].str, Pooling(int(m["pooling_type"].num)), {}, {}};
        for (const Json &s : m["sequences"].arr) {
            std::vector<int32_t> ids;
            for (const Json &id : s["ids"].arr)
                ids.push_back(int32_t(id.num));
            std::vector<double> v;
            for (const Json &x : s["embedding"].arr)
                v.push_back(x.num);
            c.ids.push_back(ids);
            c.llamacpp.push_back(v);
        }
        out.push_back(c);
    }
    return out;
}

TEST_F(EmbedTest, TinyBertMatchesTheFloat64ReferenceAndLlamaCppForEveryPooling) {
    std::vector<Case> cases = llamacpp_cases();
    ASSERT_EQ(cases.size(), 4u);
    for (const Case &c : cases) {
        std::string path;
        vkllm_model *m = bert(c.name, &path);
        ASSERT_NE(m, nullptr) << c.name;
        EXPECT_EQ(vkllm::engine::model_pooling(*m->model), c.pooling) << c.name;
        vkllm_session *s = session(m, 0, VKLLM_KV_F32, 0, 4);
        ASSERT_NE(s, nullptr);
        auto model_ref = ref::load_model_ref(path);
        // llama.cpp's pooling none gives the last token's row: compare that with ours.
        Pooling ours = c.pooling == Pooling::None ? Pooling::Last : c.pooling;
        std::vector<float> out(vkllm::engine::embed_size(*m->model, c.ids, ours));
        vkllm::engine::embed(engine(s), c.ids, EmbedRequest{ours, false}, out.data());
        std::vector<ref::Rows> want =
            ref::bert_embed(*model_ref, c.ids, ref::Pooling(int(ours)), false, ref::Gelu::tanh);
        uint32_t d = m->model->config().n_embd;
        double worst_ref = 1, worst_llama = 1;
        for (size_t i = 0; i < c.ids.size(); ++i) {
            std::vector<double> got = widen(out.data() + i * d, d);
            worst_ref = std::min(worst_ref, ref::cosine(got, want[i][0]));
            worst_llama = std::min(worst_llama, ref::cosine(got, c.llamacpp[i]));
        }
        EXPECT_GE(worst_ref, kMinCosine) << c.name;
        EXPECT_GE(worst_llama, kMinCosine) << c.name;
        std::printf("%s: worst cosine %.9f vs the float64 reference, %.9f vs llama.cpp\n",
                    c.name.c_str(), worst_ref, worst_llama);
    }
}

TEST_F(EmbedTest, PoolingNoneGivesEveryTokensRowAndTheOthersFollowFromThem) {
    std::string path;
    vkllm_model *m = bert("bert-mean", &path);
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 0, VKLLM_KV_F32, 0, 3);
    std::vector<std::vector<int32_t>> in = {{2, 7, 8, 9, 3}, {2, 40, 3}, {2, 11, 3}};
    uint32_t d = m->model->config().n_embd;
    std::vector<float> rows(vkllm::engine::embed_size(*m->model, in, Pooling::None));
    ASSERT_EQ(rows.size(), size_t(11) * d);
    vkllm::engine::embed(engine(s), in, {Pooling::None, false}, rows.data());
    auto reference = ref::load_model_ref(path);
    std::vector<ref::Rows> hidden = ref::bert_hidden_states(*reference, in, ref::Gelu::tanh);
    size_t at = 0;
    for (size_t i = 0; i < in.size(); ++i)
        for (size_t t = 0; t < in[i].size(); ++t, ++at)
            EXPECT_GE(ref::cosine(widen(rows.data() + at * d, d), hidden[i][t]), kMinCosine)
                << "input " << i << " token " << t;
    for (Pooling p : {Pooling::Mean, Pooling::Cls, Pooling::Last}) {
        std::vector<float> pooled(in.size() * d);
        vkllm::engine::embed(engine(s), in, {p, true}, pooled.data());
        size_t first = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            std::vector<double> want(d, 0.0);
            size_t n = in[i].size();
            for (size_t t = 0; t < n; ++t) {
                bool take = p == Pooling::Mean || (p == Pooling::Cls && t == 0) ||
                            (p == Pooling::Last && t + 1 == n);
                for (uint32_t j = 0; j < d && take; ++j)
                    want[j] += rows[(first + t) * d + j];
            }
            std::vector<double> got = widen(pooled.data() + i * d, d);
            double norm = 0;
            for (double x : got)
                norm += x * x;
            EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-6);
            EXPECT_GE(ref::cosine(got, want), 0.9999999) << "input " << i;
            first += n;
        }
    }
}

TEST_F(EmbedTest, BatchedInputsEqualOneAtATime) {
    vkllm_model *m = bert("bert-mean");
    ASSERT_NE(m, nullptr);
    vkllm_session *batched = session(m, 0, VKLLM_KV_F32, 0, 4);
    vkllm_session *single = session(m, 0, VKLLM_KV_F32, 0, 1);
    std::vector<std::vector<int32_t>> in = {
        {2, 5, 6, 3}, {2, 30, 31, 32, 33, 34, 3}, {2, 3}, {2, 60, 3}, {2, 9, 10, 11, 3}};
    uint32_t d = m->model->config().n_embd;
    std::vector<float> all(in.size() * d);
    vkllm::engine::embed(engine(batched), in, {Pooling::Mean, false}, all.data());
    for (size_t i = 0; i < in.size(); ++i) {
        std::vector<float> one(d);
        vkllm::engine::embed(engine(single), {in[i]}, {Pooling::Mean, false}, one.data());
        for (uint32_t j = 0; j < d; ++j)
            EXPECT_NEAR(all[i * d + j], one[j], 1e-5) << "input " << i;
        EXPECT_EQ(vkllm_session_get_position(batched, 0, nullptr), VKLLM_ERR_INVALID_ARGUMENT);
    }
    uint32_t n_past = 1;
    ASSERT_EQ(vkllm_session_get_position(batched, 0, &n_past), VKLLM_OK);
    EXPECT_EQ(n_past, 0u);  // sequences are left empty
}

// A decoder's last-token pooling is its final norm's output: times the output head it gives the
// logits a prefill of the same tokens gives.
TEST_F(EmbedTest, DecoderLastPoolingTimesTheOutputHeadIsItsLogits) {
    vkllm_model *m = load(test_data_dir() + "/models/tiny-qwen2-f32.gguf");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 0, VKLLM_KV_F32, 0, 2, 4);
    // The second input is longer than a step (n_batch 4): its chunks run one after another.
    std::vector<std::vector<int32_t>> in = {{17, 4, 99}, {5, 6, 7, 8, 9, 10, 11, 12, 13}};
    const auto &c = m->model->config();
    std::vector<float> last(in.size() * c.n_embd);
    vkllm::engine::embed(engine(s), in, {Pooling::Last, false}, last.data());
    auto reference = ref::load_model_ref(test_data_dir() + "/models/tiny-qwen2-f32.gguf");
    for (size_t i = 0; i < in.size(); ++i) {
        std::vector<float> logits(c.n_vocab);
        ASSERT_EQ(vkllm_session_eval(s, 0, in[i].data(), in[i].size(), logits.data()), VKLLM_OK)
            << vkllm_last_error();
        ASSERT_EQ(vkllm_session_truncate(s, 0, 0), VKLLM_OK);
        const std::vector<double> &out = reference->output.w;
        double worst = 0;
        for (uint32_t v = 0; v < c.n_vocab; ++v) {
            double dot = 0;
            for (uint32_t j = 0; j < c.n_embd; ++j)
                dot += out[size_t(v) * c.n_embd + j] * last[i * c.n_embd + j];
            worst = std::max(worst, std::fabs(dot - logits[v]));
        }
        EXPECT_LT(worst, 2e-3) << "input " << i;
    }
}

TEST_F(EmbedTest, EncodersRefuseLogitsAndBadInputsChangeNothing) {
    vkllm_model *m = bert("bert-cls");
    ASSERT_NE(m, nullptr);
    vkllm_session *s = session(m, 0, VKLLM_KV_F32, 0, 2);
    int32_t ids[] = {2, 5, 3};
    float logits[96];
    EXPECT_EQ(vkllm_session_eval(s, 0, ids, 3, logits), VKLLM_ERR_UNSUPPORTED);
    EXPECT_NE(std::string(vkllm_last_error()).find("encoder"), std::string::npos);
    vkllm::engine::Session &e = engine(s);
    std::vector<float> out(96 * 600);
    auto status_of = [&](const std::vector<std::vector<int32_t>> &in) {
        try {
            vkllm::engine::embed(e, in, {Pooling::Cls, false}, out.data());
        } catch (const vkllm::Error &err) {
            return err.status();
        }
        return VKLLM_OK;
    };
    EXPECT_EQ(status_of({{2, 3}, {}}), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of({{2, 96, 3}}), VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_EQ(status_of({std::vector<int32_t>(65, 5)}), VKLLM_ERR_CONTEXT_FULL);
    EXPECT_EQ(e.stats().tokens_prefilled, 0u);
    EXPECT_EQ(status_of({std::vector<int32_t>(64, 5)}), VKLLM_OK);
}

}  // namespace
