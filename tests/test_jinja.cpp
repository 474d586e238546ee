// Unit tests of the Jinja interpreter (src/chat): the language as jinja2 3.1 has it in
// transformers' environment, each expected string what jinja2 renders. JSON in and out is in
// test_jinja_json.cpp, hostile templates in test_jinja_hostile.cpp.
#include <gtest/gtest.h>

#include <string>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/error.h"
#include "jinja_render.h"

using namespace vkllm::chat;
using jinja_test::expect_error;
using jinja_test::render;

namespace {

TEST(Jinja, PrintsTextAndExpressions) {
    EXPECT_EQ(render("Hello {{ 'world' }}!"), "Hello world!");
    EXPECT_EQ(render("{{ 1 + 2 }} {{ x }}", "{\"x\": \"y\"}"), "3 y");
}

TEST(Jinja, ArithmeticIsPythons) {
    EXPECT_EQ(render("{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % -3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 7 / 2 "
                     "}} {{ 6 / 2 }} {{ 2 ** -1 }}"),
              "3 -4 -2 2 1024 3.5 3.0 0.5");
    EXPECT_EQ(render("{{ 1.5 + 1 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} "
                     "{{ 0.00001 }} {{ 3.0 }}"),
              "2.5 0.30000000000000004 1e+20 1e+16 1000000000000000.0 0.0001 1e-05 3.0");
    EXPECT_EQ(render("{{ -2 ** 2 }} {{ 2 + 3 * 4 }} {{ (2 + 3) * 4 }} {{ 10 - 2 - 3 }} {{ 2 ** 3 "
                     "** 2 }} {{ 2 * 3 ~ 4 }}"),
              "4 14 20 5 64 64");
}

TEST(Jinja, StringsRepeatAndConcatenate) {
    EXPECT_EQ(render("{{ 'a' ~ 1 ~ none ~ true }} {{ 'ab' * 3 }} {{ [1] * 2 }} {{ [1, 2] + [3] }} "
                     "{{ 'a' + 'b' }}"),
              "a1NoneTrue ababab [1, 1] [1, 2, 3] ab");
}

TEST(Jinja, StringEscapesAreUnescaped) {
    EXPECT_EQ(render("{{ '\\x41\\u00e9\\t|\\\\|\\'' }} {{ \"q\\\"q\" }} {{ 'a' 'b' }} {{ '\\q' }}"),
              "A\xc3"
              "\xa9"
              "\t|\\|' q\"q ab \\q");
}

TEST(Jinja, IndexingAndSlicingCountCodePoints) {
    EXPECT_EQ(render("{{ 'abc'[1] }} {{ 'abc'[-1] }} {{ 'h\xc3"
                     "\xa9"
                     "llo'[1:3] }} {{ 'abcdef'[::2] }} {{ 'abc'[::-1] }} {{ 'abc'[5:] }} {{ 'h\xc3"
                     "\xa9"
                     "' | length }}"),
              "b c \xc3"
              "\xa9"
              "l ace cba  2");
    EXPECT_EQ(render("{{ [1, 2, 3, 4][::-1] }} {{ [1, 2, 3, 4][1:] }} {{ [1, 2, 3][:-1] }} {{ [1, "
                     "2, 3][-10:10] }} {{ x.0.1 }}",
                     "{\"x\": [[1, 2]]}"),
              "[4, 3, 2, 1] [2, 3, 4] [1, 2] [1, 2, 3] 2");
}

TEST(Jinja, OutOfRangeIndexIsUndefined) {
    EXPECT_EQ(render("[{{ [1, 2][5] }}][{{ {'a': 1}['b'] }}][{{ 'abc'[10] }}]"), "[][][]");
}

TEST(Jinja, ComparisonsAndMembership) {
    EXPECT_EQ(
        render("{{ 'a' in 'cat' }} {{ 1 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }} {{ 1 "
               "< 2 < 3 }} {{ 1 < 3 < 2 }} {{ 1 == 1.0 }} {{ true == 1 }} {{ [1, 2] < [1, 3] }}"),
        "True True True True True False True True True");
}

TEST(Jinja, AndOrReturnOperands) {
    EXPECT_EQ(
        render("{{ true and 'x' }} {{ 0 or 'y' }} {{ '' or none }} {{ 1 and 0 }} {{ not 1 == 2 }}"),
        "x y None 0 True");
}

TEST(Jinja, ValuesPrintAsPythonDoes) {
    EXPECT_EQ(render("{{ none }} {{ true }} {{ [1, 'a', none, true, 1.5] }} {{ {'a': [1, {'b': "
                     "'c'}]} }} {{ ('a',) }} {{ (1, 2) }} {{ [\"it's\", 'say \"hi\"', 'a\\nb'] }}"),
              "None True [1, 'a', None, True, 1.5] {'a': [1, {'b': 'c'}]} ('a',) (1, 2) [\"it's\", "
              "'say \"hi\"', 'a\\nb']");
}

TEST(Jinja, InlineIfElse) {
    EXPECT_EQ(render("{{ 'x' if true else 'y' }}{{ 'x' if false else 'y' }}[{{ 'x' if false }}]{{ "
                     "'a' if 0 else 'b' if 0 else 'c' }}"),
              "xy[]c");
}

TEST(Jinja, LoopVariables) {
    EXPECT_EQ(
        render("{% for x in [1, 2, 3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ "
               "loop.last }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.length }};{% endfor %}"),
        "10TrueFalse323;21FalseFalse213;32FalseTrue103;");
    EXPECT_EQ(
        render("{% for x in [1, 2, 3] %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}"),
        "-2;1-3;2-;");
    EXPECT_EQ(render("{% for i in range(3) %}{{ loop.cycle('a', 'b') }}{% endfor %} {% for i in "
                     "[1, 1, 2, 2, 3] %}{% if loop.changed(i) %}{{ i }}{% endif %}{% endfor %}"),
              "aba 123");
}

TEST(Jinja, FilteredLoopCountsOnlyKeptItems) {
    EXPECT_EQ(
        render("{% for x in [1, 2, 3, 4] if x is even %}{{ loop.index }}:{{ x }} {% endfor %}"),
        "1:2 2:4 ");
}

TEST(Jinja, LoopElseRunsWhenNothingIterates) {
    EXPECT_EQ(render("{% for x in [] %}a{% else %}empty{% endfor %}"), "empty");
}

TEST(Jinja, LoopElseRunsUnlessABodyRanToItsEnd) {
    // jinja2 clears its "no iteration" flag at the end of the body: a break or continue
    // before it in every iteration so far leaves the else body to run.
    EXPECT_EQ(render("{% for i in [1, 2] %}{% break %}{% else %}E{% endfor %}"), "E");
    EXPECT_EQ(render("{% for i in [1, 2] %}{{ i }}{% if i == 2 %}{% break %}{% endif %}{% else "
                     "%}E{% endfor %}"),
              "12");
    EXPECT_EQ(render("{% for i in [1, 2] %}{% continue %}{% else %}E{% endfor %}"), "E");
}

TEST(Jinja, BreakAndContinue) {
    EXPECT_EQ(render("{% for x in [1, 2, 3, 4] %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% "
                     "endfor %}|{% for x in [1, 2, 3, 4] %}{% if x == 2 %}{% continue %}{% endif "
                     "%}{{ x }}{% endfor %}"),
              "12|134");
}

TEST(Jinja, LoopsUnpackPairsAndIterateDictsAndStrings) {
    EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }},{% endfor %} {% "
                     "for k in {'a': 1, 'b': 2} %}{{ k }}{% endfor %} {% for c in 'h\xc3"
                     "\xa9"
                     "j' %}[{{ c }}]{% endfor %}"),
              "a=1,b=2, ab [h][\xc3"
              "\xa9"
              "][j]");
}

