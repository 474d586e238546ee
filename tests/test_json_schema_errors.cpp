// The JSON Schema converter's refusals and errors: an unsupported keyword is named with its JSON
// pointer (VKLLM_ERR_UNSUPPORTED), a malformed schema says what is wrong where
// (VKLLM_ERR_INVALID_ARGUMENT), and hostile sizes stop at the documented limits. Also the exact
// languages of the generated pieces, each against an independent reference: integer ranges
// against arithmetic, dates against a calendar, extra keys against the declared names.
#include <gtest/gtest.h>

#include <string>

#include "grammar/json_schema.h"
#include "grammar_test_util.h"

namespace vkllm::grammar {
namespace {

using testing::compile;
using testing::is_prefix;
using testing::matches;

std::shared_ptr<const Grammar> schema(const std::string &json) {
    return compile(json_schema_to_gbnf(json));
}

struct Failure {
    vkllm_status status = VKLLM_OK;
    std::string message;
};

Failure convert_error(const std::string &json) {
    try {
        json_schema_to_gbnf(json);
    } catch (const Error &e) {
        return {e.status(), e.what()};
    }
    return {};
}

TEST(JsonSchema, EmptyTextTrueAndEmptyObjectMeanAnyJsonValue) {
    for (const char *any : {"", "  ", "{}", "true", "{\"title\": \"anything\"}"}) {
        auto g = schema(any);
        for (const char *text : {"1", "-2.5e3", "\"x\"", "null", "true", "[1, {\"a\": [false]}]"})
            EXPECT_TRUE(matches(g, text)) << any << " / " << text;
        for (const char *text : {"", "[1,]", "{\"a\"}", "nan", "'x'"})
            EXPECT_FALSE(matches(g, text)) << any << " / " << text;
    }
}

TEST(JsonSchema, WhitespaceIsBoundedSoAModelCannotLoopOnIt) {
    auto g = schema(R"({"type": "array", "items": {"type": "integer"}})");
    EXPECT_TRUE(matches(g, "[1, 2]"));
    EXPECT_TRUE(matches(g, "[\n  1,\n\t2\n]"));
    EXPECT_TRUE(matches(g, "[1,\n" + std::string(20, ' ') + "2]"));
    EXPECT_FALSE(matches(g, "[1,\n" + std::string(21, ' ') + "2]"));
    EXPECT_FALSE(matches(g, "[1,  2]"));
}

TEST(JsonSchema, UnboundedIntegersAndNumbersHaveBoundedDigits) {
    auto g = schema(R"({"type": "array", "items": {"type": ["integer", "number"]}})");
    EXPECT_TRUE(matches(g, "[" + std::string(16, '9') + "]"));
    EXPECT_FALSE(matches(g, "[" + std::string(17, '9') + "]"));
    EXPECT_TRUE(matches(g, "[1." + std::string(16, '5') + "]"));
    EXPECT_FALSE(matches(g, "[1." + std::string(17, '5') + "]"));
    EXPECT_FALSE(matches(g, "[01]"));
    EXPECT_TRUE(matches(g, "[-1.5e-99, 2E+7]"));
    EXPECT_FALSE(matches(g, "[1e100]"));  // three exponent digits could overflow a double
}

// Every integer in a window around the bounds, against plain comparison.
TEST(JsonSchema, IntegerBoundsAcceptExactlyTheIntegersWithin) {
    struct Range {
        long long lo, hi;
    };
    for (Range r : {Range{0, 0}, Range{-5, 5}, Range{7, 123}, Range{-1000, -1}, Range{-99, 100},
                    Range{10, 10000}, Range{-12345, 678}, Range{99, 101}, Range{1, 9}}) {
        auto g = schema("{\"type\": \"integer\", \"minimum\": " + std::to_string(r.lo) +
                        ", \"maximum\": " + std::to_string(r.hi) + "}");
        long long span = std::min<long long>(r.hi - r.lo, 3000);
        for (long long x = r.lo - 120; x <= r.lo + span + 120; ++x)
            EXPECT_EQ(matches(g, std::to_string(x)), x >= r.lo && x <= r.hi)
                << x << " in [" << r.lo << ", " << r.hi << "]";
        for (long long x = r.hi - 50; x <= r.hi + 50; ++x)
            EXPECT_EQ(matches(g, std::to_string(x)), x >= r.lo && x <= r.hi) << x;
    }
}

TEST(JsonSchema, ExclusiveAndOneSidedIntegerBounds) {
    auto g = schema(R"({"type": "integer", "exclusiveMinimum": -3, "exclusiveMaximum": 3})");
    for (int x = -10; x <= 10; ++x)
        EXPECT_EQ(matches(g, std::to_string(x)), x > -3 && x < 3) << x;
    auto above = schema(R"({"type": "integer", "minimum": 250})");
    for (int x = -300; x <= 3000; ++x)
        EXPECT_EQ(matches(above, std::to_string(x)), x >= 250) << x;
    EXPECT_TRUE(matches(above, "9999999999999999"));
    auto below = schema(R"({"type": "integer", "maximum": -250.5})");
    for (int x = -3000; x <= 300; ++x)
        EXPECT_EQ(matches(below, std::to_string(x)), x <= -251) << x;
    EXPECT_TRUE(matches(below, "-9999999999999999"));
    auto huge = schema(R"({"type": "integer", "minimum": 100000000000000000})");
    EXPECT_TRUE(matches(huge, "100000000000000000"));
    EXPECT_TRUE(matches(huge, "999999999999999999"));
    EXPECT_FALSE(matches(huge, "99999999999999999"));
}

TEST(JsonSchema, DatesAreCalendarDates) {
    auto g = schema(R"({"type": "string", "format": "date"})");
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    for (int y : {1, 4, 100, 1600, 1900, 1999, 2000, 2023, 2024, 2100, 2400, 9999}) {
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        for (int m = 0; m <= 13; ++m)
            for (int d = 0; d <= 32; ++d) {
                char text[32];
                std::snprintf(text, sizeof text, "\"%04d-%02d-%02d\"", y, m, d);
                bool real = m >= 1 && m <= 12 && d >= 1 && d <= days[m - 1] + (m == 2 && leap);
                EXPECT_EQ(matches(g, text), real) << text;
            }
    }
    EXPECT_FALSE(matches(g, "\"0000-01-01\""));
}

TEST(JsonSchema, ExtraKeysAreAnyKeyButTheDeclaredOnes) {
    auto g = schema(R"({"type": "object", "properties": {"id": {"type": "integer"},
        "idx": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}})");
    EXPECT_TRUE(matches(g, R"({"id": 1, "idx": 2})"));
    EXPECT_TRUE(matches(g, R"({"id": 1, "i": true, "ids": false, "": true, "x": false})"));
    EXPECT_TRUE(matches(g, R"({"idxx": true})"));
    EXPECT_FALSE(matches(g, R"({"id": true})"));  // a declared key takes its own schema
    EXPECT_FALSE(matches(g, R"({"id": 1, "idx": true})"));
    EXPECT_FALSE(matches(g, R"({"idx": 1, "id": 2})"));  // declared keys in schema order
    auto closed = schema(R"({"type": "object", "properties": {"a": {"type": "integer"}}})");
    EXPECT_FALSE(matches(closed, R"({"a": 1, "b": 2})"));  // additionalProperties false by default
}

