// The reply parser (src/chat/reply_parser.h) recovers reasoning, answer and tool calls from
// replies in each format the chat templates produce, whole and streamed: every reply is also
// pushed a byte at a time and in pseudo-random pieces, and must give the same parts.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "chat/json_scan.h"
#include "chat/reply_parser.h"

using vkllm::chat::JsonScan;
using vkllm::chat::ReplyFormat;
using vkllm::chat::ReplyParser;
using vkllm::chat::ReplyPart;
using vkllm::chat::ToolCall;

namespace {

void append(ReplyPart &all, ReplyPart p) {
    all.reasoning += p.reasoning;
    all.content += p.content;
    for (ToolCall &c : p.tool_calls)
        all.tool_calls.push_back(std::move(c));
}

ReplyPart parse_in_pieces(ReplyFormat f, const std::string &reply, const std::vector<size_t> &cuts,
                          bool in_reasoning) {
    ReplyParser p(f, in_reasoning);
    ReplyPart all;
    size_t from = 0;
    for (size_t cut : cuts) {
        append(all, p.push(reply.substr(from, cut - from)));
        from = cut;
    }
    append(all, p.push(reply.substr(from)));
    append(all, p.finish());
    return all;
}

std::string describe(const ReplyPart &p) {
    std::string s = "reasoning [" + p.reasoning + "] content [" + p.content + "]";
    for (const ToolCall &c : p.tool_calls)
        s += " call {" + c.id + "|" + c.name + "|" + c.arguments + "}";
    return s;
}

// Parses `reply` whole, a byte at a time and in random pieces; all three must agree.
ReplyPart parse(ReplyFormat f, const std::string &reply, bool in_reasoning = false) {
    ReplyPart whole = parse_in_pieces(f, reply, {}, in_reasoning);
    std::vector<size_t> bytes;
    for (size_t i = 1; i < reply.size(); ++i)
        bytes.push_back(i);
    EXPECT_EQ(describe(parse_in_pieces(f, reply, bytes, in_reasoning)), describe(whole))
        << "byte by byte: " << reply;
    std::mt19937 rng(7);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<size_t> cuts;
        for (size_t at = 1 + rng() % 5; at < reply.size(); at += 1 + rng() % 7)
            cuts.push_back(at);
        EXPECT_EQ(describe(parse_in_pieces(f, reply, cuts, in_reasoning)), describe(whole))
            << "in pieces: " << reply;
    }
    return whole;
}

void expect_call(const ReplyPart &p, size_t i, const std::string &name, const std::string &args,
                 const std::string &id = "") {
    ASSERT_GT(p.tool_calls.size(), i) << describe(p);
    EXPECT_EQ(p.tool_calls[i].name, name);
    EXPECT_EQ(p.tool_calls[i].arguments, args);
    EXPECT_EQ(p.tool_calls[i].id, id);
}

}  // namespace

TEST(ReplyParser, PlainRepliesPassThroughUntouched) {
    ReplyPart p = parse(ReplyFormat::Plain, "  Hello <think> world\n");
    EXPECT_EQ(p.content, "  Hello <think> world\n");
    EXPECT_TRUE(p.reasoning.empty());
}

TEST(ReplyParser, ThinkBlocksBecomeReasoningAndTheRestTheAnswer) {
    ReplyPart p =
        parse(ReplyFormat::Hermes, "<think>\nThe user greets me.\n</think>\n\nHello there!");
    EXPECT_EQ(p.reasoning, "The user greets me.");
    EXPECT_EQ(p.content, "Hello there!");
    EXPECT_TRUE(p.tool_calls.empty());
}

TEST(ReplyParser, AReplyThatBeginsInsideAnOpenThinkBlockIsReasoningUntilItCloses) {
    ReplyPart p = parse(ReplyFormat::Hermes, "Let me think.\n</think>\n\n42", true);
    EXPECT_EQ(p.reasoning, "Let me think.");
    EXPECT_EQ(p.content, "42");
}