TEST(Jinja, SetInsideALoopDoesNotLeak) {
    EXPECT_EQ(
        render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}"),
        "231");
}

TEST(Jinja, SetInsideAnIfDoes) {
    EXPECT_EQ(render("{% set x = 1 %}{% if true %}{% set x = 5 %}{% endif %}{{ x }}"), "5");
}

TEST(Jinja, NamespaceCarriesStateOutOfLoops) {
    EXPECT_EQ(render("{% set ns = namespace(n=0, found=false) %}{% for i in range(5) %}{% set ns.n "
                     "= ns.n + i %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor "
                     "%}{{ ns.n }} {{ ns.found }}"),
              "10 True");
}

TEST(Jinja, SetUnpacksTuples) {
    EXPECT_EQ(render("{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set t = (1, 2) %}{{ t }}"),
              "12 (1, 2)");
}

TEST(Jinja, MacrosTakeDefaultsAndKeywords) {
    EXPECT_EQ(
        render("{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro "
               "%}{{ greet('Bob') }} {{ greet('Al', greeting='Hi') }} {{ greet('X', 'Yo') }}"),
        "Hello, Bob! Hi, Al! Yo, X!");
    EXPECT_EQ(render("{% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('x') }} {% macro v() "
                     "%}{{ varargs }}{{ kwargs }}{% endmacro %}{{ v(1, 2, a=3) }}"),
              "x! (1, 2){'a': 3}");
}