TEST(JsonSchema, RequiredKeysNotDeclaredComeAfterTheDeclaredOnesWithTheExtraSchema) {
    auto g = schema(R"({"properties": {"x": {"const": 0}}, "required": ["b", "a"],
        "additionalProperties": {"type": "boolean"}})");
    EXPECT_TRUE(matches(g, R"({"b": true, "a": false})"));
    EXPECT_TRUE(matches(g, R"({"x": 0, "b": true, "a": false, "c": true})"));
    EXPECT_FALSE(matches(g, R"({"b": 1, "a": false})"));
    EXPECT_FALSE(matches(g, R"({"b": true})"));
    auto any = schema(R"({"required": ["k"]})");
    EXPECT_TRUE(matches(any, R"({"k": [1, {"z": null}]})"));
    EXPECT_FALSE(matches(any, R"({})"));
}

TEST(JsonSchema, EqualSubschemasShareOneRule) {
    std::string gbnf = json_schema_to_gbnf(R"({"properties": {
        "a": {"type": "string", "maxLength": 40}, "b": {"type": "string", "maxLength": 40},
        "c": {"type": "string", "maxLength": 41}}})");
    size_t first = gbnf.find("char{0,40}");
    ASSERT_NE(first, std::string::npos) << gbnf;
    EXPECT_EQ(gbnf.find("char{0,40}", first + 1), std::string::npos) << gbnf;
    EXPECT_NE(gbnf.find("char{0,41}"), std::string::npos) << gbnf;
}