TEST(ReplyParser, HermesToolCallsGiveNameAndTheArgumentsAsWritten) {
    ReplyPart p =
        parse(ReplyFormat::Hermes,
              "<think>I need the weather.</think>\n<tool_call>\n{\"name\": \"get_weather\", "
              "\"arguments\": {\"location\": \"Paris, FR\", \"unit\": \"celsius\"}}\n"
              "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n"
              "</tool_call>");
    EXPECT_EQ(p.reasoning, "I need the weather.");
    EXPECT_EQ(p.content, "");
    ASSERT_EQ(p.tool_calls.size(), 2u);
    expect_call(p, 0, "get_weather", "{\"location\": \"Paris, FR\", \"unit\": \"celsius\"}");
    expect_call(p, 1, "get_time", "{}");
}

TEST(ReplyParser, ArgumentsGivenAsAJsonStringAreUnquoted) {
    ReplyPart p =
        parse(ReplyFormat::Hermes,
              "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>");
    expect_call(p, 0, "f", "{\"x\": 1}");
}

TEST(ReplyParser, QwenCoderXmlCallsBecomeJsonArguments) {
    ReplyPart p = parse(ReplyFormat::Hermes,
                        "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=location>\n"
                        "Paris \"centre\"\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
                        "</function>\n</tool_call>");
    EXPECT_EQ(p.content, "Checking.");
    expect_call(p, 0, "get_weather", "{\"location\": \"Paris \\\"centre\\\"\", \"days\": 3}");
}

TEST(ReplyParser, AMalformedCallStaysInTheAnswerWithItsMarkers) {
    ReplyPart p = parse(ReplyFormat::Hermes, "<tool_call>{\"name\": oops}</tool_call>");
    EXPECT_TRUE(p.tool_calls.empty());
    EXPECT_EQ(p.content, "<tool_call>{\"name\": oops}</tool_call>");
}

TEST(ReplyParser, AnUnfinishedCallAtTheEndIsGivenBackAsText) {
    ReplyPart p = parse(ReplyFormat::Hermes, "Sure.<tool_call>{\"name\": \"get_wea");
    EXPECT_TRUE(p.tool_calls.empty());
    EXPECT_EQ(p.content, "Sure.<tool_call>{\"name\": \"get_wea");
}

TEST(ReplyParser, TextThatOnlyLooksLikeTheStartOfAMarkerIsAnswer) {
    ReplyPart p = parse(ReplyFormat::Hermes, "a <thin b < c <tool d");
    EXPECT_EQ(p.content, "a <thin b < c <tool d");
}

TEST(ReplyParser, MistralV3ToolCallsAreAJsonArrayWithIds) {
    ReplyPart p = parse(ReplyFormat::Mistral,
                        "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"location\": "
                        "\"Paris\"}, \"id\": \"abc123def\"}, {\"name\": \"get_time\", "
                        "\"arguments\": {\"tz\": \"CET\"}, \"id\": \"xyz987uvw\"}]");
    ASSERT_EQ(p.tool_calls.size(), 2u);
    expect_call(p, 0, "get_weather", "{\"location\": \"Paris\"}", "abc123def");
    expect_call(p, 1, "get_time", "{\"tz\": \"CET\"}", "xyz987uvw");
    EXPECT_EQ(p.content, "");
}

TEST(ReplyParser, MistralNamedCallsWithArgsAndCallIds) {
    ReplyPart p = parse(ReplyFormat::Mistral,
                        "[THINK]Two lookups.[/THINK]On it.[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e"
                        "[ARGS]{\"location\": \"Paris\"}[TOOL_CALLS]get_time[ARGS]{}");
    EXPECT_EQ(p.reasoning, "Two lookups.");
    EXPECT_EQ(p.content, "On it.");
    ASSERT_EQ(p.tool_calls.size(), 2u);
    expect_call(p, 0, "get_weather", "{\"location\": \"Paris\"}", "a1b2c3d4e");
    expect_call(p, 1, "get_time", "{}");
}

TEST(ReplyParser, Llama3JsonRepliesAreToolCalls) {
    ReplyPart p = parse(ReplyFormat::Llama3,
                        "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Paris\"}}");
    expect_call(p, 0, "get_weather", "{\"location\": \"Paris\"}");
    EXPECT_EQ(p.content, "");
    ReplyPart tagged = parse(ReplyFormat::Llama3,
                             "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": [1, 2]}}");
    expect_call(tagged, 0, "f", "{\"a\": [1, 2]}");
}

