// Small engine pieces: prompt-lookup and predicted-output drafting, stop-string matching,
// latency summaries.
#include <gtest/gtest.h>

#include "engine/prompt_lookup.h"
#include "engine/serve_bench.h"
#include "engine/stop_matcher.h"

namespace edgeinfer {
namespace {

TEST(PromptLookup, ProposesWhatFollowedTheLatestEarlierMatch) {
  PromptLookupParams p;
  p.max_draft = 3;
  std::vector<int32_t> d;
  // tail (7, 8) occurs at 1 and at 5; the latest earlier one (5) is followed by 1, 2.
  prompt_lookup_draft(std::vector<int32_t>{0, 7, 8, 9, 9, 7, 8, 1, 2, 7, 8}, p, d);
  EXPECT_EQ(d, (std::vector<int32_t>{1, 2, 7}));
  // Longer n-grams win: tail (9, 7, 8) occurs once, at 3.
  prompt_lookup_draft(std::vector<int32_t>{9, 7, 8, 5, 6, 4, 7, 8, 3, 9, 7, 8}, p, d);
  EXPECT_EQ(d, (std::vector<int32_t>{5, 6, 4}));
  // Nothing repeats: no draft.
  prompt_lookup_draft(std::vector<int32_t>{1, 2, 3, 4, 5}, p, d);
  EXPECT_TRUE(d.empty());
  // A draft stops at the end of the tokens.
  p.max_draft = 8;
  prompt_lookup_draft(std::vector<int32_t>{4, 5, 6, 4, 5}, p, d);
  EXPECT_EQ(d, (std::vector<int32_t>{6, 4, 5}));
}

TEST(PromptLookup, PredictedOutputAlignedThenByNgram) {
  PromptLookupParams p;
  p.max_draft = 4;
  const std::vector<int32_t> prediction = {10, 11, 12, 13, 14, 15, 16};
  std::vector<int32_t> d;
  // Nothing generated yet: the prediction's start.
  predicted_draft(std::vector<int32_t>{1, 2, 3}, {}, prediction, p, d);
  EXPECT_EQ(d, (std::vector<int32_t>{10, 11, 12, 13}));
  // Generated so far matches: continue from there.
  predicted_draft(std::vector<int32_t>{1, 2, 3, 10, 11}, std::vector<int32_t>{10, 11}, prediction, p, d);
  EXPECT_EQ(d, (std::vector<int32_t>{12, 13, 14, 15}));
  // Diverged (an inserted token), but the last tokens occur in the prediction: re-synchronize.
  predicted_draft(std::vector<int32_t>{1, 10, 99, 12, 13}, std::vector<int32_t>{10, 99, 12, 13}, prediction, p, d);
  EXPECT_EQ(d, (std::vector<int32_t>{14, 15, 16}));
  // Diverged with nothing in common: no draft.
  predicted_draft(std::vector<int32_t>{1, 50, 51}, std::vector<int32_t>{50, 51}, prediction, p, d);
  EXPECT_TRUE(d.empty());
}

TEST(StopMatcher, HoldsBackPossibleStartsAndCutsAtTheEarliestStop) {
  StopMatcher m({"END", "\n\n"});
  EXPECT_EQ(m.push("Hello E"), "Hello ");  // "E" may start "END"
  EXPECT_EQ(m.push("ND"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "END");
  EXPECT_EQ(m.push("more"), "") << "input after the stop is ignored";

  StopMatcher n({"END", "\n\n"});
  EXPECT_EQ(n.push("a\n"), "a");
  EXPECT_EQ(n.push("b EN"), "\nb ");
  EXPECT_EQ(n.flush(), "EN") << "held-back text is released at the end";
  EXPECT_FALSE(n.stopped());

  StopMatcher e({"xy", "abc"});
  EXPECT_EQ(e.push("1abcxy"), "1");
  EXPECT_EQ(e.matched(), "abc") << "the earliest occurrence wins";

  StopMatcher none({"", "zz"});
  EXPECT_EQ(none.push("z"), "");
  EXPECT_EQ(none.push("a"), "za");
}

TEST(ServeBench, SummaryPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 101; ++i) v.push_back(i);
  const LatencySummary s = summarize(v);
  EXPECT_EQ(s.n, 101);
  EXPECT_DOUBLE_EQ(s.p50, 51);
  EXPECT_DOUBLE_EQ(s.p90, 91);
  EXPECT_DOUBLE_EQ(s.p99, 100);
  EXPECT_DOUBLE_EQ(s.max, 101);
  EXPECT_DOUBLE_EQ(s.mean, 51);
  EXPECT_EQ(summarize({}).n, 0);
}

}  // namespace
}  // namespace edgeinfer
