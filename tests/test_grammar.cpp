// The GBNF parser (src/grammar/gbnf_parser): every construct of llama.cpp's grammar format,
// checked by what the compiled grammar accepts, and malformed grammars with the line and column
// of their error.
#include <gtest/gtest.h>

#include <string>

#include "grammar/grammar_check.h"
#include "grammar_test_util.h"

namespace vkllm::grammar {
namespace {

using testing::compile;
using testing::matches;
using testing::parse_error;

TEST(GbnfParser, LiteralMatchesExactlyItsText) {
    auto g = compile("root ::= \"hello\"");
    EXPECT_TRUE(matches(g, "hello"));
    EXPECT_FALSE(matches(g, "hell"));
    EXPECT_FALSE(matches(g, "hello!"));
    EXPECT_FALSE(matches(g, ""));
}

TEST(GbnfParser, AlternativesMatchAnyOfThem) {
    auto g = compile("root ::= \"cat\" | \"dog\" | \"\"");
    EXPECT_TRUE(matches(g, "cat"));
    EXPECT_TRUE(matches(g, "dog"));
    EXPECT_TRUE(matches(g, ""));
    EXPECT_FALSE(matches(g, "cow"));
}

TEST(GbnfParser, SequencesOfLiteralsClassesAndRules) {
    auto g = compile("root ::= \"a\" [0-9] tail\ntail ::= \"z\"");
    EXPECT_TRUE(matches(g, "a7z"));
    EXPECT_FALSE(matches(g, "a7"));
    EXPECT_FALSE(matches(g, "az"));
}

TEST(GbnfParser, GroupsHoldAlternativesInsideASequence) {
    auto g = compile("root ::= \"<\" (\"a\" | \"b\" (\"c\" | \"d\")) \">\"");
    EXPECT_TRUE(matches(g, "<a>"));
    EXPECT_TRUE(matches(g, "<bc>"));
    EXPECT_TRUE(matches(g, "<bd>"));
    EXPECT_FALSE(matches(g, "<b>"));
    EXPECT_FALSE(matches(g, "<ac>"));
}

TEST(GbnfParser, StarPlusAndQuestionMark) {
    auto star = compile("root ::= \"x\"*");
    EXPECT_TRUE(matches(star, ""));
    EXPECT_TRUE(matches(star, "xxxx"));
    EXPECT_FALSE(matches(star, "xy"));
    auto plus = compile("root ::= \"x\"+");
    EXPECT_FALSE(matches(plus, ""));
    EXPECT_TRUE(matches(plus, "x"));
    EXPECT_TRUE(matches(plus, "xxx"));
    auto opt = compile("root ::= \"a\" \"b\"? \"c\"");
    EXPECT_TRUE(matches(opt, "ac"));
    EXPECT_TRUE(matches(opt, "abc"));
    EXPECT_FALSE(matches(opt, "abbc"));
}

TEST(GbnfParser, BracesRepeatExactlyAtLeastAndBetween) {
    auto exact = compile("root ::= [0-9]{3}");
    EXPECT_TRUE(matches(exact, "123"));
    EXPECT_FALSE(matches(exact, "12"));
    EXPECT_FALSE(matches(exact, "1234"));
    auto at_least = compile("root ::= [0-9]{2,}");
    EXPECT_FALSE(matches(at_least, "1"));
    EXPECT_TRUE(matches(at_least, "12"));
    EXPECT_TRUE(matches(at_least, "123456789"));
    auto between = compile("root ::= [0-9]{1,3}");
    EXPECT_FALSE(matches(between, ""));
    EXPECT_TRUE(matches(between, "1"));
    EXPECT_TRUE(matches(between, "123"));
    EXPECT_FALSE(matches(between, "1234"));
    auto at_most = compile("root ::= \"a\"{0,2} \"b\"");
    EXPECT_TRUE(matches(at_most, "b"));
    EXPECT_TRUE(matches(at_most, "aab"));
    EXPECT_FALSE(matches(at_most, "aaab"));
    auto zero = compile("root ::= \"a\"{0} \"b\"");
    EXPECT_TRUE(matches(zero, "b"));
    EXPECT_FALSE(matches(zero, "ab"));
    auto spaced = compile("root ::= \"a\"{ 1 , 2 }");
    EXPECT_TRUE(matches(spaced, "aa"));
}

TEST(GbnfParser, RepetitionAppliesToTheWholeLiteralOrGroupBeforeIt) {
    auto literal = compile("root ::= \"ab\"{2}");
    EXPECT_TRUE(matches(literal, "abab"));
    EXPECT_FALSE(matches(literal, "abb"));
    auto group = compile("root ::= (\"a\" | \"bc\")+ \".\"");
    EXPECT_TRUE(matches(group, "abca."));
    EXPECT_FALSE(matches(group, "."));
    auto twice = compile("root ::= \"a\"{2}{2}");  // a repetition of a repetition
    EXPECT_TRUE(matches(twice, "aaaa"));
    EXPECT_FALSE(matches(twice, "aaa"));
}

TEST(GbnfParser, CharacterClassesWithRangesAndSingleCharacters) {
    auto g = compile("root ::= [a-cx0-2_]+");
    EXPECT_TRUE(matches(g, "abcx012_"));
    EXPECT_FALSE(matches(g, "d"));
    EXPECT_FALSE(matches(g, "3"));
    // A '-' first or last in a class is itself.
    auto dash = compile("root ::= [-a] [b-]");
    EXPECT_TRUE(matches(dash, "-b"));
    EXPECT_TRUE(matches(dash, "a-"));
    EXPECT_FALSE(matches(dash, "ab-"));
}

TEST(GbnfParser, NegatedClassMatchesEveryOtherCodePoint) {
    auto g = compile("root ::= [^\"\\n]+");
    EXPECT_TRUE(matches(g, "plain text"));
    EXPECT_TRUE(matches(g, "caf\xC3\xA9 \xF0\x9F\x98\x80"));
    EXPECT_FALSE(matches(g, "a\"b"));
    EXPECT_FALSE(matches(g, "a\nb"));
    auto ranges = compile("root ::= [^a-z0-9]");
    EXPECT_TRUE(matches(ranges, "A"));
    EXPECT_FALSE(matches(ranges, "q"));
    EXPECT_FALSE(matches(ranges, "5"));
}

TEST(GbnfParser, DotMatchesAnyOneCodePoint) {
    auto g = compile("root ::= \"<\" . \">\"");
    EXPECT_TRUE(matches(g, "<a>"));
    EXPECT_TRUE(matches(g, "<\n>"));
    EXPECT_TRUE(matches(g, "<\xE2\x82\xAC>"));  // one code point of three bytes
    EXPECT_FALSE(matches(g, "<>"));
    EXPECT_FALSE(matches(g, "<ab>"));
}

TEST(GbnfParser, EscapesInLiteralsAndClasses) {
    EXPECT_TRUE(matches("root ::= \"\\x41\\u00e9\\U0001F600\"", "A\xC3\xA9\xF0\x9F\x98\x80"));
    EXPECT_TRUE(matches("root ::= \"\\t\\n\\r\\\\\\\"\"", "\t\n\r\\\""));
    EXPECT_TRUE(matches("root ::= [\\[\\]\\-]+", "[]-"));
    EXPECT_FALSE(matches("root ::= [\\[\\]\\-]+", "a"));
    EXPECT_TRUE(matches("root ::= [\\x00-\\x1F]", std::string(1, '\x1f')));
    EXPECT_TRUE(matches("root ::= [\\u0400-\\u04FF]+", "\xD0\x96\xD0\xB8"));  // Cyrillic
}

TEST(GbnfParser, RawUtf8InTheGrammarIsOneCodePoint) {
    auto g = compile("root ::= [ぁ-ゟ]+ \"。\"");
    EXPECT_TRUE(matches(g, "ひらがな。"));
    EXPECT_FALSE(matches(g, "カタカナ。"));
}

TEST(GbnfParser, CommentsAndNewlinesWhereARuleGoesOn) {
    auto g = compile(
        "# a list of answers\n"
        "root ::= (   # the group spans lines\n"
        "    \"yes\"\n"
        "  | \"no\"   # a comment after an alternative\n"
        ") end\n"
        "\n"
        "end ::= \"!\" |\n"
        "        \"?\"\n"
        "# trailing comment without newline");
    EXPECT_TRUE(matches(g, "yes!"));
    EXPECT_TRUE(matches(g, "no?"));
    EXPECT_FALSE(matches(g, "yes"));
}

TEST(GbnfParser, CarriageReturnLineEndsAreNewlines) {
    auto g = compile("root ::= a b\r\na ::= \"x\"\r\nb ::= \"y\"\r\n");
    EXPECT_TRUE(matches(g, "xy"));
    EXPECT_TRUE(matches(compile("root ::= a\ra ::= \"x\"\r"), "x"));
}

TEST(GbnfParser, RuleNamesWithDashesUnderscoresAndDigits) {
    auto g = compile(
        "root ::= check-mate rule_123 UPPER-CASE\ncheck-mate ::= \"#\"\n"
        "rule_123 ::= \"1\"\nUPPER-CASE ::= \"U\"");
    EXPECT_TRUE(matches(g, "#1U"));
}

TEST(GbnfParser, RulesMayBeUsedBeforeTheyAreDefined) {
    auto g = compile("root ::= later later\nlater ::= [a-z]");
    EXPECT_TRUE(matches(g, "ab"));
}

TEST(GbnfParser, AnotherRuleCanBeTheStart) {
    auto g = compile("root ::= \"r\"\nstart ::= \"s\" root", "start");
    EXPECT_TRUE(matches(g, "sr"));
    EXPECT_FALSE(matches(g, "r"));
}

TEST(GbnfParser, RecursiveRulesNestToAnyDepth) {
    auto g = compile("root ::= \"(\" root \")\" | \"x\"");
    EXPECT_TRUE(matches(g, "x"));
    EXPECT_TRUE(matches(g, "(((x)))"));
    EXPECT_FALSE(matches(g, "((x)"));
}

TEST(GbnfParser, CompiledGrammarPrintsBackAsGbnf) {
    Grammar g = parse_gbnf("root ::= [a-c] \"\\n\" | [^\\x00] other\nother ::= .");
    std::string text = to_gbnf(g);
    EXPECT_NE(text.find("root ::= [a-c] [\\n] | [^\\x00] other"), std::string::npos) << text;
    EXPECT_NE(text.find("other ::= ."), std::string::npos) << text;
}

TEST(GbnfParser, NullableRulesAreFound) {
    Grammar g = parse_gbnf("root ::= a b\na ::= \"x\"?\nb ::= a a | \"y\"");
    std::vector<bool> nullable = nullable_rules(g);
    for (size_t r = 0; r < g.rule_count(); ++r)
        if (g.names[r] == "root" || g.names[r] == "a" || g.names[r] == "b") {
            EXPECT_TRUE(nullable[r]) << g.names[r];
        }
}

// ---- malformed grammars ------------------------------------------------------------------

TEST(GbnfParserErrors, MissingAssignmentNamesItsPlace) {
    EXPECT_EQ(parse_error("root \"a\""), "line 1, column 6: expected '::=' after rule name 'root'");
}

TEST(GbnfParserErrors, UnterminatedStringPointsAtItsQuote) {
    EXPECT_EQ(parse_error("root ::= x\nx ::= \"abc"), "line 2, column 7: unterminated string");
}

TEST(GbnfParserErrors, UnterminatedClassPointsAtItsBracket) {
    EXPECT_EQ(parse_error("root ::= [a-z"), "line 1, column 10: unterminated character class");
}

TEST(GbnfParserErrors, EmptyClassIsRefused) {
    EXPECT_EQ(parse_error("root ::= []"), "line 1, column 10: empty character class");
}

TEST(GbnfParserErrors, UnknownEscapeIsRefused) {
    EXPECT_EQ(parse_error("root ::= \"a\\qb\""),
              "line 1, column 12: unknown escape '\\q' in string");
}

TEST(GbnfParserErrors, ShortHexEscapeIsRefused) {
    EXPECT_EQ(parse_error("root ::= \"\\u12\""),
              "line 1, column 11: expected 4 hex digits after '\\u'");
    EXPECT_EQ(parse_error("root ::= \"\\U00110000\""),
              "line 1, column 11: code point 0x110000 is beyond U+10FFFF");
}

TEST(GbnfParserErrors, UndefinedRuleIsReportedWhereItIsUsed) {
    EXPECT_EQ(parse_error("root ::= a\na ::= \"x\" missing-rule"),
              "line 2, column 11: undefined rule 'missing-rule'");
}

TEST(GbnfParserErrors, MissingRootIsRefused) {
    EXPECT_EQ(parse_error("start ::= \"x\""), "the grammar defines no rule 'root' to start from");
    EXPECT_EQ(parse_error(""), "the grammar defines no rule 'root' to start from");
    EXPECT_EQ(parse_error("root ::= \"x\"", "other"),
              "the grammar defines no rule 'other' to start from");
}

TEST(GbnfParserErrors, RuleDefinedTwiceIsRefused) {
    EXPECT_EQ(parse_error("root ::= \"a\"\nroot ::= \"b\""),
              "line 2, column 1: rule 'root' is defined twice (first at line 1, column 1)");
}

TEST(GbnfParserErrors, UnclosedParenthesisIsRefused) {
    EXPECT_EQ(parse_error("root ::= (\"a\" | \"b\"\n"),
              "line 2, column 1: expected ')' to close the '(' at line 1, column 10, found end "
              "of grammar");
}

TEST(GbnfParserErrors, StrayCharacterAfterARuleIsRefused) {
    EXPECT_EQ(parse_error("root ::= \"a\" )"), "line 1, column 14: unexpected ')' in rule 'root'");
    EXPECT_EQ(parse_error("root ::= \"a\" ; \"b\""),
              "line 1, column 14: unexpected ';' in rule 'root'");
}

TEST(GbnfParserErrors, ARuleMustStartWithAName) {
    EXPECT_EQ(parse_error("root ::= \"a\"\n::= \"b\""),
              "line 2, column 1: expected a rule name at the start of a rule, found ':'");
}

TEST(GbnfParserErrors, RepetitionWithoutAnItemIsRefused) {
    EXPECT_EQ(parse_error("root ::= *"),
              "line 1, column 10: a repetition operator needs an item before it");
    EXPECT_EQ(parse_error("root ::= \"a\" | +"),
              "line 1, column 16: a repetition operator needs an item before it");
}

TEST(GbnfParserErrors, MalformedBracesAreRefused) {
    EXPECT_EQ(parse_error("root ::= \"a\"{x}"), "line 1, column 14: expected a number, found 'x'");
    EXPECT_EQ(parse_error("root ::= \"a\"{2"),
              "line 1, column 15: expected '}' to close the '{' at line 1, column 13, found end "
              "of grammar");
    EXPECT_EQ(parse_error("root ::= \"a\"{3,2}"),
              "line 1, column 13: repetition {3,2} has its maximum below its minimum");
}

TEST(GbnfParserErrors, ReversedRangeIsRefused) {
    EXPECT_EQ(parse_error("root ::= [z-a]"),
              "line 1, column 11: range end U+0061 is before its start U+007A");
}

TEST(GbnfParserErrors, TokenReferencesAreRefusedByName) {
    EXPECT_EQ(parse_error("root ::= <think> \"x\""),
              "line 1, column 10: token references (<...>, !<...>) are not supported");
}

TEST(GbnfParserErrors, InvalidUtf8InTheGrammarIsRefused) {
    EXPECT_EQ(parse_error("root ::= \"\xC3\""), "line 1, column 11: invalid UTF-8 in string");
}

TEST(GbnfParserErrors, ColumnsCountCodePointsNotBytes) {
    EXPECT_EQ(parse_error("root ::= \"é\" ?? ]"),
              "line 1, column 17: unexpected ']' in rule 'root'");
}

TEST(GbnfParserErrors, LeftRecursionIsRefused) {
    EXPECT_EQ(parse_error("root ::= expr\nexpr ::= expr \"+\" term | term\nterm ::= [0-9]"),
              "line 2, column 1: rule 'expr' is left-recursive: it can reach itself before "
              "matching a character (write it with repetition instead)");
    // Through another rule, and through a rule that may match nothing.
    EXPECT_NE(
        parse_error("root ::= a\na ::= b \"x\"\nb ::= a \"y\" | \"z\"").find("left-recursive"),
        std::string::npos);
    EXPECT_NE(parse_error("root ::= e \"x\"\ne ::= \"\" | \"q\"\nloop ::= e loop \"w\"")
                  .find("rule 'loop' is left-recursive"),
              std::string::npos);
    // Right recursion and recursion after a character are fine.
    EXPECT_EQ(parse_error("root ::= \"a\" root | \"b\""), "");
}

// ---- limits against hostile grammars -------------------------------------------------------

TEST(GbnfParserLimits, AHugeRepetitionCountIsRefusedBeforeExpanding) {
    EXPECT_EQ(parse_error("root ::= \"a\"{1000000}"),
              "line 1, column 14: repetition count is above the limit of 4096");
    EXPECT_EQ(parse_error("root ::= \"a\"{1,99999999999999999999}"),
              "line 1, column 16: repetition count is above the limit of 4096");
}

TEST(GbnfParserLimits, RepetitionsThatMultiplyPastTheElementLimitAreRefused) {
    std::string e = parse_error("root ::= \"abcdefgh\"{4000}{1000}");
    EXPECT_NE(e.find("the grammar grows past"), std::string::npos) << e;
    e = parse_error("root ::= \"a\"{4000}{4000}{4000}");
    EXPECT_NE(e.find("the grammar grows past"), std::string::npos) << e;
}

TEST(GbnfParserLimits, ARepeatedGroupIsRepeatedByReferenceNotByCopy) {
    // The group is one rule: 400 references to it, not 400 copies of its 32,000 elements.
    Grammar g = parse_gbnf("root ::= (\"abcdefgh\"{4000}){400}");
    EXPECT_LT(g.elements.size(), 40000u);
}

TEST(GbnfParserLimits, DeepNestingIsRefused) {
    std::string deep = "root ::= " + std::string(100, '(') + "\"a\"" + std::string(100, ')');
    EXPECT_EQ(parse_error(deep), "line 1, column 74: parentheses nested deeper than 64");
    std::string ok = "root ::= " + std::string(60, '(') + "\"a\"" + std::string(60, ')');
    EXPECT_TRUE(matches(ok, "a"));
}

TEST(GbnfParserLimits, RuleCountIsBounded) {
    GbnfLimits limits;
    limits.max_rules = 10;
    std::string text = "root ::= \"a\"?";
    for (int i = 0; i < 20; ++i)
        text += " \"b\"?";
    EXPECT_EQ(parse_error(text, "root", limits),
              "line 1, column 58: more than 10 rules (repetitions and groups count as rules)");
}

TEST(GbnfParserLimits, OversizedTextIsRefused) {
    GbnfLimits limits;
    limits.max_text_bytes = 16;
    EXPECT_EQ(parse_error("root ::= \"aaaaaaaaaaaaaaaaaaaa\"", "root", limits),
              "line 1, column 1: the grammar is 31 bytes, more than the limit of 16");
}

}  // namespace
}  // namespace vkllm::grammar
