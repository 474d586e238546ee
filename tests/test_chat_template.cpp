// vkllm_chat_apply_template, the plain-turn chat call: built-in templates by name, a model's own
// Jinja template run as transformers runs it, and the errors of each.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "json.h"
#include "model_cache.h"
#include "test_data.h"
#include "vkllm.h"

namespace {
const vkllm_chat_message kChat[] = {
    {"system", "Be brief."}, {"user", "Hi!"}, {"assistant", "Hello."}, {"user", " 2+2? \n"}};

std::string apply(const char *name, const char *model_template, const vkllm_chat_message *msgs,
                  size_t n, int32_t add_assistant, vkllm_status &s) {
    size_t len = 0;
    s = vkllm_chat_apply_template(name, model_template, msgs, n, add_assistant, nullptr, 0, &len);
    if (s != VKLLM_ERR_BUFFER_TOO_SMALL) return std::string();
    std::string out(len + 1, '\0');
    s = vkllm_chat_apply_template(name, model_template, msgs, n, add_assistant, out.data(),
                                  out.size(), &len);
    out.resize(len);
    return out;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Renders through the public API each conversation of tests/data/chat-templates that
// has only roles and contents (no tools, no extra variables), and compares it with jinja2's render
// of `template_name` there. Returns the number of conversations compared.
int expect_jinja2_renders(const std::string &jinja, const std::string &template_name) {
    std::string dir = test_data_dir() + "/chat-templates";
    Json conversations = Json::load(dir + "/conversations.json");
    int compared = 0;
    for (const Json &c : conversations.arr) {
        std::vector<vkllm_chat_message> msgs;
        bool plain = !c.has("tools") && !c.has("extra");
        for (const Json &m : c["messages"].arr) {
            plain = plain && m.obj.size() == 2 && m.has("role") && m.has("content") &&
                    m["content"].kind == Json::String;
            if (plain) msgs.push_back({m["role"].str.c_str(), m["content"].str.c_str()});
        }
        if (!plain) continue;
        std::string want =
            read_file(dir + "/expected/" + template_name + "/" + c["name"].str + ".txt");
        size_t len = 0;
        int32_t agp = c["add_generation_prompt"].b ? 1 : 0;
        EXPECT_EQ(vkllm_chat_apply_template(nullptr, jinja.c_str(), msgs.data(), msgs.size(), agp,
                                            nullptr, 0, &len),
                  VKLLM_ERR_BUFFER_TOO_SMALL);
        std::string got(len + 1, '\0');
        EXPECT_EQ(vkllm_chat_apply_template(nullptr, jinja.c_str(), msgs.data(), msgs.size(), agp,
                                            got.data(), got.size(), &len),
                  VKLLM_OK)
            << vkllm_last_error();
        got.resize(len);
        EXPECT_EQ(got, want) << template_name << ", conversation " << c["name"].str;
        ++compared;
    }
    return compared;
}
}  // namespace

TEST(ChatTemplateApi, BuiltInChatMlAndLlama3RenderTurns) {
    vkllm_status s;
    EXPECT_EQ(apply("chatml", nullptr, kChat, 4, 1, s),
              "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n"
              "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\n 2+2? \n<|im_end|>\n"
              "<|im_start|>assistant\n");
    EXPECT_EQ(s, VKLLM_OK) << vkllm_last_error();
    // Llama 3 trims each content; no BOS text: the tokenizer adds the token.
    EXPECT_EQ(apply("llama3", nullptr, kChat, 4, 1, s),
              "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\n2+2?<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplateApi, BuiltInHarmonyPutsTheSystemPromptInTheDeveloperTurnWithTodaysDate) {
    vkllm_status s;
    std::string text = apply("harmony", nullptr, kChat, 4, 1, s);
    ASSERT_EQ(s, VKLLM_OK) << vkllm_last_error();
    const std::string head =
        "<|start|>system<|message|>You are ChatGPT, a large language model "
        "trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: ";
    ASSERT_EQ(text.substr(0, head.size()), head);
    std::string date = text.substr(head.size(), 10);
    EXPECT_TRUE(
        std::all_of(date.begin(), date.end(), [](char c) { return c == '-' || isdigit(c); }) &&
        date[4] == '-' && date[7] == '-')
        << date;
    const std::string tail =
        "\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be "
        "included for every message.<|end|>"
        "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n<|end|>"
        "<|start|>user<|message|>Hi!<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Hello.<|end|>"
        "<|start|>user<|message|> 2+2? \n<|end|>"
        "<|start|>assistant";
    EXPECT_EQ(text.substr(head.size() + 10), tail);
    vkllm_chat_message closed[] = {{"user", "a"}, {"assistant", "b"}};
    text = apply("harmony", nullptr, closed, 2, 0, s);
    const std::string end = "<|start|>assistant<|channel|>final<|message|>b<|return|>";
    ASSERT_GE(text.size(), end.size());
    EXPECT_EQ(text.substr(text.size() - end.size()), end);
}

// Templates that read only roles and contents render every plain conversation as jinja2 does;
// those that write bos_token render without it (the tokenizer adds it).
TEST(ChatTemplateApi, ModelTemplatesRunAsJinja2RunsThem) {
    for (const char *name : {"Qwen-Qwen2-7B-Instruct", "Qwen-Qwen2.5-7B-Instruct",
                             "Qwen-Qwen3-0.6B", "google-gemma-2-2b-it"}) {
        std::string jinja =
            read_file(test_data_dir() + "/chat-templates/templates/" + name + ".jinja");
        ASSERT_FALSE(jinja.empty()) << name;
        if (jinja.find("bos_token") != std::string::npos) {
            vkllm_status s;
            std::string text = apply(nullptr, jinja.c_str(), kChat + 1, 1, 1, s);
            EXPECT_EQ(s, VKLLM_OK) << name << ": " << vkllm_last_error();
            EXPECT_EQ(text.find("<bos>"), std::string::npos) << name;
            continue;
        }
        EXPECT_GE(expect_jinja2_renders(jinja, name), 8) << name;
    }
}

TEST(ChatTemplateApi, ErrorsNameTheTemplateOrTheProblem) {
    vkllm_chat_message msgs[] = {{"user", "Hi!"}};
    char buf[256];
    size_t len = 0;
    vkllm_status s;
    apply("no-such-template", nullptr, msgs, 1, 1, s);
    EXPECT_EQ(s, VKLLM_ERR_NOT_FOUND);
    EXPECT_NE(std::string(vkllm_last_error()).find("no-such-template"), std::string::npos);
    apply(nullptr, nullptr, msgs, 1, 1, s);
    EXPECT_EQ(s, VKLLM_ERR_UNSUPPORTED);
    apply(nullptr, "", msgs, 1, 1, s);
    EXPECT_EQ(s, VKLLM_ERR_UNSUPPORTED);
    apply(nullptr,
          "{% if messages[0].role == 'user' %}{{ raise_exception('system first') }}{% endif %}",
          msgs, 1, 1, s);
    EXPECT_EQ(s, VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_STREQ(vkllm_last_error(), "system first");
    apply(nullptr, "ok\n{% for m in messages %}", msgs, 1, 1, s);
    EXPECT_EQ(s, VKLLM_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(vkllm_last_error()).find("line 2"), std::string::npos)
        << vkllm_last_error();
    EXPECT_EQ(vkllm_chat_apply_template("chatml", nullptr, msgs, 1, 1, buf, 4, &len),
              VKLLM_ERR_BUFFER_TOO_SMALL);
    EXPECT_EQ(len, 53u);
    vkllm_chat_message bad[] = {{"user", nullptr}};
    EXPECT_EQ(vkllm_chat_apply_template("chatml", nullptr, bad, 1, 1, buf, sizeof buf, &len),
              VKLLM_ERR_INVALID_ARGUMENT);
}

TEST(ChatTemplateApi, RenderedChatTokenizesIntoControlTokens) {
    std::string dir = test_data_dir();
    vkllm_chat_message msgs[] = {{"user", "Hi!"}};
    char buf[512];
    size_t len = 0;
    ASSERT_EQ(vkllm_chat_apply_template("chatml", nullptr, msgs, 1, 1, buf, sizeof buf, &len),
              VKLLM_OK);
    vkllm_gguf *g = nullptr;
    ASSERT_EQ(
        vkllm_gguf_open((dir + "/tokenizer/generated-vocab/ggml-vocab-qwen2.5.gguf").c_str(), &g),
        VKLLM_OK);
    vkllm_tokenizer *t = nullptr;
    ASSERT_EQ(vkllm_tokenizer_create(g, &t), VKLLM_OK);
    vkllm_gguf_destroy(g);
    int32_t ids[64];
    size_t n = 0;
    ASSERT_EQ(
        vkllm_tokenizer_encode(
            t, buf, len, VKLLM_TOKENIZE_ADD_SPECIAL | VKLLM_TOKENIZE_PARSE_SPECIAL, ids, 64, &n),
        VKLLM_OK);
    vkllm_tokenizer_destroy(t);
    EXPECT_EQ(std::count(ids, ids + n, 151644), 2) << "two <|im_start|>";
    EXPECT_EQ(std::count(ids, ids + n, 151645), 1) << "one <|im_end|>";
}

// Qwen2 and SmolLM2 write their default system turn as a string literal with a real line break
// after "system" (Qwen2.5 writes the escape \n): every form renders as jinja2 renders it.
TEST(ChatTemplateApi, ChatMlTemplatesRenderAsJinja2DoesWithTheirDefaultSystemTurn) {
    for (const char *name : {"Qwen-Qwen2-7B-Instruct", "Qwen-Qwen2.5-7B-Instruct",
                             "HuggingFaceTB-SmolLM2-135M-Instruct"}) {
        std::string jinja =
            read_file(test_data_dir() + "/chat-templates/templates/" + name + ".jinja");
        ASSERT_FALSE(jinja.empty()) << name;
        EXPECT_GE(expect_jinja2_renders(jinja, name), 10) << name;
    }
}

// The template inside the SmolLM2-135M-Instruct file that scripts/fetch-models caches (the demo's
// model), as vkllm run --chat reads it.
TEST(ChatTemplateApi, SmolLM2FilesOwnTemplateRendersAsJinja2Does) {
    std::string path = cached_model("SmolLM2-135M-Instruct.Q4_1.gguf");
    vkllm_gguf *g = nullptr;
    ASSERT_EQ(vkllm_gguf_open(path.c_str(), &g), VKLLM_OK) << vkllm_last_error();
    size_t len = 0;
    vkllm_gguf_get_string(g, "tokenizer.chat_template", nullptr, 0, &len);
    std::string jinja(len + 1, '\0');
    vkllm_status s =
        vkllm_gguf_get_string(g, "tokenizer.chat_template", jinja.data(), jinja.size(), &len);
    vkllm_gguf_destroy(g);
    ASSERT_EQ(s, VKLLM_OK);
    jinja.resize(len);
    EXPECT_GE(expect_jinja2_renders(jinja, "HuggingFaceTB-SmolLM2-135M-Instruct"), 10);
}