TEST(ReplyParser, Llama3ProseAndJsonThatIsNoCallStayAnswers) {
    EXPECT_EQ(parse(ReplyFormat::Llama3, "The weather is {sunny}.").content,
              "The weather is {sunny}.");
    ReplyPart p = parse(ReplyFormat::Llama3, "{\"answer\": 42}");
    EXPECT_TRUE(p.tool_calls.empty());
    EXPECT_EQ(p.content, "{\"answer\": 42}");
}

TEST(ReplyParser, HarmonyChannelsSplitAnalysisCallsAndTheFinalAnswer) {
    ReplyPart p = parse(ReplyFormat::Harmony,
                        "<|channel|>analysis<|message|>User wants weather. Call the tool.<|end|>"
                        "<|start|>assistant<|channel|>commentary to=functions.get_weather "
                        "<|constrain|>json<|message|>{\"location\":\"Paris\"}<|call|>");
    EXPECT_EQ(p.reasoning, "User wants weather. Call the tool.");
    EXPECT_EQ(p.content, "");
    expect_call(p, 0, "get_weather", "{\"location\":\"Paris\"}");

    ReplyPart answer = parse(ReplyFormat::Harmony,
                             "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant"
                             "<|channel|>final<|message|>Paris is sunny.<|return|>");
    EXPECT_EQ(answer.reasoning, "Simple.");
    EXPECT_EQ(answer.content, "Paris is sunny.");
    EXPECT_TRUE(answer.tool_calls.empty());
}

TEST(ReplyParser, HarmonyRecipientInTheRolePartIsACall) {
    ReplyPart p = parse(ReplyFormat::Harmony,
                        "<|start|>assistant to=functions.lookup<|channel|>commentary json"
                        "<|message|>{\"q\": \"x\"}<|call|>");
    expect_call(p, 0, "lookup", "{\"q\": \"x\"}");
}

TEST(ReplyParser, TheFormatIsReadFromTheTemplatesMarkers) {
    using vkllm::chat::reply_format_of;
    EXPECT_EQ(reply_format_of("{{ '<|start|>assistant<|channel|>final' }}"), ReplyFormat::Harmony);
    EXPECT_EQ(reply_format_of("{{ '[TOOL_CALLS]' }}"), ReplyFormat::Mistral);
    EXPECT_EQ(reply_format_of("<tool_call>\\n{{ tool_call | tojson }}"), ReplyFormat::Hermes);
    EXPECT_EQ(reply_format_of("<|start_header_id|> \"parameters\": "), ReplyFormat::Llama3);
    EXPECT_EQ(reply_format_of("{{ message['content'] }}"), ReplyFormat::Plain);
    EXPECT_TRUE(vkllm::chat::prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"));
    EXPECT_FALSE(vkllm::chat::prompt_opens_reasoning("<think>\n\n</think>\n\n"));
}

TEST(JsonScan, TellsCompleteIncompleteAndInvalidValuesApart) {
    size_t end = 0;
    EXPECT_EQ(vkllm::chat::json_scan(" {\"a\": [1, -2.5e3, true, null, \"\\u00e9\"]} x", 0, &end),
              JsonScan::Complete);
    EXPECT_EQ(end, 41u);
    EXPECT_EQ(vkllm::chat::json_scan("{\"a\": [1, 2", 0, &end), JsonScan::Incomplete);
    EXPECT_EQ(vkllm::chat::json_scan("{\"a\": tr", 0, &end), JsonScan::Incomplete);
    EXPECT_EQ(vkllm::chat::json_scan("12", 0, &end), JsonScan::Incomplete);
    EXPECT_EQ(vkllm::chat::json_scan("{\"a\" 1}", 0, &end), JsonScan::Invalid);
    EXPECT_EQ(vkllm::chat::json_scan("[01]", 0, &end), JsonScan::Invalid);
    EXPECT_EQ(vkllm::chat::json_scan(std::string(600, '['), 0, &end), JsonScan::Invalid);
    std::string s;
    ASSERT_TRUE(vkllm::chat::json_string("\"a\\n\\u00e9\\ud83d\\ude00\"", &s));
    EXPECT_EQ(s, "a\n\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT_EQ(vkllm::chat::json_quote("a\"\n\x01é"), "\"a\\\"\\n\\u0001é\"");
}
