// vkllm-serve's request parsing (tools/serve/request_parse.h): JSON bodies to generation
// parameters, each refusal a RequestError naming the field at fault.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "request_parse.h"

using nlohmann::json;
using serve::RequestError;

namespace {

const serve::Limits kLimits{4096, 4, 1000};

// The param of the RequestError that parsing `body` as a chat request throws; "(none)" when
// it parses.
std::string chat_error_param(const std::string &body) {
    try {
        serve::parse_chat_request(serve::parse_body(body), kLimits);
    } catch (const RequestError &e) {
        return e.param();
    }
    return "(none)";
}

std::string with_message(const std::string &fields) {
    return R"({"messages": [{"role": "user", "content": "hi"}])" +
           (fields.empty() ? std::string() : ", " + fields) + "}";
}

serve::ChatRequest chat(const std::string &body) {
    return serve::parse_chat_request(serve::parse_body(body), kLimits);
}

std::string nested(int depth) {
    return R"({"messages": [{"role": "user", "content": "hi"}], "x": )" +
           std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}";
}

}  // namespace

TEST(ServeRequest, NestingDeeperThan64IsRefusedBeforeParsing) {
    EXPECT_NO_THROW(serve::parse_body(nested(64)));
    try {
        serve::parse_body(nested(65));
        FAIL() << "65 levels were accepted";
    } catch (const RequestError &e) {
        EXPECT_NE(std::string(e.what()).find("64"), std::string::npos) << e.what();
    }
    // Brackets inside strings are text, not nesting.
    EXPECT_NO_THROW(serve::parse_body(R"({"a": ")" + std::string(500, '[') + R"("})"));
    // A million levels: refused by the scan, no stack overflow in the parser.
    EXPECT_THROW(serve::parse_body(std::string(1000000, '[')), RequestError);
}

TEST(ServeRequest, MalformedJsonInvalidUtf8AndNonObjectsAreRefused) {
    EXPECT_THROW(serve::parse_body(R"({"messages": [)"), RequestError);
    EXPECT_THROW(serve::parse_body(""), RequestError);
    EXPECT_THROW(serve::parse_body("[1, 2]"), RequestError);
    EXPECT_THROW(serve::parse_body("\"text\""), RequestError);
    try {
        serve::parse_body("{\"messages\": \"\xff\xfe\"}");
        FAIL() << "invalid UTF-8 was accepted";
    } catch (const RequestError &e) {
        EXPECT_NE(std::string(e.what()).find("UTF-8"), std::string::npos) << e.what();
    }
    // An overlong encoding of '/' and a lone surrogate are not UTF-8 either.
    EXPECT_THROW(serve::parse_body("{\"a\": \"\xc0\xaf\"}"), RequestError);
    EXPECT_THROW(serve::parse_body("{\"a\": \"\xed\xa0\x80\"}"), RequestError);
    EXPECT_NO_THROW(serve::parse_body("{\"a\": \"caf\xc3\xa9 \xf0\x9f\x98\x80\"}"));
}

TEST(ServeRequest, WrongTypesNameTheField) {
    EXPECT_EQ(chat_error_param(with_message(R"("temperature": "hot")")), "temperature");
    EXPECT_EQ(chat_error_param(with_message(R"("stream": "yes")")), "stream");
    EXPECT_EQ(chat_error_param(with_message(R"("n": 1.5)")), "n");
    EXPECT_EQ(chat_error_param(with_message(R"("max_tokens": "10")")), "max_tokens");
    EXPECT_EQ(chat_error_param(with_message(R"("seed": 1.5)")), "seed");
    EXPECT_EQ(chat_error_param(with_message(R"("stop": 5)")), "stop");
    EXPECT_EQ(chat_error_param(with_message(R"("stop": ["a", 5])")), "stop[1]");
    EXPECT_EQ(chat_error_param(with_message(R"("model": 3)")), "model");
    EXPECT_EQ(chat_error_param(with_message(R"("stream_options": {"include_usage": 1})")),
              "stream_options.include_usage");
    EXPECT_EQ(chat_error_param(R"({"messages": "hi"})"), "messages");
    EXPECT_EQ(chat_error_param(R"({"messages": []})"), "messages");
    EXPECT_EQ(chat_error_param(R"({})"), "messages");
    EXPECT_EQ(chat_error_param(R"({"messages": [{"role": "user", "content": "a"}, 7]})"),
              "messages[1]");
    EXPECT_EQ(chat_error_param(R"({"messages": [{"role": "user", "content": "a"},
                                               {"role": "user", "content": 7}]})"),
              "messages[1].content");
    EXPECT_EQ(chat_error_param(R"({"messages": [{"content": "a"}]})"), "messages[0].role");
}

