// Hostile templates: each fails on the limit named in its error (the limits bound the work,
// so none can hang; how fast they fail is the benchmarks' business, not a timed test's: under
// the sanitizers the 10M-step budget alone takes ~20 s), and the interpreter's checked integer
// arithmetic.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/checked_int.h"
#include "common/error.h"
#include "jinja_render.h"

using namespace vkllm::chat;
using jinja_test::expect_error;
using jinja_test::render;

namespace {

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