TEST(Jinja, MacrosRecurseAndSeeLaterAssignments) {
    EXPECT_EQ(render("{% macro r(n) %}{% if n > 0 %}{{ n }}{{ r(n - 1) }}{% endif %}{% endmacro "
                     "%}{{ r(5) }} {% set g = 'outer' %}{% macro show() %}{{ g }}{% endmacro %}{% "
                     "set g = 'later' %}{{ show() }}"),
              "54321 later");
}

TEST(Jinja, CallBlocksPassCaller) {
    EXPECT_EQ(render("{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inside{% "
                     "endcall %} {% macro twice(x) %}<{{ caller(x * 2) }}>{% endmacro %}{% call(v) "
                     "twice(4) %}got {{ v }}{% endcall %}"),
              "<inside> <got 8>");
}

TEST(Jinja, SetAndFilterBlocks) {
    EXPECT_EQ(render("{% set s %}block {{ 1 + 1 }}{% endset %}[{{ s }}] {% filter upper %}hello {{ "
                     "'x' }}{% endfilter %}|{% filter trim %}  pad  {% endfilter %}"),
              "[block 2] HELLO X|pad");
}

TEST(Jinja, GenerationBlockRendersItsBody) {
    EXPECT_EQ(render("a{% generation %}b{{ 1 }}{% endgeneration %}c"), "ab1c");
}

TEST(Jinja, WithBlockScopesItsNames) {
    EXPECT_EQ(render("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"), "3[]");
}

TEST(Jinja, RawBlockIsVerbatim) {
    EXPECT_EQ(render("{% raw %}{{ not evaluated }}{% endraw %}"), "{{ not evaluated }}");
}

TEST(Jinja, RawBlockWhitespaceIsJinja2s) {
    // No newline trimmed after {% raw %}; {% endraw %} is lstripped and trims its newline;
    // "+" and "-" at either tag as elsewhere.
    EXPECT_EQ(render("a{% raw %}\n  x\n  {% endraw %}\nb"), "a\n  x\nb");
    EXPECT_EQ(render("\t{%+ raw %}\n{{x}} {%+ endraw +%}\nc"), "\t\n{{x}} \nc");
    EXPECT_EQ(render("{% raw -%}\n {{x}}  {%- endraw -%}\n d"), "{{x}}d");
}

TEST(Jinja, TrimBlocksAndLstripBlocks) {
    EXPECT_EQ(render("  {% if true %}\n  x\n  {% endif %}\n  y"), "  x\n  y");
    EXPECT_EQ(render("{% for m in [1, 2] %}\n  {{ m }}\n{% endfor %}\n"), "  1\n  2\n");
    EXPECT_EQ(render("a {# c #}\n{# c #}  \nb"), "a   \nb");
    EXPECT_EQ(render("\t{% if true %}\n\tT\n\t{% endif %}"), "\tT\n");
}

