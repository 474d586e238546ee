// Unit tests of the Jinja interpreter (src/chat): the language as jinja2 3.1 has it in
// transformers' environment (each expected string is what jinja2 renders), JSON in and out,
// and hostile templates, which must fail quickly with an error rather than hang or crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/checked_int.h"
#include "common/error.h"

using namespace vkllm::chat;

namespace {

RenderOptions fixed_time() {
    RenderOptions options;
    options.now = 1768478400;  // 2026-01-15T12:00:00 UTC
    return options;
}

std::string render(const std::string &source, const std::string &context_json = "{}") {
    return render_template(source, parse_json(context_json), fixed_time());
}

// The render fails with a vkllm::Error whose message contains `what`.
void expect_error(const std::string &source, const std::string &what,
                  const RenderOptions &options = fixed_time()) {
    try {
        std::string out = render_template(source, parse_json("{}"), options);
        ADD_FAILURE() << "rendered without error: " << source.substr(0, 200) << " -> "
                      << out.substr(0, 200);
    } catch (const vkllm::Error &e) {
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos)
            << source.substr(0, 200) << ": " << e.what();
    }
}

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

// ---- JSON

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

// ---- hostile templates: each fails on the limit named in its error (the limits bound the
// work, so none can hang; how fast they fail is the benchmarks' business, not a timed test's:
// under the sanitizers the 10M-step budget alone takes ~20 s)

class JinjaHostile : public ::testing::Test {
  protected:
    void expect_refused(const std::string &source, const std::string &what) {
        expect_error(source, what);
    }
};

TEST_F(JinjaHostile, HugeRangeIsRefused) {
    expect_refused("{% for i in range(10**9) %}x{% endfor %}", "Range too big");
}

TEST_F(JinjaHostile, NestedLoopsRunOutOfSteps) {
    expect_refused(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "budget");
}

TEST_F(JinjaHostile, UnboundedMacroRecursionStops) {
    expect_refused("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(1) }}", "RecursionError");
}

TEST_F(JinjaHostile, HugeOutputStops) {
    expect_refused("{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", "exceeds");
    expect_refused("{{ 'a' * 100000000 }}", "exceeds");
    expect_refused("{{ 'abc'.replace('', 'xxxxxxxxxxxxxxxxxxx') * 1000000 }}", "exceeds");
}

TEST_F(JinjaHostile, DoublingStringsAndListsStop) {
    expect_refused(
        "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% "
        "endfor %}",
        "exceeds");
    expect_refused(
        "{% set ns = namespace(l=[1]) %}{% for i in range(60) %}{% set ns.l = ns.l + ns.l %}{% "
        "endfor %}",
        "MemoryError");
}

TEST_F(JinjaHostile, SharedSublistsCannotExplode) {
    const std::string build =
        "{% set ns = namespace(l=[1], m=[1]) %}{% for i in range(60) %}"
        "{% set ns.l = [ns.l, ns.l] %}{% set ns.m = [ns.m, ns.m] %}{% endfor %}";
    expect_refused(build + "{{ ns.l }}", "exceeds");
    expect_refused(build + "{{ ns.l | tojson }}", "exceeds");
    expect_refused(build + "{{ ns.l == ns.m }}", "comparison visits more than");
    expect_refused(build + "{{ [ns.l, ns.m] | sort }}", "comparison visits more than");
    EXPECT_EQ(render(build + "{{ ns.l == ns.l }}"), "True");  // one object: no look inside
}

TEST_F(JinjaHostile, DeepNestingIsASyntaxError) {
    expect_refused("{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}",
                   "nesting too deep");
    expect_refused("{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}",
                   "nesting too deep");
    std::string ifs;
    for (int i = 0; i < 5000; ++i)
        ifs += "{% if true %}";
    expect_refused(ifs, "nesting too deep");
    expect_refused("{{ " + std::string(5000, '-') + "1 }}", "nesting too deep");
    expect_refused("{{ " + std::string(20000, 'x') + std::string(20000, '.') + " }}",
                   "expected name");
}