TEST(ServeRequest, NumbersOutsideTheirRangesAreRefused) {
    EXPECT_EQ(chat_error_param(with_message(R"("temperature": 2.5)")), "temperature");
    EXPECT_EQ(chat_error_param(with_message(R"("temperature": -0.1)")), "temperature");
    EXPECT_EQ(chat_error_param(with_message(R"("top_p": 1.5)")), "top_p");
    EXPECT_EQ(chat_error_param(with_message(R"("presence_penalty": -2.5)")), "presence_penalty");
    EXPECT_EQ(chat_error_param(with_message(R"("frequency_penalty": 3)")), "frequency_penalty");
    EXPECT_EQ(chat_error_param(with_message(R"("logprobs": true, "top_logprobs": 21)")),
              "top_logprobs");
    EXPECT_EQ(chat_error_param(with_message(R"("top_logprobs": 2)")), "top_logprobs");
    EXPECT_EQ(chat_error_param(with_message(R"("temperature": 2, "top_p": 0,
                                                "presence_penalty": -2, "frequency_penalty": 2,
                                                "logprobs": true, "top_logprobs": 20)")),
              "(none)");
}

TEST(ServeRequest, NAndMaxTokensAreBoundedByTheServersLimits) {
    EXPECT_EQ(chat_error_param(with_message(R"("n": 0)")), "n");
    EXPECT_EQ(chat_error_param(with_message(R"("n": 5)")), "n");  // --parallel 4
    EXPECT_EQ(chat(with_message(R"("n": 4)")).common.generation.n_choices, 4u);
    EXPECT_EQ(chat_error_param(with_message(R"("max_tokens": 4097)")), "max_tokens");
    EXPECT_EQ(chat_error_param(with_message(R"("max_completion_tokens": 5000)")),
              "max_completion_tokens");
    EXPECT_EQ(chat_error_param(with_message(R"("max_tokens": 0)")), "max_tokens");
    serve::ChatRequest r = chat(with_message(R"("max_completion_tokens": 7)"));
    EXPECT_EQ(r.common.generation.max_tokens, 7u);
    EXPECT_TRUE(r.common.max_tokens_given);
    // Unasked, a chat answer may run to the limit (then to what the context leaves).
    r = chat(with_message(""));
    EXPECT_EQ(r.common.generation.max_tokens, 4096u);
    EXPECT_FALSE(r.common.max_tokens_given);
}

TEST(ServeRequest, ContentPartsAreJoinedAndOnlyTextPartsAccepted) {
    serve::ChatRequest r = chat(R"({"messages": [{"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "Hello, "},
                                     {"type": "text", "text": "world"}], "name": "ann"}]})");
    json messages = json::parse(r.messages_json);
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[1]["content"], "Hello, world");
    EXPECT_EQ(messages[1]["name"], "ann");  // other fields pass through to the template
    EXPECT_EQ(messages[0]["content"], "be brief");
    EXPECT_EQ(chat_error_param(R"({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}}]}]})"),
              "messages[0].content[1].type");
    EXPECT_EQ(chat_error_param(R"({"messages": [{"role": "user", "content": [
        {"type": "text", "text": 3}]}]})"),
              "messages[0].content[0].text");
    EXPECT_EQ(chat_error_param(R"({"messages": [{"role": "user", "content": ["a"]}]})"),
              "messages[0].content[0]");
}

TEST(ServeRequest, LogitBiasTakesTokenIdKeysAndMinus100Bans) {
    serve::ChatRequest r = chat(with_message(R"("logit_bias": {"5": -100, "17": 2.5, "0": 100})"));
    const auto &bias = r.common.generation.sampling.logit_bias;
    ASSERT_EQ(bias.size(), 3u);
    // nlohmann's objects are ordered by key: "0", "17", "5".
    EXPECT_EQ(bias[0].token, 0);
    EXPECT_FLOAT_EQ(bias[0].bias, 100.0f);
    EXPECT_EQ(bias[1].token, 17);
    EXPECT_FLOAT_EQ(bias[1].bias, 2.5f);
    EXPECT_EQ(bias[2].token, 5);
    EXPECT_TRUE(std::isinf(bias[2].bias) && bias[2].bias < 0);
    EXPECT_EQ(chat_error_param(with_message(R"("logit_bias": {"abc": 1})")), "logit_bias");
    EXPECT_EQ(chat_error_param(with_message(R"("logit_bias": {"1000": 1})")), "logit_bias");
    EXPECT_EQ(chat_error_param(with_message(R"("logit_bias": {"-1": 1})")), "logit_bias");
    EXPECT_EQ(chat_error_param(with_message(R"("logit_bias": {"12x": 1})")), "logit_bias");
    EXPECT_EQ(chat_error_param(with_message(R"("logit_bias": {"3": 101})")), "logit_bias.3");
    EXPECT_EQ(chat_error_param(with_message(R"("logit_bias": {"3": "1"})")), "logit_bias.3");
    EXPECT_EQ(chat_error_param(with_message(R"("logit_bias": [1])")), "logit_bias");
}