TEST(Jinja, WhitespaceControlStripsAround) {
    EXPECT_EQ(render("{%- if true -%}  a  {%- endif -%}  b"), "ab");
    EXPECT_EQ(render("{{ 'a' }} {{- ' b ' -}} {{ 'c' }}"), "a b c");
    EXPECT_EQ(render("x  {% if true -%}\n  a  \n{%- endif %}  y"), "x  a  y");
}

TEST(Jinja, PlusDisablesLstripAndTrim) {
    EXPECT_EQ(render("  {%+ if true %}x{% endif +%}\n y"), "  x\n y");
}

TEST(Jinja, OneTrailingNewlineIsDropped) {
    EXPECT_EQ(render("text\n\n"), "text\n");
    EXPECT_EQ(render("text\r\n"), "text");
}

TEST(Jinja, UndefinedIsLenient) {
    EXPECT_EQ(
        render("[{{ x }}][{{ x ~ 'a' }}][{{ x | length }}][{% for i in x %}no{% endfor %}][{{ x is "
               "none }}][{{ not x }}][{{ x | default('d') }}][{{ none.y }}][{{ {}.y }}]"),
        "[][a][0][][False][True][d][][]");
}

TEST(Jinja, NoneBecomesNoneText) {
    EXPECT_EQ(render("{{ messages[1].content }}|{{ messages[1].content | string }}|{{ "
                     "messages[1].content | trim }}|{{ messages[1].content is none }}",
                     "{\"messages\": [{\"role\": \"user\", \"content\": \" hi \"}, {\"role\": "
                     "\"assistant\", \"content\": null}]}"),
              "None|None|None|True");
}

TEST(Jinja, Tests) {
    EXPECT_EQ(
        render("{{ x is defined }}{{ none is none }}{{ 'a' is string }}{{ {} is mapping }}{{ [] is "
               "iterable }}{{ 1 is number }}{{ 1 is integer }}{{ 1.0 is float }}{{ false is false "
               "}}{{ true is true }}{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 1 is "
               "sameas 1 }}{{ 'a' is in 'abc' }}{{ x is not defined }}"),
        "FalseTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue");
    EXPECT_EQ(render("{{ 1 is boolean }}{{ true is boolean }}{{ true is number }}{{ true is "
                     "integer }}{{ 'a' is iterable }}{{ 'A' is upper }}{{ 'a' is lower }}{{ 3 is "
                     "gt 2 }}{{ 3 is eq 3 }}{{ 'x' is eq 'x' }}"),
              "FalseTrueTrueFalseTrueTrueTrueTrueTrueTrue");
}

TEST(Jinja, StringFilters) {
    EXPECT_EQ(render("{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ 'Hello World' | lower "
                     "}}|{{ 'hello world' | upper }}|{{ 'hello world' | title }}|{{ 'hELLO' | "
                     "capitalize }}|{{ 'aXbXc' | replace('X', '-') }}|{{ 'aaa' | replace('a', 'b', "
                     "2) }}|{{ 'a b c' | wordcount }}|{{ 'x' | center(5) }}"),
              "a b|a|hello world|HELLO WORLD|Hello World|Hello|a-b-c|bba|3|  x  ");
}

TEST(Jinja, TestsFollowJinja2sDefinitions) {
    // lower/upper look at str(value); odd/even at value % 2; undefined counts as a sequence;
    // round keeps an int an int.
    EXPECT_EQ(render("{{ {'k': 'v'} is lower }}{{ 0.1 is even }}{{ 3.0 is odd }}{{ u is sequence "
                     "}}{{ 2 | round }}"),
              "TrueFalseTrueTrue2");
    expect_error("{% set n = none %}{{ n[1:] }}", "TypeError");  // a slice is a Python subscript
}

TEST(Jinja, FormatFilterIsPercentFormatting) {
    EXPECT_EQ(
        render("{{ '%s - %s' | format('a', 1) }}|{{ '%d%%' | format(5) }}|{{ 'x' | format }}"),
        "a - 1|5%|x");
}

