// JSON Schema `pattern` (src/grammar/json_schema_pattern): every string the grammar lets a model
// write matches the regular expression, checked against std::wregex (ECMAScript, the dialect
// JSON Schema names) on random walks through each grammar; ordinary patterns accept the strings
// they match; unsupported constructs are refused by name and hostile patterns get clear errors.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "chat/json_value.h"
#include "common/error.h"
#include "grammar/json_schema.h"
#include "grammar_test_util.h"
#include "tokenizer/unicode.h"

namespace vkllm::grammar {
namespace {

using testing::matches;

std::string schema_for(const std::string &pattern) {
    return R"({"type": "string", "pattern": )" + chat::to_json(chat::Value(pattern), {}) + "}";
}

std::wstring wide(const std::string &utf8) {
    std::wstring out;
    size_t pos = 0;
    uint32_t cp;
    while (tokenizer::utf8_next(utf8, pos, cp))
        out += wchar_t(cp);
    return out;
}

// Patterns std::wregex reads as ECMAScript does (no named groups or lookbehind, which it lacks).
const char *const kPatterns[] = {
    "^[0-9]{5}(-[0-9]{4})?$",
    "^\\d{3}-\\d{3}-\\d{4}$",
    "^[A-Z][a-z]+(?: [A-Z][a-z]+)*$",
    "^[^@\\s]{1,8}@[a-z]{1,8}\\.[a-z]{2,4}$",
    "^(\\+|-)?\\d+(\\.\\d{1,2})?$",
    "^#[0-9a-fA-F]{6}$",
    "ab|^c\\.d$|e*?f{2,3}",
    "^\\w+\\W\\S\\s.$",
    "^[^\\]\\\\\"]{1,4}$",
    "^a\"b\\\\c\\td$",
    "x(y|z)+",
    "^(a|b|)c{0}d?$",
    "^[\\u00e9-\\u00ff\\x41-\\x43]+$",
    "^((ab)*c){2}$",
    "^.{3}$",
    "^[^a-z]*$",
    "[\\d\\-]{2}",
};

TEST(JsonSchemaPattern, EverySentenceIsAStringTheRegexMatches) {
    for (const char *pattern : kPatterns) {
        std::string text = schema_for(pattern);
        auto g = testing::compile(json_schema_to_gbnf(text));
        std::wregex re(wide(pattern), std::regex::ECMAScript);
        auto alphabet = testing::alphabet_for(text);
        std::mt19937 rng(99);
        int complete = 0;
        for (int walk = 0; walk < 100; ++walk) {
            testing::Derivation d = testing::derive(g, alphabet, rng);
            EXPECT_FALSE(d.stuck) << pattern << ": no code point continues " << d.text;
            if (!d.complete) continue;
            ++complete;
            chat::Value v = chat::parse_json(d.text);
            ASSERT_TRUE(v.is_str()) << d.text;
            EXPECT_TRUE(std::regex_search(wide(v.str()), re))
                << pattern << " does not match " << d.text;
        }
        // Unanchored patterns end only when a walk happens on the closing quote.
        EXPECT_GE(complete, 5) << pattern;
    }
}

TEST(JsonSchemaPattern, OrdinaryPatternsAcceptTheStringsTheyMatch) {
    struct Case {
        const char *pattern;
        std::vector<const char *> yes, no;
    };
    const Case cases[] = {
        {"^[0-9]{5}(-[0-9]{4})?$", {"12345", "12345-6789"}, {"1234", "12345-", "a2345"}},
        {"^\\d{4}-\\d{2}-\\d{2}$", {"2024-05-17"}, {"2024-5-17", "x2024-05-17"}},
        {"^(?<area>\\d{3})-\\d{4}$", {"555-1234"}, {"5551234"}},
        {"^[a-z]+(?=x)?$", {}, {}},  // refused below: lookahead
        {"abc", {"abc", "xxabcyy", "abcabc"}, {"ab", "acb"}},
        {"^abc", {"abc", "abcdef"}, {"xabc"}},
        {"abc$", {"abc", "xabc"}, {"abcx"}},
        {"^(cat|dog)s?$", {"cat", "dogs"}, {"cats!", "bird"}},
        {"^[^,]*$", {"", "a b", "\\\"quoted\\\""}, {"a,b"}},
        {"^\\S+$", {"x", "\xC3\xA9t\xC3\xA9"}, {"", "a b", "a\\tb"}},
        {"^a\\.b\\/c\\\\d\"e$", {"a.b/c\\\\d\\\"e"}, {"a.b/c\\d\"e", "axb/c\\\\d\\\"e"}},
        {"^\\t\\n$", {"\\t\\n"}, {"\t\n"}},
        {"^\\u00e9+$", {"\xC3\xA9\xC3\xA9"}, {"e"}},
        {"^a()?()*b$", {"ab"}, {"a", "b"}},
        {"^.$", {"a", "\xF0\x9F\x98\x80", "\\\""}, {"\\n", ""}},
        {"^x{2,}y{,3}$", {}, {}},  // refused below: {,n}
    };
    for (const Case &c : cases) {
        if (c.yes.empty() && c.no.empty()) continue;
        auto g = testing::compile(json_schema_to_gbnf(schema_for(c.pattern)));
        for (const char *s : c.yes)
            EXPECT_TRUE(matches(g, std::string("\"") + s + "\"")) << c.pattern << " on " << s;
        for (const char *s : c.no)
            EXPECT_FALSE(matches(g, std::string("\"") + s + "\"")) << c.pattern << " on " << s;
    }
}

vkllm_status status_of(const std::string &schema, std::string *message = nullptr) {
    try {
        json_schema_to_gbnf(schema);
    } catch (const Error &e) {
        if (message) *message = e.what();
        return e.status();
    }
    return VKLLM_OK;
}

TEST(JsonSchemaPattern, ConstructsNoGrammarExpressesAreRefusedByName) {
    struct Case {
        const char *pattern, *what;
    };
    const Case cases[] = {
        {"^[a-z]+(?=x)$", "a lookaround"},
        {"(?<!a)b", "a lookaround"},
        {"(a)\\1", "a backreference"},
        {"\\bword\\b", "'\\b'"},
        {"a^b", "'^' after the start"},
        {"a$b", "'$' before the end"},
        {"\\p{L}+", "a Unicode property"},
        {"x{,3}", "'{,n}'"},
        {"[]a]", "a class that begins"},
        {"\\cJ", "a control escape"},
        {"[\\d-z]", "a class range with a class"},
        {"\\q", "the escape '\\q'"},
        {"[[:alpha:]]", "a POSIX class"},
        {"^(a*|b)+$", "an unbounded repetition of a part that can match the empty string"},
        {"[^\\s\\S]", "a class that matches no character"},
    };
    for (const Case &c : cases) {
        std::string message;
        EXPECT_EQ(status_of(schema_for(c.pattern), &message), VKLLM_ERR_UNSUPPORTED) << c.pattern;
        EXPECT_NE(message.find("keyword 'pattern' at # is not supported with"), std::string::npos)
            << message;
        EXPECT_NE(message.find(c.what), std::string::npos) << c.pattern << ": " << message;
    }
}

TEST(JsonSchemaPattern, MalformedAndHostilePatternsGetClearErrors) {
    struct Case {
        std::string pattern;
        const char *what;
    };
    const Case cases[] = {
        {"(ab", "an unclosed '('"},
        {"ab)", "unbalanced ')'"},
        {"[a-", "an unterminated '['"},
        {"[z-a]", "out of order"},
        {"*a", "nothing to repeat"},
        {"a**", "nothing to repeat"},
        {"\\x4", "hex digits"},
        {"a\\", "at the end"},
        {"a{5,2}", "n below m"},
        {"a{99999}", "above 4096"},
        {std::string(40, '(') + "a" + std::string(40, ')'), "nested deeper than 32"},
        {std::string(5000, 'a'), "longer than 4096 bytes"},
    };
    for (const Case &c : cases) {
        std::string message;
        EXPECT_EQ(status_of(schema_for(c.pattern), &message), VKLLM_ERR_INVALID_ARGUMENT)
            << c.pattern << ": " << message;
        EXPECT_NE(message.find(c.what), std::string::npos) << c.pattern << ": " << message;
    }
}

}  // namespace
}  // namespace vkllm::grammar