TEST(ServeRequest, StopIsAStringOrUpToFourStrings) {
    EXPECT_EQ(chat(with_message(R"("stop": "END")")).common.generation.stop,
              std::vector<std::string>{"END"});
    EXPECT_EQ(chat(with_message(R"("stop": ["a", "", "b", "c"])")).common.generation.stop,
              (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(chat_error_param(with_message(R"("stop": ["a", "b", "c", "d", "e"])")), "stop");
    EXPECT_TRUE(chat(with_message(R"("stop": null)")).common.generation.stop.empty());
}

TEST(ServeRequest, UnknownFieldsAreIgnoredAndNullMeansUnset) {
    serve::ChatRequest r = chat(with_message(
        R"("user": "u1", "metadata": {"a": 1}, "parallel_tool_calls": true, "temperature": null,
           "seed": 7, "stream": true, "stream_options": {"include_usage": true})"));
    EXPECT_FLOAT_EQ(r.common.generation.sampling.temperature, 1.0f);
    EXPECT_TRUE(r.common.generation.sampling.has_seed);
    EXPECT_EQ(r.common.generation.sampling.seed, 7u);
    EXPECT_TRUE(r.common.stream);
    EXPECT_TRUE(r.common.include_usage);
    EXPECT_EQ(r.common.generation.top_logprobs, -1);
    EXPECT_EQ(
        chat(with_message(R"("logprobs": true, "top_logprobs": 3)")).common.generation.top_logprobs,
        3);
}

TEST(ServeRequest, ToolChoiceNoneDropsTheToolsAndRequiredOrANamedToolForcesACall) {
    const std::string tools = R"("tools": [{"type": "function", "function": {"name": "get",
        "parameters": {"type": "object"}}}])";
    EXPECT_FALSE(chat(with_message(tools)).tools_json.empty());
    EXPECT_FALSE(chat(with_message(tools + R"(, "tool_choice": "auto")")).tools_json.empty());
    EXPECT_TRUE(chat(with_message(tools + R"(, "tool_choice": "none")")).tools_json.empty());
    EXPECT_EQ(chat(with_message(tools)).tool_choice, serve::ToolChoice::Auto);
    serve::ChatRequest r = chat(with_message(tools + R"(, "tool_choice": "required")"));
    EXPECT_EQ(r.tool_choice, serve::ToolChoice::Required);
    EXPECT_FALSE(r.tools_json.empty());
    r = chat(with_message(tools +
                          R"(, "tool_choice": {"type": "function", "function": {"name": "get"}})"));
    EXPECT_EQ(r.tool_choice, serve::ToolChoice::Named);
    EXPECT_EQ(r.tool_name, "get");
    EXPECT_EQ(chat_error_param(with_message(
                  tools + R"(, "tool_choice": {"type": "function", "function": {"name": "put"}})")),
              "tool_choice.function.name")
        << "a function that is not among the tools";
    EXPECT_EQ(chat_error_param(with_message(tools + R"(, "tool_choice": {"type": "function"})")),
              "tool_choice.function.name");
    EXPECT_EQ(chat_error_param(with_message(tools + R"(, "tool_choice": "always")")),
              "tool_choice");
    EXPECT_EQ(chat_error_param(with_message(tools + R"(, "tool_choice": "required",
        "response_format": {"type": "json_object"})")),
              "tool_choice")
        << "a forced call and a response format cannot both shape the reply";
    EXPECT_EQ(chat_error_param(with_message(R"("tools": [{"type": "function", "function": {}}])")),
              "tools[0].function.name");
    EXPECT_EQ(chat_error_param(with_message(R"("tools": [{"type": "retrieval"}])")),
              "tools[0].type");
    EXPECT_EQ(chat_error_param(with_message(R"("tools": {"name": "x"})")), "tools");
}