TEST(Jinja, IndentFilter) {
    EXPECT_EQ(render("{{ 'line1\\nline2\\n\\nline4' | indent(2) }}|{{ 'a\\nb' | indent(2, true) "
                     "}}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'a\\nb' | indent('> ') }}"),
              "line1\n  line2\n\n  line4|  a\n  b|a\n  \n  b|a\n> b");
}

TEST(Jinja, SequenceFilters) {
    EXPECT_EQ(render("{{ [3, 1, 2] | sort }}|{{ ['b', 'A', 'a'] | sort }}|{{ [3, 1, 2] | "
                     "sort(reverse=true) }}|{{ [{'n': 2}, {'n': 1}] | sort(attribute='n') }}|{{ "
                     "[1, 2, 2, 3, 1] | unique | list }}|{{ ['a', 'A'] | unique | list }}"),
              "[1, 2, 3]|['A', 'a', 'b']|[3, 2, 1]|[{'n': 1}, {'n': 2}]|[1, 2, 3]|['a']");
    EXPECT_EQ(render("{{ [1, 2, 3] | first }}{{ [1, 2, 3] | last }}{{ 'abc' | first }}{{ [1, 2, 3] "
                     "| length }}{{ {'a': 1} | length }}|{{ [1, 2, 3] | sum }}|{{ [1, 5, 3] | max "
                     "}}|{{ [4, 2, 8] | min }}|{{ [1, 2, 3] | reverse | list }}|{{ 'abc' | reverse "
                     "}}|{{ [1, 2, 3] | batch(2) | list }}|{{ 'abc' | list }}"),
              "13a31|6|5|2|[3, 2, 1]|cba|[[1, 2], [3]]|['a', 'b', 'c']");
}

TEST(Jinja, DictFilters) {
    EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | dictsort }}|{{ {'b': 1, 'a': 2} | items | list }}|{{ "
                     "{'a': 2, 'b': 1} | dictsort(by='value') }}|{{ {'B': 1, 'a': 2} | dictsort "
                     "}}|{{ {'a': 1, 'b': 2} | dictsort(reverse=true) }}"),
              "[('a', 2), ('b', 1)]|[('b', 1), ('a', 2)]|[('b', 1), ('a', 2)]|[('a', 2), ('B', "
              "1)]|[('b', 2), ('a', 1)]");
}

TEST(Jinja, JoinMapSelect) {
    EXPECT_EQ(render("{{ [1, 2, 3] | join(',') }}|{{ [{'a': 'x'}, {'a': 'y'}] | map(attribute='a') "
                     "| join('-') }}|{{ ['a', 'b'] | map('upper') | list }}|{{ messages | "
                     "map(attribute='missing', default='?') | list }}",
                     "{\"messages\": [{\"role\": \"user\"}, {\"role\": \"assistant\"}]}"),
              "1,2,3|x-y|['A', 'B']|['?', '?']");
    EXPECT_EQ(
        render("{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|{{ [1, 2, "
               "3, 4] | select('odd') | list }}|{{ [0, 1, '', 2] | select | list }}|{{ [1, 2, 3] | "
               "reject('even') | list }}|{{ messages | rejectattr('role', 'equalto', 'user') | "
               "map(attribute='role') | list }}|{{ none | selectattr('a') | list }}",
               "{\"messages\": [{\"role\": \"user\"}, {\"role\": \"assistant\"}]}"),
        "1|[1, 3]|[1, 2]|[1, 3]|['assistant']|[]");
}

TEST(Jinja, NumberFilters) {
    EXPECT_EQ(
        render(
            "{{ '3' | int + 1 }}|{{ '3.7' | int }}|{{ 'x' | int }}|{{ 3.9 | int }}|{{ '2.5' | "
            "float }}|{{ -3 | abs }}|{{ 2.567 | round(2) }}|{{ 2.5 | round }}|{{ 3.5 | round }}"),
        "4|3|0|3|2.5|3|2.57|2.0|4.0");
}

