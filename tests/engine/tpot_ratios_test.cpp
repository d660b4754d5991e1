// Per-token ratios of decode gaps, against the stream's own neighbours (local) and against a
// control run (paired): context growth cancels, stalls stand out, the control's noise is
// smoothed, and only the paired ratios see a steady extra cost.
#include "engine/tpot_ratios.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace edgeinfer {
namespace {

double quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

TEST(PairedTpot, ContextGrowthCancelsAndSteadyCostRemains) {
  // The control's gaps double over the window (attention over a doubling context); the stream
  // with the prefill pays 5% more at every token.
  std::vector<double> control, during;
  for (int i = 0; i < 1000; ++i) {
    control.push_back(30.0 + 0.03 * i);
    during.push_back(1.05 * control.back());
  }
  // The raw summary the ratios replace: p99 of the gaps over the control's p50 is far above 1.3.
  EXPECT_GT(quantile(during, 0.99) / quantile(control, 0.5), 1.3);
  std::vector<double> r;
  append_paired_ratios(during, control, 8, 992, 8, r);
  ASSERT_EQ(r.size(), 984u);
  for (double x : r) EXPECT_NEAR(x, 1.05, 1e-9);
}

TEST(PairedTpot, StallsShowInTheTail) {
  std::vector<double> control(500, 40.0), during(500, 40.0);
  for (size_t i = 0; i < during.size(); i += 25) during[i] = 100.0;  // a slow step every 25 tokens
  std::vector<double> r;
  append_paired_ratios(during, control, 0, during.size(), 8, r);
  ASSERT_EQ(r.size(), 500u);
  EXPECT_DOUBLE_EQ(quantile(r, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(quantile(r, 0.99), 2.5);
}

TEST(PairedTpot, ControlOutliersAreSmoothedAndMissingGapsSkipped) {
  std::vector<double> control(40, 20.0), during(40, 22.0);
  control[10] = 200.0;  // one noisy control gap: the median of its neighbours ignores it
  control[20] = -1;     // no gap there (a first event)
  during[0] = -1;
  std::vector<double> r;
  append_paired_ratios(during, control, 0, 100, 3, r);  // `to` past the end is clipped
  ASSERT_EQ(r.size(), 39u);
  for (double x : r) EXPECT_DOUBLE_EQ(x, 1.1);
}

TEST(PairedTpot, MedianOfAnEvenCountAndTokensOutOfReach) {
  // Index 0 with radius 1 sees control[0..1] = {10, 30}: median 20.
  const std::vector<double> control = {10.0, 30.0};
  const std::vector<double> during = {40.0, 40.0, 40.0, 40.0};
  std::vector<double> r;
  append_paired_ratios(during, control, 0, during.size(), 1, r);
  // Index 1 sees {10, 30} too; index 2 sees only control[1] = 30; index 3 nothing (skipped).
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0], 2.0);
  EXPECT_DOUBLE_EQ(r[1], 2.0);
  EXPECT_DOUBLE_EQ(r[2], 40.0 / 30.0);
  r.clear();
  append_paired_ratios(during, {}, 0, during.size(), 8, r);
  EXPECT_TRUE(r.empty());
}

TEST(LocalTpot, GrowthAndSteadyCostCancelStallsStandOut) {
  std::vector<double> during;
  for (int i = 0; i < 1000; ++i) during.push_back(1.05 * (30.0 + 0.03 * i));
  std::vector<double> r;
  append_local_ratios(during, 0, during.size(), 8, r);
  ASSERT_EQ(r.size(), 1000u);
  for (size_t i = 8; i + 8 < r.size(); ++i) EXPECT_NEAR(r[i], 1.0, 1e-9) << i;
  // At the window's edges the neighbours lie on one side: within the trend over 8 tokens.
  EXPECT_NEAR(r.front(), 1.0, 0.01);
  EXPECT_NEAR(r.back(), 1.0, 0.01);
  for (size_t i = 0; i < during.size(); i += 25) during[i] *= 2;  // a stall every 25 tokens
  r.clear();
  append_local_ratios(during, 0, during.size(), 8, r);
  EXPECT_NEAR(quantile(r, 0.5), 1.0, 1e-3);
  EXPECT_NEAR(quantile(r, 0.99), 2.0, 0.01);
}

TEST(LocalTpot, NeighboursOnlyFromTheWindow) {
  // Gaps before `from` (decoded before the prompts arrived) are not references.
  std::vector<double> during = {-1, 10, 10, 10, 10, 40, 40, 40, 40, 40};
  std::vector<double> r;
  append_local_ratios(during, 5, 20, 3, r);
  ASSERT_EQ(r.size(), 5u);
  for (double x : r) EXPECT_DOUBLE_EQ(x, 1.0);
  r.clear();
  append_local_ratios(during, 0, 5, 8, r);  // the -1 is skipped, as value and as reference
  ASSERT_EQ(r.size(), 4u);
  for (double x : r) EXPECT_DOUBLE_EQ(x, 1.0);
}

}  // namespace
}  // namespace edgeinfer