TEST(JsonSchema, APropertyWhoseSchemaIsFalseNeverAppears) {
    auto g = schema(R"({"properties": {"a": false, "b": {"const": 1}},
        "additionalProperties": {"type": "integer"}})");
    EXPECT_TRUE(matches(g, R"({"b": 1})"));
    EXPECT_TRUE(matches(g, R"({"b": 1, "c": 2})"));
    EXPECT_FALSE(matches(g, R"({"a": 1})"));
    EXPECT_FALSE(matches(g, R"({"b": 1, "a": 1})"));
}

TEST(JsonSchema, OptionalPropertiesMayAppearInAnySubsetInSchemaOrder) {
    auto g = schema(R"({"properties": {"a": {"const": 1}, "b": {"const": 2}, "c": {"const": 3},
        "d": {"const": 4}}, "required": ["b"]})");
    const char *keys = "abcd";
    for (int mask = 0; mask < 16; ++mask) {
        std::string text = "{";
        for (int i = 0; i < 4; ++i)
            if (mask & (1 << i))
                text += std::string(text.size() > 1 ? ", " : "") + "\"" + keys[i] +
                        "\": " + std::to_string(i + 1);
        text += "}";
        EXPECT_EQ(matches(g, text), bool(mask & 2)) << text;
    }
}

TEST(JsonSchema, KeysAndEnumStringsAreEscapedAsJsonWritesThem) {
    auto g = schema(R"({"properties": {"a\"b\\c\u00e9": {"enum": ["x\ny", "tab\t", "\u65e5"]}},
        "required": ["a\"b\\c\u00e9"]})");
    EXPECT_TRUE(matches(g, "{\"a\\\"b\\\\c\xC3\xA9\": \"x\\ny\"}"));
    EXPECT_TRUE(matches(g, "{\"a\\\"b\\\\c\xC3\xA9\": \"tab\\t\"}"));
    EXPECT_TRUE(matches(g, "{\"a\\\"b\\\\c\xC3\xA9\": \"\xE6\x97\xA5\"}"));
    EXPECT_FALSE(matches(g, "{\"a\\\"b\\\\c\xC3\xA9\": \"x\ny\"}"));
}