TEST(Jinja, DefaultFilter) {
    EXPECT_EQ(render("{{ x | default('d') }}|{{ '' | default('d') }}|{{ '' | default('d', true) "
                     "}}|{{ none | default('d') }}"),
              "d||d|None");
}

TEST(Jinja, SafeStringsEscapeWhatIsAddedToThem) {
    EXPECT_EQ(render("{{ 'x' | safe + '<' }}|{{ '<' + 'x' | safe }}|{{ '<a>' | e }}|{{ '<a>' | "
                     "safe }}|{{ '<a>' | e | e }}"),
              "x&lt;|&lt;x|&lt;a&gt;|<a>|&lt;a&gt;");
}

TEST(Jinja, PythonStringMethods) {
    EXPECT_EQ(
        render(
            "{{ '  x y  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '  x'.lstrip() }}|{{ 'x  "
            "'.rstrip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a,b,c'.split(',', "
            "1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ 'key: value'.split(':')[1] | trim }}"),
        "x y|hi|x|x|['a', 'b', '', 'c']|['a', 'b']|['a', 'b,c']|['a,b', 'c']|value");
    EXPECT_EQ(render("{{ 'hello'.startswith('he') }}{{ 'hello'.endswith(('x', 'lo')) }} {{ "
                     "'hello'.replace('l', 'L') }} {{ 'hello'.upper() }} {{ 'a-b'.title() }} {{ "
                     "'hello'.find('l') }} {{ 'hello'.count('l') }} {{ ', '.join(['a', 'b']) }} {{ "
                     "'a\\nb\\r\\nc'.splitlines() }} {{ '{} is {}'.format('x', 1) }} {{ '\xc2"
                     "\xa0"
                     "x\xe3"
                     "\x80"
                     "\x80"
                     "'.strip() | length }}"),
              "TrueTrue heLLo HELLO A-B 2 2 a, b ['a', 'b', 'c'] x is 1 1");
    EXPECT_EQ(render("{{ 'The %s is %d' % ('x', 3) }}|{{ '%r' % 'a' }}|{{ '%.2f%%' % 3.14159 }}"),
              "The x is 3|'a'|3.14%");
}

TEST(Jinja, DictAndListMethods) {
    EXPECT_EQ(render("{{ {'a': 1}.get('a') }}{{ {'a': 1}.get('b') }}{{ {'a': 1}.get('b', 2) }}|{{ "
                     "{'a': 1}.keys() | list }}|{{ {'a': 1}.values() | list }}|{{ {'a': 1}.items() "
                     "| list }}|{{ [1, 2, 3].index(2) }}|{{ [1, 1, 2].count(1) }}"),
              "1None2|['a']|[1]|[('a', 1)]|1|2");
}

TEST(Jinja, Globals) {
    EXPECT_EQ(render("{{ range(3) | list }}|{{ range(1, 5, 2) | list }}|{{ range(5, 0, -2) | list "
                     "}}|{{ dict(a=1, b=2) }}|{{ dict([('x', 1)]) }}|{% set j = joiner('; ') %}{% "
                     "for i in range(3) %}{{ j() }}{{ i }}{% endfor %}"),
              "[0, 1, 2]|[1, 3]|[5, 3, 1]|{'a': 1, 'b': 2}|{'x': 1}|0; 1; 2");
}

TEST(Jinja, StrftimeNowUsesTheFixedTime) {
    EXPECT_EQ(render("{{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %b %Y') }}|{{ "
                     "strftime_now('%B %-d, %Y %A %a %j %I%p') }}"),
              "2026-01-15 12:00:00|15 Jan 2026|January 15, 2026 Thursday Thu 015 12PM");
}