TEST(ServeRequest, ResponseFormatGivesTheSchemaToEnforce) {
    EXPECT_EQ(chat(with_message(R"("response_format": {"type": "text"})")).format,
              serve::ResponseFormat::Text);
    serve::ChatRequest r = chat(with_message(R"("response_format": {"type": "json_object"})"));
    EXPECT_EQ(r.format, serve::ResponseFormat::JsonObject);
    EXPECT_EQ(json::parse(r.schema_json), json::parse(R"({"type": "object"})"));
    r = chat(with_message(R"("response_format": {"type": "json_schema", "json_schema":
        {"name": "p", "strict": true, "schema": {"type": "object", "required": ["a"]}}})"));
    EXPECT_EQ(r.format, serve::ResponseFormat::JsonSchema);
    EXPECT_EQ(json::parse(r.schema_json), json::parse(R"({"type": "object", "required": ["a"]})"));
    EXPECT_EQ(chat_error_param(with_message(R"("response_format": {"type": "yaml"})")),
              "response_format.type");
    EXPECT_EQ(chat_error_param(with_message(R"("response_format": {"type": "json_schema"})")),
              "response_format.json_schema");
    EXPECT_EQ(chat_error_param(with_message(
                  R"("response_format": {"type": "json_schema", "json_schema": {"schema": 1}})")),
              "response_format.json_schema.schema");
}

TEST(ServeRequest, CompletionPromptsAreTextOrTokenIds) {
    auto parse = [](const std::string &body) {
        return serve::parse_completion_request(serve::parse_body(body), kLimits);
    };
    auto error_param = [&](const std::string &body) -> std::string {
        try {
            parse(body);
        } catch (const RequestError &e) {
            return e.param();
        }
        return "(none)";
    };
    serve::CompletionRequest r = parse(R"({"prompt": "Once upon"})");
    EXPECT_FALSE(r.prompt_is_tokens);
    EXPECT_EQ(r.prompt_text, "Once upon");
    EXPECT_EQ(r.common.generation.max_tokens, 16u);  // OpenAI's default for completions
    r = parse(R"({"prompt": [1, 2, 999]})");
    EXPECT_TRUE(r.prompt_is_tokens);
    EXPECT_EQ(r.prompt_tokens, (std::vector<int32_t>{1, 2, 999}));
    EXPECT_EQ(parse(R"({"prompt": [[4, 5]]})").prompt_tokens, (std::vector<int32_t>{4, 5}));
    EXPECT_EQ(parse(R"({"prompt": ["one"]})").prompt_text, "one");
    EXPECT_EQ(error_param(R"({"prompt": [1, 1000]})"), "prompt[1]");
    EXPECT_EQ(error_param(R"({"prompt": [1, -1]})"), "prompt[1]");
    EXPECT_EQ(error_param(R"({"prompt": ["a", "b"]})"), "prompt");
    EXPECT_EQ(error_param(R"({"prompt": []})"), "prompt");
    EXPECT_EQ(error_param(R"({"prompt": 3})"), "prompt");
    EXPECT_EQ(error_param(R"({})"), "prompt");
    EXPECT_EQ(error_param(R"({"prompt": "a", "logprobs": 6})"), "logprobs");
    EXPECT_EQ(error_param(R"({"prompt": "a", "echo": "yes"})"), "echo");
    r = parse(R"({"prompt": "a", "echo": true, "logprobs": 2})");
    EXPECT_TRUE(r.common.generation.prompt_logprobs);
    EXPECT_EQ(r.common.generation.top_logprobs, 2);
    r = parse(R"({"prompt": "a", "echo": true})");
    EXPECT_FALSE(r.common.generation.prompt_logprobs);
    EXPECT_EQ(r.common.generation.top_logprobs, -1);
}

TEST(ServeRequest, TokenizeAndDetokenizeBodies) {
    serve::TokenizeRequest t = serve::parse_tokenize_request(
        serve::parse_body(R"({"content": "hi", "add_special": true, "with_pieces": true})"));
    EXPECT_EQ(t.content, "hi");
    EXPECT_TRUE(t.add_special);
    EXPECT_TRUE(t.parse_special);
    EXPECT_TRUE(t.with_pieces);
    EXPECT_THROW(serve::parse_tokenize_request(serve::parse_body(R"({"content": 1})")),
                 RequestError);
    EXPECT_EQ(serve::parse_detokenize_request(serve::parse_body(R"({"tokens": [3, 4]})"), kLimits),
              (std::vector<int32_t>{3, 4}));
    EXPECT_THROW(
        serve::parse_detokenize_request(serve::parse_body(R"({"tokens": [1000]})"), kLimits),
        RequestError);
    EXPECT_THROW(serve::parse_detokenize_request(serve::parse_body(R"({"tokens": "3"})"), kLimits),
                 RequestError);
}