TEST(JsonSchema, RecursiveDefinitionsReferToTheirOwnRule) {
    auto g = schema(R"({"$defs": {"list": {"type": "array", "maxItems": 2,
        "items": {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/list"}]}}},
        "$ref": "#/$defs/list"})");
    EXPECT_TRUE(matches(g, "[1, [2, [[3], []]]]"));
    EXPECT_FALSE(matches(g, "[1, [2, 3, 4]]"));
    auto self = schema(R"({"type": "object", "properties": {"next": {"$ref": "#"}}})");
    EXPECT_TRUE(matches(self, R"({"next": {"next": {}}})"));
}

TEST(JsonSchema, ASchemaNoValueSatisfiesMatchesNoTextAndLeavesNoDeadEnd) {
    for (const char *text : {R"({"enum": []})", "false", R"({"anyOf": [false, {"enum": []}]})",
                             R"({"properties": {"a": false}, "required": ["a"]})"}) {
        auto g = schema(text);
        GrammarState state(g);
        EXPECT_FALSE(state.is_complete()) << text;
        for (const char *value : {"{", "[", "\"", "0", "n", "t", "f", " "})
            EXPECT_FALSE(GrammarState(g).accept_bytes(value)) << text << " takes " << value;
    }
    // An optional property, an item or a branch that nothing satisfies is left out, so that a
    // model never writes a prefix it cannot finish.
    auto g = schema(R"({"properties": {"a": {"enum": []}, "b": {"const": 1}},
        "additionalProperties": false})");
    EXPECT_TRUE(matches(g, R"({"b": 1})"));
    EXPECT_FALSE(is_prefix(g, R"({"a")"));
    auto items = schema(R"({"type": "array", "prefixItems": [{"type": "null"}, false]})");
    EXPECT_TRUE(matches(items, "[null]"));
    EXPECT_FALSE(is_prefix(items, "[null,"));
    auto choice = schema(R"({"anyOf": [{"enum": []}, {"type": "null"}]})");
    EXPECT_TRUE(matches(choice, "null"));
}

TEST(JsonSchema, OneOfWithProvablyDisjointBranchesIsAChoice) {
    auto types = schema(R"({"oneOf": [{"type": "integer"}, {"type": "string"}]})");
    EXPECT_TRUE(matches(types, "3"));
    EXPECT_TRUE(matches(types, R"("x")"));
    auto consts = schema(R"({"oneOf": [{"const": "a"}, {"enum": ["b", 1]}]})");
    EXPECT_TRUE(matches(consts, R"("b")"));
    EXPECT_FALSE(matches(consts, R"("c")"));
    // A required discriminator with different const values, through $ref and allOf.
    auto tagged = schema(R"({"$defs": {
        "cat": {"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}},
                "required": ["kind"]},
        "dog": {"allOf": [{"$ref": "#/$defs/base"}, {"properties": {"kind": {"enum": ["dog"]}}}]},
        "base": {"type": "object", "required": ["kind"]}},
        "oneOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}]})");
    EXPECT_TRUE(matches(tagged, R"({"kind": "cat", "lives": 9})"));
    EXPECT_TRUE(matches(tagged, R"({"kind": "dog"})"));
    EXPECT_FALSE(matches(tagged, R"({"kind": "cow"})"));
    // Not provable: an optional tag, overlapping enums, integer within number.
    for (
        const char *text :
        {R"({"oneOf": [{"properties": {"k": {"const": 1}}}, {"properties": {"k": {"const": 2}}}]})",
         R"({"oneOf": [{"enum": [1, 2]}, {"enum": [2.0, 3]}]})",
         R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})"})
        EXPECT_EQ(convert_error(text).status, VKLLM_ERR_UNSUPPORTED) << text;
}