TEST(Jinja, TojsonIsPythonsJsonDumps) {
    EXPECT_EQ(render("{{ {'a': 1, 'b': [1, 2], 'c': '\xc3"
                     "\xa9"
                     "\"\\n', 'd': none, 'e': true, 'f': 1.0} | tojson }}|{{ [] | tojson }}|{{ {} "
                     "| tojson }}|{{ '\xc3"
                     "\xbc"
                     "\xf0"
                     "\x9f"
                     "\x98"
                     "\x80"
                     "' | tojson(true) }}"),
              "{\"a\": 1, \"b\": [1, 2], \"c\": \"\xc3"
              "\xa9"
              "\\\"\\n\", \"d\": null, \"e\": true, \"f\": 1.0}|[]|{}|\"\\u00fc\\ud83d\\ude00\"");
    EXPECT_EQ(
        render("{{ {'b': 1, 'a': {'d': 1, 'c': [1, 2]}} | tojson(indent=2) }}|{{ {'b': 1, 'a': 2} "
               "| tojson(sort_keys=true) }}|{{ {'a': [1, 2]} | tojson(separators=(',', ':')) }}|{{ "
               "[[]] | tojson(indent=0) }}|{{ {'a': 1} | tojson(indent='\\t') }}"),
        "{\n  \"b\": 1,\n  \"a\": {\n    \"d\": 1,\n    \"c\": [\n      1,\n      2\n    ]\n  "
        "}\n}|{\"a\": 2, \"b\": 1}|{\"a\":[1,2]}|[\n[]\n]|{\n\t\"a\": 1\n}");
    EXPECT_EQ(render("{{ x | tojson }}",
                     "{\"x\": {\"n\": -0.0, \"f\": 1e-7, \"big\": 1e17, \"s\": \"\\ud83d\\ude00 "
                     "\\u0000\\u001f\\u007f\\u2028\", \"e\": [], \"o\": {}}}"),
              "{\"n\": -0.0, \"f\": 1e-07, \"big\": 1e+17, \"s\": \"\xf0"
              "\x9f"
              "\x98"
              "\x80"
              " \\u0000\\u001f\x7f"
              "\xe2"
              "\x80"
              "\xa8"
              "\", \"e\": [], \"o\": {}}");
}

TEST(Jinja, UndefinedAttributeAccessRaises) {
    expect_error("{{ x.y }}", "UndefinedError");
    expect_error("{{ x['y'] }}", "UndefinedError");
    expect_error("{{ x + 1 }}", "UndefinedError");
    expect_error("{{ x() }}", "UndefinedError");
}

TEST(Jinja, NoneConcatenationRaisesTypeError) {
    expect_error("{{ none + 'a' }}", "TypeError");
    expect_error("{{ 'a' + none }}", "TypeError");
    expect_error("{{ 1 < 'a' }}", "TypeError");
    expect_error("{% for x in none %}{% endfor %}", "TypeError");
    expect_error("{{ 1 in none }}", "TypeError");
}

TEST(Jinja, DivisionByZeroRaises) {
    expect_error("{{ 1 / 0 }}", "ZeroDivisionError");
    expect_error("{{ 5 // 0 }}", "ZeroDivisionError");
    expect_error("{{ 5 % 0 }}", "ZeroDivisionError");
}

TEST(Jinja, ImmutableSandboxRefusesMutation) {
    expect_error("{% set l = [1] %}{{ l.append(2) }}", "SecurityError");
    expect_error("{% set d = {'a': 1} %}{{ d.update({'b': 2}) }}", "SecurityError");
}

TEST(Jinja, NamespaceRefusesUnderscoreNames) {
    expect_error("{% set ns = namespace() %}{% set ns._x = 1 %}", "SecurityError");
    expect_error("{% set ns = namespace(_y=1) %}", "SecurityError");
}

TEST(Jinja, ElifChainsAndFilterChainsOnBlocks) {
    EXPECT_EQ(render("{% if x == 1 %}one{% elif x == 2 %}two{% elif x == 3 %}three{% else "
                     "%}other{% endif %}",
                     "{\"x\": 3}"),
              "three");
    EXPECT_EQ(render("{% filter upper | trim %}  hi  {% endfilter %}|{% set x | upper %}abc{% "
                     "endset %}{{ x }}|"
                     "{% set y | replace('a', 'b') | upper %}aaa{% endset %}{{ y }}"),
              "HI|ABC|BBB");
}

