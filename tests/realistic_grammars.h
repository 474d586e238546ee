// A dozen grammars of the kind apps ask for (JSON, arithmetic, a choice, identifiers, dates,
// times, lists, function calls, ...), each with sentences it must accept and texts it must
// refuse: test_grammar_state runs them through the engine byte by byte, test_grammar_vocab
// token by token as real tokenizers split them.
#pragma once

#include <string>
#include <vector>

namespace vkllm::grammar::testing {

struct GrammarCase {
    const char *name;
    const char *grammar;
    std::vector<std::string> accept;
    std::vector<std::string> reject;
};

// JSON as RFC 8259 writes it, in the layout of llama.cpp's grammars/json.gbnf (written anew).
inline const char *const kJson = R"(
root   ::= ws value ws
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( "," ws member )* )? "}"
member ::= string ws ":" ws value ws
array  ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws     ::= [ \t\n\r]*
)";

inline const GrammarCase kGrammarCases[] = {
    {"json",
     kJson,
     {"{}", "[]", "0", "-12.5e+3", "\"\"", "true", "null",
      "{\"a\": [1, 2, {\"b\": null}], \"c\": \"d\\n\\u00e9\"}", " [ 1 , \"x\" ] ",
      "{\"emoji\": \"😀\", \"n\": -0.0}"},
     {"{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "\"a\nb\"", "tru", "{'a': 1}", "[1 2]"}},
    {"arithmetic",
     "root ::= expr\n"
     "expr ::= term ((\"+\" | \"-\") term)*\n"
     "term ::= factor ((\"*\" | \"/\") factor)*\n"
     "factor ::= [0-9]+ | \"(\" expr \")\" | \"-\" factor",
     {"1", "1+2*3", "(1+2)*3", "-(4/2)-7", "((((9))))"},
     {"", "1+", "(1", "1)", "*2", "1 + 2"}},
    {"choice",
     "root ::= \"positive\" | \"negative\" | \"neutral\"",
     {"positive", "negative", "neutral"},
     {"posit", "Positive", "neutral.", "negativ", ""}},
    {"c_identifier",
     "root ::= [a-zA-Z_] [a-zA-Z0-9_]*",
     {"x", "_private", "snake_case_2", "CamelCase"},
     {"", "2fast", "kebab-case", "has space"}},
    {"iso_date",
     "root ::= year \"-\" month \"-\" day\n"
     "year ::= [0-9]{4}\n"
     "month ::= \"0\" [1-9] | \"1\" [0-2]\n"
     "day ::= \"0\" [1-9] | [12] [0-9] | \"3\" [01]",
     {"2024-01-31", "1999-12-01", "0001-10-29"},
     {"2024-13-01", "2024-00-10", "2024-1-1", "2024-01-32", "24-01-01", "2024-01-01T"}},
    {"iso_time",
     "root ::= ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] (\":\" [0-5] [0-9])?",
     {"00:00", "23:59", "12:30:45"},
     {"24:00", "12:60", "1:00", "12:30:"}},
    {"bullet_list",
     "root ::= (\"- \" item \"\\n\")+\nitem ::= [^\\n]+",
     {"- one\n", "- one\n- two words\n- trois \xC3\xA9l\xC3\xA9ments\n"},
     {"", "- \n", "one\n", "- one"}},
    {"yes_no_with_reason",
     "root ::= (\"yes\" | \"no\") \", because \" [^\\n.]+ \".\"",
     {"yes, because it rains.", "no, because no."},
     {"maybe, because.", "yes because it rains.", "yes, because .", "yes, because a.b."}},
    {"function_call",
     "root ::= name \"(\" (arg (\",\" \" \"? arg)*)? \")\"\n"
     "name ::= [a-z_] [a-z0-9_]*\n"
     "arg ::= [0-9]+ | \"\\\"\" [^\"]* \"\\\"\"",
     {"f()", "get_weather(\"Paris\", 3)", "add(1,2, 3)"},
     {"f(", "F()", "f(1,)", "f(,1)", "f(\"x)"}},
    {"uuid",
     "root ::= hex{8} \"-\" hex{4} \"-\" hex{4} \"-\" hex{4} \"-\" hex{12}\n"
     "hex ::= [0-9a-f]",
     {"123e4567-e89b-12d3-a456-426614174000"},
     {"123e4567-e89b-12d3-a456-42661417400", "123E4567-e89b-12d3-a456-426614174000",
      "123e4567e89b12d3a456426614174000"}},
    {"semver",
     "root ::= num \".\" num \".\" num (\"-\" [a-z0-9.]+)?\nnum ::= \"0\" | [1-9] [0-9]*",
     {"1.0.0", "10.20.30", "1.0.0-rc.1"},
     {"1.0", "01.0.0", "1.0.0-", "v1.0.0"}},
    {"hiragana_words",
     "root ::= word (\"、\" word)* \"。\"\nword ::= [ぁ-ゖ]+",
     {"ねこ。", "いぬ、ねこ、とり。"},
     {"ねこ", "ネコ。", "、ねこ。"}},
    {"email_like",
     "root ::= local \"@\" domain\nlocal ::= [a-z0-9._+-]+\ndomain ::= label (\".\" label)+\n"
     "label ::= [a-z0-9] [a-z0-9-]*",
     {"a@b.c", "first.last+tag@mail.example.org"},
     {"@b.c", "a@b", "a@@b.c", "a@.b"}},
};

}  // namespace vkllm::grammar::testing