TEST(JsonSchema, AllOfOfObjectSchemasMergesPropertiesAndRequired) {
    auto g = schema(R"({"$defs": {"named": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 3}}, "required": ["name"]}},
        "allOf": [{"$ref": "#/$defs/named"}, {"properties": {"age": {"type": "integer",
        "minimum": 0}, "name": {"minLength": 2}}, "required": ["age"]}]})");
    EXPECT_TRUE(matches(g, R"({"name": "ab", "age": 3})"));
    EXPECT_FALSE(matches(g, R"({"name": "a", "age": 3})"));  // both name schemas hold
    EXPECT_FALSE(matches(g, R"({"name": "abcd", "age": 3})"));
    EXPECT_FALSE(matches(g, R"({"name": "ab"})"));  // both required lists hold
    EXPECT_FALSE(matches(g, R"({"name": "ab", "age": -1})"));
    // A key one member declares falls under the other's additionalProperties.
    auto closed = schema(R"({"allOf": [{"properties": {"a": {}}, "additionalProperties": false},
        {"properties": {"b": {}}}]})");
    EXPECT_TRUE(matches(closed, R"({"a": 1})"));
    EXPECT_FALSE(is_prefix(closed, R"({"b")"));
    // $ref beside other keywords and anyOf beside them are the same conjunction.
    auto ref =
        schema(R"({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 1})");
    EXPECT_TRUE(matches(ref, R"("a")"));
    EXPECT_FALSE(matches(ref, R"("ab")"));
    auto alt = schema(R"({"type": "integer", "anyOf": [{"maximum": 0}, {"minimum": 10}]})");
    EXPECT_TRUE(matches(alt, "-3"));
    EXPECT_TRUE(matches(alt, "12"));
    EXPECT_FALSE(matches(alt, "5"));
    EXPECT_FALSE(matches(alt, R"("x")"));
    auto contradiction = schema(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})");
    EXPECT_FALSE(is_prefix(contradiction, "1"));
}

TEST(JsonSchemaErrors, DefinitionsInlinedExponentiallyOftenHitTheVisitLimit) {
    // Each D_i refers to D_(i+1) twice, beside a keyword, so each reference is merged (inlined)
    // on its own: 2^30 visits without a limit.
    std::string defs;
    for (int i = 0; i < 30; ++i)
        defs += sformat(R"("d%d": {"type": "object", "properties": {
            "a": {"$ref": "#/$defs/d%d", "type": "object"},
            "b": {"$ref": "#/$defs/d%d", "type": "object"}}},)",
                        i, i + 1, i + 1);
    Failure f = convert_error(R"({"$defs": {)" + defs + R"("d30": {}}, "$ref": "#/$defs/d0"})");
    EXPECT_EQ(f.status, VKLLM_ERR_INVALID_ARGUMENT) << f.message;
    EXPECT_NE(f.message.find("subschemas visited"), std::string::npos) << f.message;
}

