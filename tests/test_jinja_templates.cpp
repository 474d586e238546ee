// The 45 real chat templates of tests/data/chat-templates, each with its 16
// conversations, rendered by src/chat and compared byte for byte with jinja2's renders
// (expected/<template>/<conversation>.txt), or expected to fail where jinja2 raised
// (expected/index.json). The render arguments are render.py's: tools None when the
// conversation has none, documents None, a special token that is None not passed at all,
// the conversation's extra kwargs, strftime_now fixed to 2026-01-15T12:00:00.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/error.h"
#include "test_data.h"
#include "vkllm.h"

using namespace vkllm::chat;

namespace {

constexpr int64_t kFixedNow = 1768478400;  // 2026-01-15T12:00:00 UTC

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string data_dir() {
    return test_data_dir() + "/chat-templates";
}

const Value *member(const Value &dict, const char *key) {
    return dict.dict().find(std::string(key));
}

struct Corpus {
    Value conversations;
    Value index;
};

const Corpus &corpus() {
    static const Corpus c = [] {
        Corpus out;
        out.conversations = parse_json(read_file(data_dir() + "/conversations.json"));
        out.index = parse_json(read_file(data_dir() + "/expected/index.json"));
        return out;
    }();
    return c;
}

Value render_context(const Value &conversation, const Value &tokens) {
    auto ctx = std::make_shared<Dict>();
    ctx->set(Value("messages"), *member(conversation, "messages"));
    const Value *tools = member(conversation, "tools");
    ctx->set(Value("tools"), tools ? *tools : Value::none());
    ctx->set(Value("documents"), Value::none());
    ctx->set(Value("add_generation_prompt"), *member(conversation, "add_generation_prompt"));
    for (const auto &kv : tokens.dict().items)
        if (!kv.second.is_none()) ctx->set(kv.first, kv.second);
    if (const Value *extra = member(conversation, "extra"))
        if (extra->is_dict())
            for (const auto &kv : extra->dict().items)
                ctx->set(kv.first, kv.second);
    return Value(ctx);
}

int g_passed = 0, g_total = 0;

class JinjaTemplates : public ::testing::TestWithParam<std::string> {};

TEST_P(JinjaTemplates, RendersEveryConversationAsJinja2Does) {
    const std::string name = GetParam();
    const Corpus &c = corpus();
    std::string source = read_file(data_dir() + "/templates/" + name + ".jinja");
    const Value &tokens = *member(*member(c.index, "special_tokens"), name.c_str());
    const Value &results = *member(*member(c.index, "results"), name.c_str());
    RenderOptions options;
    options.now = kFixedNow;
    for (const Value &conversation : c.conversations.list()) {
        const std::string &conv = member(conversation, "name")->str();
        const Value &expected = *member(results, conv.c_str());
        bool ok = member(expected, "ok")->truthy();
        ++g_total;
        std::string got, error;
        try {
            got = render_template(source, render_context(conversation, tokens), options);
        } catch (const vkllm::Error &e) {
            error = e.what();
        }
        if (!ok) {
            EXPECT_FALSE(error.empty()) << name << " / " << conv << ": jinja2 raised "
                                        << member(expected, "message")->str() << "; we rendered:\n"
                                        << got;
            if (!error.empty()) ++g_passed;
            continue;
        }
        std::string want = read_file(data_dir() + "/expected/" + name + "/" + conv + ".txt");
        EXPECT_TRUE(error.empty()) << name << " / " << conv << ": " << error;
        if (!error.empty()) continue;
        EXPECT_EQ(got, want) << name << " / " << conv;
        if (got == want) ++g_passed;
    }
}

// The same pairs through the C API: the conversation as JSON text, the tokens and the fixed
// time as params (a None token passed as NULL: with no model, undefined).
TEST_P(JinjaTemplates, TheCApiRendersEveryConversationAsJinja2Does) {
    const std::string name = GetParam();
    const Corpus &c = corpus();
    std::string source = read_file(data_dir() + "/templates/" + name + ".jinja");
    const Value &tokens = *member(*member(c.index, "special_tokens"), name.c_str());
    const Value &results = *member(*member(c.index, "results"), name.c_str());
    auto token = [&](const char *key) -> std::optional<std::string> {
        const Value *v = member(tokens, key);
        if (!v || v->is_none()) return std::nullopt;
        return v->str();
    };
    std::optional<std::string> bos = token("bos_token"), eos = token("eos_token");
    for (const Value &conversation : c.conversations.list()) {
        const std::string &conv = member(conversation, "name")->str();
        bool ok = member(*member(results, conv.c_str()), "ok")->truthy();
        std::string messages = to_json(*member(conversation, "messages"), JsonOptions{});
        std::string tools, extra;
        if (const Value *t = member(conversation, "tools")) tools = to_json(*t, JsonOptions{});
        if (const Value *e = member(conversation, "extra")) extra = to_json(*e, JsonOptions{});
        vkllm_chat_params p;
        vkllm_chat_params_init(&p);
        p.template_source = source.c_str();
        p.tools = tools.empty() ? nullptr : tools.c_str();
        p.extra = extra.empty() ? nullptr : extra.c_str();
        p.add_generation_prompt = member(conversation, "add_generation_prompt")->truthy();
        p.bos_token = bos ? bos->c_str() : nullptr;
        p.eos_token = eos ? eos->c_str() : nullptr;
        p.now = kFixedNow;
        size_t n = 0;
        vkllm_status st = vkllm_chat_render_json(&p, messages.c_str(), nullptr, 0, &n);
        if (!ok) {
            EXPECT_EQ(st, VKLLM_ERR_INVALID_ARGUMENT) << name << " / " << conv;
            EXPECT_GT(std::strlen(vkllm_last_error()), 0u);
            continue;
        }
        ASSERT_EQ(st, VKLLM_ERR_BUFFER_TOO_SMALL)
            << name << " / " << conv << ": " << vkllm_last_error();
        std::string got(n + 1, '\0');
        ASSERT_EQ(vkllm_chat_render_json(&p, messages.c_str(), got.data(), got.size(), &n),
                  VKLLM_OK);
        got.resize(n);
        EXPECT_EQ(got, read_file(data_dir() + "/expected/" + name + "/" + conv + ".txt"))
            << name << " / " << conv;
    }
}

std::vector<std::string> template_names() {
    std::vector<std::string> names;
    Value index = parse_json(read_file(data_dir() + "/expected/index.json"));
    for (const auto &kv : member(index, "results")->dict().items)
        names.push_back(kv.first.str());
    return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string> &info) {
    std::string s;
    for (char ch : info.param)
        s += std::isalnum(uint8_t(ch)) ? ch : '_';
    return s;
}

INSTANTIATE_TEST_SUITE_P(Real, JinjaTemplates, ::testing::ValuesIn(template_names()), test_name);

// Prints the pairs that matched after all templates ran.
class Totals : public ::testing::Environment {
  public:
    void TearDown() override {
        if (g_total)
            std::printf("chat templates: %d of %d template x conversation pairs as jinja2\n",
                        g_passed, g_total);
    }
};

const auto *g_totals = ::testing::AddGlobalTestEnvironment(new Totals);

}  // namespace