TEST_F(JinjaHostile, LongChainsAreBoundedOrFlat) {
    auto repeat = [](const std::string &s, int n) {
        std::string out;
        for (int i = 0; i < n; ++i)
            out += s;
        return out;
    };
    // Chains parsed in a loop would recurse as deep when evaluated and freed.
    expect_refused("{{ 1" + repeat(" + 1", 100000) + " }}", "nesting too deep");
    expect_refused("{{ x" + repeat(".a", 100000) + " }}", "nesting too deep");
    expect_refused("{{ x" + repeat("|trim", 100000) + " }}", "nesting too deep");
    expect_refused("{{ x" + repeat("()", 100000) + " }}", "nesting too deep");
    expect_refused("{{ 1" + repeat(" if 1", 100000) + " }}", "nesting too deep");
    // Flat ones are fine however long.
    EXPECT_EQ(
        render("{% if false %}" + repeat("{% elif false %}", 100000) + "{% else %}end{% endif %}"),
        "end");
    EXPECT_EQ(render("{{ 1" + repeat(" ~ 1", 99999) + " }}"), std::string(100000, '1'));
}

TEST_F(JinjaHostile, ValuesNestedTooDeepAreRefused) {
    expect_refused(
        "{% set ns = namespace(l=1) %}{% for i in range(100000) %}{% set ns.l = [ns.l] %}{% endfor "
        "%}",
        "nested deeper");
    expect_refused(
        "{% set ns = namespace() %}{% for i in range(100000) %}{% set ns.l = {'a': ns.l} %}{% "
        "endfor %}",
        "nested deeper");
    EXPECT_THROW(parse_json(std::string(200, '[') + std::string(200, ']')), vkllm::Error);
}

TEST_F(JinjaHostile, SelfReferencesRenderAndAreFreed) {
    // A namespace holding itself, a macro in the frame it closes over, loop.changed()
    // remembering the loop: cycles the render breaks at its end (the sanitizer build checks).
    EXPECT_EQ(
        render(
            "{% set ns = namespace() %}{% set ns.self = ns %}{% macro m() %}{{ ns.self.self is "
            "defined }}"
            "{% endmacro %}{{ m() }}{% for i in range(2) %}{{ loop.changed(loop) }}{% endfor %}"),
        "TrueTrueTrue");
}

TEST_F(JinjaHostile, IntegerOverflowIsAnError) {
    expect_refused("{{ 2 ** 64 }}", "OverflowError");
    expect_refused("{{ 9223372036854775807 + 1 }}", "OverflowError");
    expect_refused("{{ 99999999999999999999 }}", "too large");
}

// The interpreter's integer arithmetic (common/checked_int.h, portable comparisons) against the
// exact result in 128 bits, on every pair of values near the edges of int64 and around zero.
TEST(CheckedInt, OverflowIsReportedExactlyWhereTheTrueResultLeavesInt64) {
    const int64_t hi = INT64_MAX, lo = INT64_MIN;
    std::vector<int64_t> v{lo,          lo + 1, lo + 2, lo / 2,     lo / 2 - 1, -3037000500,
                           -3037000499, -65536, -2,     -1,         0,          1,
                           2,           3,      65536,  3037000499, 3037000500, hi / 2,
                           hi / 2 + 1,  hi - 2, hi - 1, hi};
    for (int64_t x : v)
        for (int64_t y : v) {
            const __int128 sums[3] = {__int128(x) + y, __int128(x) - y, __int128(x) * y};
            bool (*const ops[3])(int64_t, int64_t, int64_t *) = {
                vkllm::checked_add, vkllm::checked_sub, vkllm::checked_mul};
            for (int op = 0; op < 3; ++op) {
                int64_t r = 7;
                bool fits = sums[op] >= lo && sums[op] <= hi;
                ASSERT_EQ(ops[op](x, y, &r), fits) << "op " << op << " x " << x << " y " << y;
                EXPECT_EQ(r, fits ? int64_t(sums[op]) : 7) << "op " << op << " x " << x;
            }
        }
}

TEST_F(JinjaHostile, UnterminatedTagsAtTheEnd) {
    for (const char *s :
         {"{{", "{%", "{#", "{{ 'a", "{% if", "{% raw %}", "{{ x[", "{{ x(", "{%- ", "{{ {"})
        expect_refused(s, "line 1");
}

}  // namespace