TEST(Jinja, BreakInsideBlocksLeavesThemUnwritten) {
    EXPECT_EQ(
        render("{% for i in [1, 2, 3] %}{% filter upper %}a{% if i == 2 %}{% break %}{% endif %}"
               "{% endfilter %}{% endfor %}"),
        "A");
    EXPECT_EQ(render("{% for i in [1, 2, 3] %}{% set x %}a{% if i == 2 %}{% continue %}{% endif %}"
                     "{% endset %}{{ x }}{{ i }}{% endfor %}"),
              "a1a3");
    // A loop's else body is outside it: break there ends the enclosing loop.
    EXPECT_EQ(
        render(
            "{% for i in [1, 2, 3] %}{% for j in [] %}{% else %}{{ i }}{% if i == 2 %}{% break %}"
            "{% endif %}{% endfor %}{% endfor %}"),
        "12");
}

TEST(Jinja, CaseMappingCoversLatinGreekAndCyrillic) {
    EXPECT_EQ(render("{{ '\u00dcn\u00efc\u00f6d\u00e9 stra\u00dfe \u0141\u0142 "
                     "\u03a9\u03bc\u03ad\u03b3\u03b1 "
                     "\u041f\u0440\u0438\u0432\u0435\u0442 \u00ff' | upper }}"),
              "\xc3\x9cN\xc3\x8f"
              "C\xc3\x96"
              "D\xc3\x89 STRASSE \xc5\x81\xc5\x81 "
              "\xce\xa9\xce\x9c\xce\x88\xce\x93\xce\x91 "
              "\xd0\x9f\xd0\xa0\xd0\x98\xd0\x92\xd0\x95\xd0\xa2 \xc5\xb8");
    // Final sigma, and jinja2's title filter (words start after blanks, '-' and brackets only)
    // unlike str.title().
    EXPECT_EQ(render("{{ '\u03a3\u0391\u03a3' | lower }}|{{ \"they're x-y\" | title }}|{{ "
                     "\"they're\".title() }}"),
              "\xcf\x83\xce\xb1\xcf\x82|They're X-Y|They'Re");
}

TEST(Jinja, RaiseExceptionMessageIsTheTemplatesText) {
    try {
        render("{{ raise_exception('Conversation roles must alternate user/assistant') }}");
        ADD_FAILURE() << "no error";
    } catch (const vkllm::Error &e) {
        EXPECT_STREQ(e.what(), "Conversation roles must alternate user/assistant");
        EXPECT_EQ(e.status(), VKLLM_ERR_INVALID_ARGUMENT);
    }
}

TEST(Jinja, SyntaxErrorsNameLineAndColumn) {
    expect_error("ok\n{{ 'x' ", "line 2, column");
    expect_error("{% if %}", "line 1, column 7");
    expect_error("{% for %}", "line 1, column 8");
    expect_error("{% if true %}never closed", "unexpected end of template");
    expect_error("{# never closed", "unterminated comment");
    expect_error("{{ 'never closed }}", "unterminated string");
    expect_error("{% endfor %}", "unknown tag 'endfor'");
    expect_error("{{ 1 @ 2 }}", "unexpected char '@'");
    expect_error("{% include 'other.jinja' %}", "not supported");
    expect_error("{{ x | no_such_filter }}", "No filter named 'no_such_filter'");
    expect_error("{{ x is no_such_test }}", "No test named 'no_such_test'");
    expect_error("{{ x is defined is true }}", "cannot chain multiple tests");
    // jinja2 compiles macros, call blocks and {% generation %} as functions: no loop around.
    expect_error("{% break %}", "'break' outside loop");
    expect_error("{% for i in [1] %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}",
                 "'continue' outside loop");
    expect_error("{% for i in [1] %}{% generation %}{% break %}{% endgeneration %}{% endfor %}",
                 "outside loop");
}

}  // namespace
