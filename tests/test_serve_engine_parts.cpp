// The engine's host-side parts: stop strings over a stream, where a prompt goes (prefix
// reuse), the latency histograms. No device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "histogram.h"
#include "prefix_plan.h"
#include "stop_strings.h"

namespace {

using serve::StopStrings;

// Feeds `pieces` one by one; returns what was handed out, and whether a stop was found.
std::pair<std::string, bool> stream(StopStrings &s, const std::vector<std::string> &pieces) {
    std::string out;
    for (const auto &p : pieces) {
        auto r = s.push(p);
        out += r.text;
        if (r.stopped) return {out, true};
    }
    return {out + s.flush(), false};
}

TEST(StopStrings, AStopSplitAcrossPiecesEndsTheTextBeforeIt) {
    StopStrings s({"</answer>"});
    EXPECT_EQ(s.push("forty-two</an").text, "forty-two");  // "</an" could begin the stop
    auto r = s.push("swer> and more");
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.text, "");
    EXPECT_EQ(s.push("ignored").text, "");
    EXPECT_EQ(s.flush(), "");
}

TEST(StopStrings, HeldTextThatDoesNotBecomeAStopIsHandedOut) {
    StopStrings s({"\n\n"});
    EXPECT_EQ(s.push("line\n").text, "line");
    EXPECT_EQ(s.push("next").text, "\nnext");
    EXPECT_EQ(s.push("\n").text, "");
    EXPECT_EQ(s.flush(), "\n");
}

TEST(StopStrings, TheEarliestOfSeveralStopsWins) {
    StopStrings s({"cd", "b", "zzz"});
    auto [text, stopped] = stream(s, {"a", "bcd"});
    EXPECT_TRUE(stopped);
    EXPECT_EQ(text, "a");
}

TEST(StopStrings, EmptyStopsAreIgnoredAndMultiByteStopsHoldWholeCharacters) {
    StopStrings none({""});
    EXPECT_EQ(stream(none, {"abc", "def"}), std::make_pair(std::string("abcdef"), false));
    StopStrings s({"\xC3\xA9t\xC3\xA9"});  // "été"
    EXPECT_EQ(s.push("un \xC3\xA9").text, "un ");
    auto r = s.push("t\xC3\xA9 chaud");
    EXPECT_TRUE(r.stopped);
    EXPECT_EQ(r.text, "");
}

std::vector<serve::SlotView> views(const std::vector<std::vector<int32_t>> &caches,
                                   const std::vector<bool> &free) {
    std::vector<serve::SlotView> v;
    for (size_t i = 0; i < caches.size(); ++i)
        v.push_back({&caches[i], free[i]});
    return v;
}

TEST(PrefixPlan, TheFreeSlotSharingMostKeepsItsPrefix) {
    const std::vector<std::vector<int32_t>> caches = {{1, 2}, {1, 2, 3, 9}, {}};
    auto plan = serve::plan_prefix(views(caches, {true, true, true}), {1, 2, 3, 4, 5}, true);
    EXPECT_EQ(plan.slot, 1u);
    EXPECT_EQ(plan.fork_from, -1);
    EXPECT_EQ(plan.keep, 3u);
}

TEST(PrefixPlan, ABusySlotSharingMoreIsForked) {
    const std::vector<std::vector<int32_t>> caches = {{1, 2, 3, 4, 7}, {1}, {5, 5, 5}};
    auto plan = serve::plan_prefix(views(caches, {false, true, true}), {1, 2, 3, 4, 5}, true);
    EXPECT_EQ(plan.fork_from, 0);
    EXPECT_EQ(plan.keep, 4u);
    EXPECT_TRUE(plan.slot == 1u || plan.slot == 2u);
}

TEST(PrefixPlan, AtLeastOnePromptTokenIsLeftToEvaluate) {
    const std::vector<std::vector<int32_t>> caches = {{1, 2, 3, 4}};
    auto plan = serve::plan_prefix(views(caches, {true}), {1, 2, 3}, true);
    EXPECT_EQ(plan.slot, 0u);
    EXPECT_EQ(plan.keep, 2u);
}

TEST(PrefixPlan, WithoutReuseNothingIsKeptAndTheEmptiestFreeSlotIsTaken) {
    const std::vector<std::vector<int32_t>> caches = {{1, 2, 3}, {1}, {1, 2}};
    auto plan = serve::plan_prefix(views(caches, {true, true, true}), {1, 2, 3, 4}, false);
    EXPECT_EQ(plan.slot, 1u);
    EXPECT_EQ(plan.fork_from, -1);
    EXPECT_EQ(plan.keep, 0u);
}

TEST(Histogram, ObservationsFallInTheFirstBucketTheyDoNotExceed) {
    auto h = serve::make_histogram({0.1, 1});
    serve::observe(h, 0.05);
    serve::observe(h, 0.1);
    serve::observe(h, 0.5);
    serve::observe(h, 7);
    EXPECT_EQ(h.counts, (std::vector<uint64_t>{2, 1, 1}));
    EXPECT_EQ(h.count, 4u);
    EXPECT_DOUBLE_EQ(h.sum, 7.65);
    EXPECT_EQ(serve::time_to_first_token_histogram().bounds.front(), 0.005);
    EXPECT_EQ(serve::time_to_first_token_histogram().bounds.back(), 60);
    EXPECT_EQ(serve::time_per_token_histogram().bounds.front(), 0.001);
    EXPECT_EQ(serve::time_per_token_histogram().bounds.back(), 10);
}

}  // namespace