TEST(JsonSchemaRefusals, EachUnsupportedKeywordIsNamedWithItsPointer) {
    struct Case {
        const char *schema;
        const char *message;
    };
    const Case cases[] = {
        {R"({"properties": {"zip": {"type": "string", "pattern": "^(?=1)[0-9]{5}$"}}})",
         "JSON Schema keyword 'pattern' at #/properties/zip is not supported with a lookaround"},
        {R"({"pattern": "(a)\\1"})",
         "keyword 'pattern' at # is not supported with a backreference"},
        {R"({"pattern": "\\bword"})", "keyword 'pattern' at # is not supported with '\\b'"},
        {R"({"pattern": "a^b"})", "keyword 'pattern' at # is not supported with '^' after"},
        {R"({"pattern": "\\p{L}"})", "keyword 'pattern' at # is not supported with a Unicode"},
        {R"({"type": "string", "pattern": "a", "maxLength": 3})", "keyword 'maxLength' at #"},
        {R"({"type": "array", "uniqueItems": true, "maxItems": 2})", "keyword 'uniqueItems' at #"},
        {R"({"not": {"type": "string"}})", "keyword 'not' at # is not supported"},
        {R"({"if": {}, "then": {}, "else": {}})", "keyword 'if' at # is not supported"},
        {R"({"type": "array", "uniqueItems": true})", "keyword 'uniqueItems' at #"},
        {R"({"type": "array", "contains": {"type": "integer"}})", "keyword 'contains' at #"},
        {R"({"patternProperties": {"^x": {}}})", "keyword 'patternProperties' at #"},
        {R"({"type": "integer", "multipleOf": 5})", "keyword 'multipleOf' at #"},
        {R"({"type": "number", "minimum": 0})", "keyword 'minimum' at # is not supported"},
        {R"({"type": "string", "format": "hostname"})", "keyword 'format' at # is not supported"},
        {R"({"$ref": "https://example.com/s.json"})", "keyword '$ref' at # is not supported"},
        {R"({"$ref": "#anchor"})", "keyword '$ref' at #"},
        {R"({"$defs": {"a": {"$id": "http://example.com/a", "$defs": {"b": {}}}},
            "$ref": "#/$defs/a/$defs/b"})",
         "keyword '$ref' at #"},
        {R"({"properties": {"a": {"$id": "http://example.com/a"}}})",
         "keyword '$id' at #/properties/a"},
        {R"({"oneOf": [{"type": "integer"}, {"minimum": 2}]})", "keyword 'oneOf' at #"},
        {R"({"oneOf": [{"type": "number"}, {}]})", "keyword 'oneOf' at #"},
        {R"({"oneOf": [true, true]})", "keyword 'oneOf' at #"},
        {R"({"oneOf": [{"type": "string"}, {"const": "a"}]})", "keyword 'oneOf' at #"},
        {R"({"allOf": [{"format": "date"}, {"format": "uuid"}]})", "keyword 'format' at #"},
        {R"({"prefixItems": [{"type": "integer"}, {"dependentSchemas": {}}]})",
         "keyword 'dependentSchemas' at #/prefixItems/1"},
        {R"({"type": "object", "minProperties": 1})", "keyword 'minProperties' at #"},
        {R"({"anyOf": [{"type": "integer"}], "oneOf": [{"type": "string"}]})",
         "keyword 'oneOf' at #"},
        {R"({"type": "object", "properties": {"a/b~": {"propertyNames": {}}}})",
         "keyword 'propertyNames' at #/properties/a~1b~0"},
        {R"({"$defs": {"x": {"unevaluatedProperties": false}}, "$ref": "#/$defs/x"})",
         "keyword 'unevaluatedProperties' at #/$defs/x"},
        {R"({"anyOf": [{"type": "null"}, {"not": {}}]})", "keyword 'not' at #/anyOf/1"},
        {R"({"type": "string", "maxLength": 100000})", "keyword 'maxLength' at #"},
        {R"({"type": "integer", "maximum": 1e20})", "keyword 'maximum' at #"},
    };
    for (const Case &c : cases) {
        Failure f = convert_error(c.schema);
        EXPECT_EQ(f.status, VKLLM_ERR_UNSUPPORTED) << c.schema << ": " << f.message;
        EXPECT_NE(f.message.find(c.message), std::string::npos) << c.schema << ": " << f.message;
    }
}

TEST(JsonSchemaErrors, MalformedSchemasSayWhatIsWrongAndWhere) {
    struct Case {
        const char *schema;
        const char *message;
    };
    const Case cases[] = {
        {R"({"type": "string", "minLength": "x"})",
         "at #: 'minLength' must be a non-negative integer"},
        {R"({"type": "string", "maxLength": -1})", "'maxLength' must be a non-negative integer"},
        {R"({"type": "string", "minLength": 5, "maxLength": 2})",
         "'minLength' is above 'maxLength'"},
        {R"({"type": "array", "minItems": 3, "maxItems": 2})", "'minItems' is above 'maxItems'"},
        {R"({"required": "a"})", "at #/required: 'required' must be an array"},
        {R"({"properties": []})", "at #/properties: 'properties' must be an object"},
        {R"({"$ref": "#/$defs/missing"})", "at #/$ref: '#/$defs/missing' names no definition"},
        {R"({"type": "strnig"})", "at #/type: 'type' must be a JSON type name"},
        {R"({"type": []})", "at #/type"},
        {R"({"enum": {}})", "at #/enum: 'enum' must be an array"},
        {R"({"type": "integer", "enum": ["a", "b"]})", "no value of 'enum' has the schema's type"},
        {R"({"type": "integer", "minimum": 5, "maximum": 4})", "no integer lies within its bounds"},
        {R"({"anyOf": {}})", "at #/anyOf: 'anyOf' must be a non-empty array"},
        {R"({"properties": {"a": 3}})", "at #/properties/a: a schema must be an object"},
        {R"({"type": "integer", "minimum": "0"})", "at #/minimum: 'minimum' must be a number"},
        {R"({"allOf": [{"minLength": 1}, {"minLength": "2"}]})",
         "'minLength' must be a non-negative integer"},
        {R"({"properties": {"a": {}}, "required": ["b"], "additionalProperties": false})",
         "required property 'b' is not in 'properties'"},
        {R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}},
            "$ref": "#/$defs/a"})",
         "refers to itself through $ref before any object or array"},
        {"{\"type\": ", "JSON"},
        {"{\"enum\": [\"a\xDB\"]}", "is not valid UTF-8 at byte 12"},
        {"[1, 2]", "a schema must be an object or a boolean"},
    };
    for (const Case &c : cases) {
        Failure f = convert_error(c.schema);
        EXPECT_EQ(f.status, VKLLM_ERR_INVALID_ARGUMENT) << c.schema << ": " << f.message;
        EXPECT_NE(f.message.find(c.message), std::string::npos) << c.schema << ": " << f.message;
    }
}

