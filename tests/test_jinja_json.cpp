// JSON in and out of the Jinja interpreter (chat/json_value.h): parsed in document order with
// Python's types, written as Python's json.dumps writes it, malformed text refused.
#include <gtest/gtest.h>

#include <string>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/error.h"
#include "jinja_render.h"

using namespace vkllm::chat;
using jinja_test::render;

namespace {

TEST(JinjaJson, ParsesObjectsInOrderWithTypes) {
    Value v =
        parse_json(R"({"b": 1, "a": [true, null, 1.5, -2, "x\u00e9\ud83d\ude00\n"], "c": {}})");
    ASSERT_TRUE(v.is_dict());
    ASSERT_EQ(v.dict().items.size(), 3u);
    EXPECT_EQ(v.dict().items[0].first.str(), "b");
    EXPECT_EQ(v.dict().items[1].first.str(), "a");
    const List &a = v.dict().find(std::string("a"))->list();
    EXPECT_TRUE(a[0].as_bool());
    EXPECT_TRUE(a[1].is_none());
    EXPECT_EQ(a[2].kind(), Value::Kind::Float);
    EXPECT_EQ(a[3].as_int(), -2);
    EXPECT_EQ(a[4].str(), "x\xc3\xa9\xf0\x9f\x98\x80\n");
}

TEST(JinjaJson, RoundTripsThroughTojsonAsJsonDumps) {
    const std::string text =
        R"({"name": "get_weather", "arguments": {"city": "Lisbon", "days": 3, "ratio": 0.5, "tags": ["a", "b"], "none": null, "ok": true}})";
    EXPECT_EQ(to_json(parse_json(text), JsonOptions{}), text);
    JsonOptions indented;
    indented.indent = "  ";
    indented.item_separator = ",";
    EXPECT_EQ(to_json(parse_json(R"({"a": [1, {}], "b": []})"), indented),
              "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
    JsonOptions sorted;
    sorted.sort_keys = true;
    sorted.item_separator = ",";
    sorted.key_separator = ":";
    EXPECT_EQ(to_json(parse_json(R"({"b": 1, "a": {"d": 2, "c": 3}})"), sorted),
              R"({"a":{"c":3,"d":2},"b":1})");
}

TEST(JinjaJson, KeepsNonAsciiAndEscapesControls) {
    EXPECT_EQ(to_json(Value("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"), JsonOptions{}),
              "\"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80\"");
    EXPECT_EQ(to_json(Value("q\"b\\n\n\r\t\b\f\x01\x1f\x7f"), JsonOptions{}),
              "\"q\\\"b\\\\n\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\"");
    JsonOptions ascii;
    ascii.ensure_ascii = true;
    EXPECT_EQ(to_json(Value("\xc3\xa9\xf0\x9f\x98\x80"), ascii), "\"\\u00e9\\ud83d\\ude00\"");
}

TEST(JinjaJson, FloatsPrintAsPythonRepr) {
    EXPECT_EQ(to_json(parse_json("[1.0, 0.1, 1e16, 1e-5, 123456.789, -0.0, 1e300]"), JsonOptions{}),
              "[1.0, 0.1, 1e+16, 1e-05, 123456.789, -0.0, 1e+300]");
}

TEST(JinjaJson, RefusesMalformedText) {
    for (const char *bad :
         {"", "{", "[1,]", "{\"a\" 1}", "nul", "\"\\x\"", "[1] x", "01x", "\"a\nb\""})
        EXPECT_THROW(parse_json(bad), vkllm::Error) << bad;
    EXPECT_THROW(parse_json(std::string(10000, '[')), vkllm::Error);
}

TEST(JinjaJson, RefusesWhatJsonCannotHold) {
    EXPECT_THROW(render("{{ x | tojson }}"), vkllm::Error);
    EXPECT_THROW(render("{{ namespace() | tojson }}"), vkllm::Error);
}

}  // namespace
