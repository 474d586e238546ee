// Each built-in chat template renders the conversations of tests/data/chat-templates as
// jinja2 renders the real template it stands for (expected/<template>/<conversation>.txt), byte
// for byte, through vkllm_chat_render_json with template_name; where jinja2 raised on the real
// template, the built-in refuses the conversation too. Each check names the conversations it
// leaves out and why.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <ostream>
#include <set>
#include <string>

#include "chat/builtin_templates.h"
#include "chat/json_value.h"
#include "test_data.h"
#include "vkllm.h"

using namespace vkllm::chat;

namespace {

constexpr int64_t kFixedNow = 1768478400;  // render.py's strftime_now: 2026-01-15T12:00:00

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

bool starts_with_system(const Value &conversation) {
    const List &messages = member(conversation, "messages")->list();
    return !messages.empty() && member(messages[0], "role")->str() == "system";
}

bool has_tool_turns(const Value &conversation) {
    for (const Value &m : member(conversation, "messages")->list())
        if (member(m, "tool_calls") || member(m, "role")->str() == "tool") return true;
    return false;
}

using Filter = std::function<bool(const Value &)>;

const Filter kEvery = [](const Value &) { return true; };

struct Check {
    const char *builtin;
    const char *real;  // the template in tests/data/chat-templates/templates
    Filter compared;   // the conversations compared
    const char *why;   // why others are left out
};

// Where a built-in is not compared on a conversation, the real template does something the
// built-in leaves out on purpose: a model's own default system message, or tool calls.
const Check kChecks[] = {
    {"chatml", "Qwen-Qwen2.5-7B-Instruct",
     [](const Value &c) { return starts_with_system(c) && !member(c, "tools"); },
     "Qwen 2.5 adds its own system message and writes tools"},
    {"chatml", "Qwen-Qwen2-7B-Instruct", starts_with_system, "Qwen2 adds its own system message"},
    {"chatml", "HuggingFaceTB-SmolLM2-135M-Instruct", starts_with_system,
     "SmolLM2 adds its own system message"},
    {"qwen2.5", "Qwen-Qwen2.5-7B-Instruct", kEvery, ""},
    {"llama3", "meta-llama-Meta-Llama-3-8B-Instruct",
     [](const Value &c) { return !has_tool_turns(c); },
     "Llama 3 prints a call's null content as None"},
    {"harmony", "openai-gpt-oss-120b",
     [](const Value &c) {
         return !member(c, "tools") && !has_tool_turns(c) &&
                member(c, "name")->str() != "empty_system";
     },
     "gpt-oss writes tools and calls in its own TypeScript form and drops an empty system turn"},
    {"gemma", "google-gemma-3-1b-it", kEvery, ""},
    {"gemma", "google-gemma-2-2b-it", [](const Value &c) { return !starts_with_system(c); },
     "Gemma 2 refuses a system message; Gemma 3 puts it in the first user turn"},
    {"llama2", "meta-llama-Llama-2-7b-chat-hf", kEvery, ""},
    {"mistral-v1", "mistralai-Mistral-7B-Instruct-v0.1", kEvery, ""},
    {"mistral-v3", "mistralai-Mistral-7B-Instruct-v0.3", kEvery, ""},
    {"mistral-v3-tekken", "mistralai-Mistral-Nemo-Instruct-2407", kEvery, ""},
    {"mistral-v7-tekken", "mistralai-Mistral-Small-3.2-24B-Instruct-2506", starts_with_system,
     "Mistral Small 3.2 adds its own system message"},
    {"mistral-v7-tekken", "mistralai-Ministral-3-14B-Reasoning-2512",
     [](const Value &c) { return starts_with_system(c) && !has_tool_turns(c); },
     "Ministral 3 adds its own system message and writes a call's content apart"},
    {"phi3", "microsoft-Phi-3-mini-4k-instruct", kEvery, ""},
    {"phi3", "microsoft-Phi-3.5-mini-instruct",
     [](const Value &c) { return member(c, "name")->str() != "empty_system"; },
     "Phi-3.5 drops an empty system turn"},
    {"phi4", "microsoft-phi-4", kEvery, ""},
    {"phi4-mini", "microsoft-Phi-4-mini-instruct", kEvery, ""},
    {"deepseek3", "deepseek-ai-DeepSeek-V3-Base", [](const Value &c) { return !has_tool_turns(c); },
     "DeepSeek writes calls with arguments as text"},
    {"deepseek-r1", "deepseek-ai-DeepSeek-R1", [](const Value &c) { return !has_tool_turns(c); },
     "DeepSeek writes calls with arguments as text"},
    {"deepseek-r1", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B",
     [](const Value &c) { return !has_tool_turns(c); },
     "DeepSeek writes calls with arguments as text"},
    {"command-r", "CohereForAI-c4ai-command-r-v01", kEvery, ""},
    {"granite", "ibm-granite-granite-3.3-2b-instruct", kEvery, ""},
    {"chatglm3", "THUDM-chatglm3-6b", kEvery, ""},
    {"chatglm4", "THUDM-glm-4-9b-chat", kEvery, ""},
    {"llama4", "meta-llama-Llama-4-Scout-17B-16E-Instruct", kEvery, ""},
    {"lfm2", "LiquidAI-LFM2-8B-A1B", kEvery, ""},
    {"kimi-k2", "moonshotai-Kimi-K2-Instruct", kEvery, ""},
};

// For gtest's listing of the cases: the pair, not the struct's bytes.
void PrintTo(const Check &k, std::ostream *os) {
    *os << k.builtin << " as " << k.real;
}

struct Result {
    int compared = 0;
    std::string failures;
};

Result check(const Check &k) {
    Result out;
    std::string dir = data_dir();
    Value conversations = parse_json(read_file(dir + "/conversations.json"));
    Value index = parse_json(read_file(dir + "/expected/index.json"));
    const Value &tokens = *member(*member(index, "special_tokens"), k.real);
    const Value &results = *member(*member(index, "results"), k.real);
    auto token = [&](const char *key) {
        const Value *v = member(tokens, key);
        return v && !v->is_none() ? v->str() : std::string();
    };
    std::string bos = token("bos_token"), eos = token("eos_token");
    for (const Value &c : conversations.list()) {
        if (!k.compared(c)) continue;
        const std::string &name = member(c, "name")->str();
        std::string messages = to_json(*member(c, "messages"), JsonOptions{});
        std::string tools, extra;
        if (const Value *t = member(c, "tools")) tools = to_json(*t, JsonOptions{});
        if (const Value *e = member(c, "extra")) extra = to_json(*e, JsonOptions{});
        vkllm_chat_params p;
        vkllm_chat_params_init(&p);
        p.template_name = k.builtin;
        p.tools = tools.empty() ? nullptr : tools.c_str();
        p.extra = extra.empty() ? nullptr : extra.c_str();
        p.add_generation_prompt = member(c, "add_generation_prompt")->truthy();
        p.bos_token = bos.empty() ? nullptr : bos.c_str();
        p.eos_token = eos.empty() ? nullptr : eos.c_str();
        p.now = kFixedNow;
        size_t n = 0;
        vkllm_status s = vkllm_chat_render_json(&p, messages.c_str(), nullptr, 0, &n);
        std::string got;
        if (s == VKLLM_ERR_BUFFER_TOO_SMALL) {
            got.resize(n + 1);
            s = vkllm_chat_render_json(&p, messages.c_str(), got.data(), got.size(), &n);
            got.resize(n);
        }
        ++out.compared;
        if (!member(*member(results, name.c_str()), "ok")->truthy()) {
            if (s == VKLLM_OK)
                out.failures += name +
                                ": jinja2 raised on the real template; the built-in "
                                "rendered\n" +
                                got + "\n";
            continue;
        }
        std::string want = read_file(dir + "/expected/" + k.real + "/" + name + ".txt");
        if (s != VKLLM_OK)
            out.failures += name + ": " + vkllm_last_error() + "\n";
        else if (got != want)  // the texts of the first difference; the names of the others
            out.failures += out.failures.empty() ? name + ": got\n" + got + "\nwant\n" + want + "\n"
                                                 : name + " differs too\n";
    }
    return out;
}

class BuiltinTemplates : public ::testing::TestWithParam<Check> {};

TEST_P(BuiltinTemplates, RenderAsJinja2RendersTheRealTemplate) {
    const Check &k = GetParam();
    Result r = check(k);
    EXPECT_EQ(r.failures, "") << k.builtin << " as " << k.real;
    // Every check compares most of the 16 conversations; those with a system message are 8.
    EXPECT_GE(r.compared, 5) << k.builtin << " as " << k.real << " (" << k.why << ")";
}

std::string check_name(const ::testing::TestParamInfo<Check> &info) {
    std::string s = std::string(info.param.builtin) + "_as_" + info.param.real;
    for (char &ch : s)
        if (!std::isalnum(uint8_t(ch))) ch = '_';
    return s;
}

INSTANTIATE_TEST_SUITE_P(Real, BuiltinTemplates, ::testing::ValuesIn(kChecks), check_name);

// A built-in that no check compares would ship unchecked.
TEST(BuiltinTemplateList, EveryBuiltInIsComparedWithARealTemplate) {
    std::set<std::string> checked;
    for (const Check &k : kChecks)
        checked.insert(k.builtin);
    size_t n = 0;
    const BuiltinTemplate *all = builtin_templates(n);
    ASSERT_GE(n, 22u);
    for (size_t i = 0; i < n; ++i) {
        EXPECT_TRUE(checked.count(std::string(all[i].name))) << all[i].name;
        EXPECT_FALSE(all[i].stands_for.empty()) << all[i].name;
        EXPECT_EQ(builtin_template(all[i].name), all[i].source);
    }
    EXPECT_EQ(builtin_template("qwen2"), builtin_template("chatml"));
    EXPECT_EQ(builtin_template("gpt-oss"), builtin_template("harmony"));
    EXPECT_TRUE(builtin_template("zephyr").empty());
}

// An unknown name is refused with the list of names, so a user can pick one.
TEST(BuiltinTemplateList, AnUnknownNameIsRefusedWithTheNames) {
    vkllm_chat_params p;
    vkllm_chat_params_init(&p);
    p.template_name = "zephyr";
    size_t n = 0;
    EXPECT_EQ(
        vkllm_chat_render_json(&p, "[{\"role\":\"user\",\"content\":\"hi\"}]", nullptr, 0, &n),
        VKLLM_ERR_NOT_FOUND);
    std::string error = vkllm_last_error();
    EXPECT_NE(error.find("\"zephyr\""), std::string::npos) << error;
    EXPECT_NE(error.find(builtin_template_names()), std::string::npos) << error;
}

}  // namespace