TEST(JsonSchemaLimits, HostileSizesStopAtTheLimitsWithAnError) {
    std::string deep;
    for (int i = 0; i < 100; ++i)
        deep += R"({"type": "array", "items": )";
    deep += "{}";
    for (int i = 0; i < 100; ++i)
        deep += "}";
    Failure f = convert_error(deep);
    EXPECT_EQ(f.status, VKLLM_ERR_INVALID_ARGUMENT) << f.message;
    std::string big_enum = R"({"enum": [)";
    for (int i = 0; i < 10001; ++i)
        big_enum += (i ? "," : "") + std::to_string(i);
    f = convert_error(big_enum + "]}");
    EXPECT_EQ(f.status, VKLLM_ERR_UNSUPPORTED) << f.message;
    // Many long strings of different lengths (equal ones share a rule): the repetitions expand
    // past the GBNF parser's size limits.
    std::string wide = R"({"type": "object", "properties": {)";
    for (int i = 0; i < 200; ++i)
        wide += (i ? ", " : "") + std::string("\"p") + std::to_string(i) +
                R"(": {"type": "string", "maxLength": )" + std::to_string(4096 - i) + "}";
    f = convert_error(wide + "}}");
    EXPECT_EQ(f.status, VKLLM_ERR_INVALID_ARGUMENT) << f.message;
    EXPECT_NE(f.message.find("too large"), std::string::npos) << f.message;
    // Many names alike past the 48 characters a rule name keeps: each gets its own suffix.
    std::string alike = R"({"type": "object", "properties": {)";
    std::string stem(60, 'k');
    for (int i = 0; i < 2000; ++i)
        alike +=
            (i ? ", " : "") + std::string("\"") + stem + std::to_string(i) + R"(": {"const": 1})";
    auto g = schema(alike + "}}");
    EXPECT_TRUE(matches(g, "{\"" + stem + "1999\": 1}"));
    EXPECT_FALSE(matches(g, "{\"" + stem + "2000\": 1}"));
    f = convert_error(alike + R"(}, "additionalProperties": true})");
    EXPECT_EQ(f.status, VKLLM_ERR_INVALID_ARGUMENT) << f.message;
    // A $ref chain through many definitions: each hop counts toward the depth limit.
    std::string chain = R"({"$ref": "#/$defs/d0", "$defs": {)";
    for (int i = 0; i < 100; ++i)
        chain += (i ? ", " : "") + std::string("\"d") + std::to_string(i) +
                 R"(": {"$ref": "#/$defs/d)" + std::to_string(i + 1) + "\"}";
    chain += R"(, "d100": {"type": "null"}}})";
    f = convert_error(chain);
    EXPECT_EQ(f.status, VKLLM_ERR_INVALID_ARGUMENT) << f.message;
}

}  // namespace
}  // namespace vkllm::grammar
