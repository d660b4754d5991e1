// The step cost model with synthetic step times: what it learns, the prefill cap and the
// drafts it keeps.
#include "engine/step_cost.h"

#include <gtest/gtest.h>

#include <cmath>

namespace edgeinfer {
namespace {

TEST(StepCost, NothingMeasuredKeepsEveryDraftAndSetsNoCap) {
  StepCostModel m(8);
  EXPECT_EQ(m.base_ms(1), 0);
  EXPECT_EQ(m.prefill_cap(1, 0.2), 0);
  EXPECT_EQ(m.drafts_worth(7, 0.1, 4), 7);
  EXPECT_EQ(m.extra_ms(4, 3), 0);
  EXPECT_EQ(m.drafts_worth(0, 0.9, 1), 0);
}

TEST(StepCost, LearnsBasePerBatchAndTheCostOfExtraRows) {
  StepCostModel m(8);
  m.observe(1, 0, 20);
  EXPECT_DOUBLE_EQ(m.base_ms(1), 20);
  m.observe(1, 0, 30);  // exponential average, newest weight 0.2
  EXPECT_DOUBLE_EQ(m.base_ms(1), 22);
  m.observe(4, 0, 60);
  EXPECT_DOUBLE_EQ(m.base_ms(4), 60);
  // One kind of extra-row count only: all of the added time per row.
  m.observe(4, 2, 80);
  EXPECT_NEAR(m.row_ms(4), 10, 1e-9);
  EXPECT_NEAR(m.extra_ms(4, 3), 30, 1e-9);
  // A batch never measured alone: the nearest smaller one plus a row per sequence; larger than
  // max_decode shares the last slot.
  EXPECT_NEAR(m.base_ms(6), 80, 1e-9);
  m.observe(20, 0, 100);
  EXPECT_DOUBLE_EQ(m.base_ms(8), 100);
  EXPECT_DOUBLE_EQ(m.base_ms(9), 100);
  // A prompt step without decoding rows gives only the floor (3.9 ms a row), below the 10 ms
  // measured: no change.
  m.observe(0, 512, 2000);
  EXPECT_NEAR(m.row_floor_ms(), 2000.0 / 512, 1e-9);
  EXPECT_NEAR(m.row_ms(4), 10, 1e-9);
  EXPECT_DOUBLE_EQ(m.base_ms(4), 60);
}

TEST(StepCost, PromptStepsFloorTheRowCost) {
  StepCostModel m(8);
  // Small prompt steps (the weights' one pass a large share of them) are not a floor.
  m.observe(0, 26, 130);
  EXPECT_EQ(m.row_floor_ms(), 0);
  // 512 prompt rows in 1100 ms, 76 of them attention: 2 ms a row.
  m.observe(0, 512, 1100, 76, 131328);
  EXPECT_NEAR(m.row_floor_ms(), 2, 1e-9);
  EXPECT_EQ(m.attention_ms_per_position(), 0);  // prompt attention is not the decoding rate
  m.observe(4, 0, 60);
  // No extra-row line yet: the floor bounds the first batched steps (12 ms of slack: 6 rows)
  // instead of leaving them unlimited.
  EXPECT_EQ(m.rows_within(4, 0.2), 6);
  EXPECT_EQ(m.prefill_cap(4, 0.2), 6);
  EXPECT_NEAR(m.extra_ms(4, 3), 6, 1e-9);
  // Drafts at 4 x 2 ms a row against 60 * 0.5^d saved: two (30 - 8 + 15 - 8; the third saves 7.5).
  EXPECT_EQ(m.drafts_worth(32, 0.5, 4), 2);
  // Steps whose extra rows look free (base(4) measured high by noise): without the floor the
  // slope 0 meant no limit at all; with it, still 6 rows.
  for (int k = 1; k <= 16; ++k) m.observe(4, k, 60);
  EXPECT_EQ(m.row_ms(4), 2);
  EXPECT_EQ(m.rows_within(4, 0.2), 6);
  EXPECT_EQ(m.drafts_worth(32, 0.5, 4), 2);
  // Rows measured dearer than the floor keep their own cost.
  for (int i = 0; i < 200; ++i) m.observe(4, 1 + i % 8, 60 + 5.0 * (1 + i % 8));
  EXPECT_NEAR(m.row_ms(4), 5, 0.01);  // the free steps forgotten but for a trace
  EXPECT_EQ(m.rows_within(4, 0.2), 2);
}

TEST(StepCost, SeparatesAFixedCostFromThePerRowCost) {
  StepCostModel m(8);
  m.observe(1, 0, 20);
  // Alone, extra rows cost 30 ms once plus 2 ms each (the GEMV gives way to the tile).
  for (int i = 0; i < 20; ++i) {
    const int k = 1 + (i % 4) * 5;
    m.observe(1, k, 20 + 30 + 2.0 * k);
  }
  EXPECT_NEAR(m.row_ms(1), 2, 1e-6);
  EXPECT_NEAR(m.extra_ms(1, 10), 50, 1e-6);
  // Batches of several have their own line (not measured yet).
  EXPECT_EQ(m.extra_ms(2, 10), 0);
}

TEST(StepCost, GrowingContextIsChargedToAttentionNotToTheRows) {
  // Four streams: 30 ms outside attention, 0.01 ms per attended position; a prompt row adds 2 ms
  // plus its own attention. While a prompt is absorbed one row a step, the streams' contexts
  // grow from 1000 to 2000 positions each and every step has an extra row.
  StepCostModel m(8);
  constexpr double kPerPos = 0.01;
  m.set_decode_positions(4000);
  m.observe(4, 0, 30 + kPerPos * 4000, kPerPos * 4000, 4000);
  EXPECT_NEAR(m.base_ms(4), 70, 1e-9);
  for (int i = 0; i <= 50; ++i) {
    const int64_t dec = 4 * (1000 + 20 * i), prompt_pos = 20 * i;
    const int64_t pos = dec + prompt_pos + 1;
    m.observe(4, 1, 30 + 2 + kPerPos * static_cast<double>(pos), kPerPos * static_cast<double>(pos), pos);
  }
  EXPECT_NEAR(m.row_ms(4), 2, 1e-6);
  EXPECT_NEAR(m.attention_ms_per_position(), kPerPos, 1e-12);
  m.set_decode_positions(8000);
  EXPECT_NEAR(m.base_ms(4), 110, 1e-6);
  // 20% of 110 ms: rows at positions 1, 2, ... cost 2.01, 2.02, ...: ten fit (20.55 ms).
  EXPECT_EQ(m.prefill_cap(4, 0.2, 0), 10);
  // Rows at position 1000 and on cost 12 ms each: one.
  EXPECT_EQ(m.prefill_cap(4, 0.2, 1000), 1);
  // Drafts sit at the streams' mean position (2000): 22 ms each, one fits in 22 ms, none in 16.5.
  EXPECT_EQ(m.rows_within(4, 0.2), 1);
  EXPECT_EQ(m.rows_within(4, 0.15), 0);
  EXPECT_EQ(m.prefill_cap(4, 0.01, 1000), 1);  // prompts always advance
  EXPECT_NEAR(m.extra_ms(4, 2), 44, 1e-6);
}

TEST(StepCost, PrefillCapBoundsTheExtraTime) {
  StepCostModel m(8);
  m.observe(4, 0, 60);
  m.observe(4, 3, 90);  // 10 ms a row
  EXPECT_EQ(m.prefill_cap(4, 0.2), 1);   // 12 ms of slack: one row
  EXPECT_EQ(m.prefill_cap(4, 0.5), 3);   // 30 ms: three
  EXPECT_EQ(m.prefill_cap(4, 0.01), 1);  // never below one token
}

TEST(StepCost, RowsWithinTheSlackMayBeNone) {
  StepCostModel m(8);
  EXPECT_EQ(m.rows_within(4, 0.2), -1);  // nothing measured: no limit
  m.observe(4, 0, 60);
  EXPECT_EQ(m.rows_within(4, 0.2), -1);  // no extra-row line yet
  m.observe(4, 3, 90);                   // 10 ms a row
  EXPECT_EQ(m.rows_within(4, 0.2), 1);   // 12 ms of slack
  EXPECT_EQ(m.rows_within(4, 0.5), 3);
  EXPECT_EQ(m.rows_within(4, 0.1), 0);   // 6 ms: not one row (drafts wait, prompts take 1)
  EXPECT_EQ(m.prefill_cap(4, 0.1), 1);
}

TEST(StepCost, DraftsKeptWhereTheExpectedSavingPaysForTheRows) {
  StepCostModel m(8);
  m.observe(1, 0, 20);
  m.observe(4, 0, 60);
  for (int i = 0; i < 20; ++i) {
    const int k = 1 + (i % 4) * 5;
    m.observe(1, k, 20 + 30 + 2.0 * k);  // alone: 30 ms + 2 ms a row
    m.observe(4, k, 60 + 5.0 * k);       // four: 5 ms a row
  }
  // Alone, d drafts save 20 * (p + ... + p^d) against 30 + 2d.
  EXPECT_EQ(m.drafts_worth(32, 0.999, 1), 32);
  EXPECT_EQ(m.drafts_worth(32, 0.9, 1), 21);  // the last worth its row: 20 * 0.9^21 = 2.19 >= 2 > 20 * 0.9^22
  EXPECT_EQ(m.drafts_worth(8, 0.9, 1), 8);    // capped by what was proposed
  EXPECT_EQ(m.drafts_worth(32, 0.6, 1), 0);   // at most 20 * 1.5 = 30 saved: never the fixed 30 + rows
  // Four decoding: 60 * (p + ...) against 4 * 5d.
  EXPECT_EQ(m.drafts_worth(32, 0.5, 4), 1);   // 30 - 20 > 0; the second adds 15 < 20
  EXPECT_EQ(m.drafts_worth(32, 0.3, 4), 0);   // 18 < 20
}

TEST(DraftRecord, EstimatesAcceptanceAndFades) {
  DraftRecord r;
  EXPECT_DOUBLE_EQ(r.p(), 0.9);
  r.update(4, 4);  // all accepted: 4 tested
  EXPECT_DOUBLE_EQ(r.p(), 5.8 / 6.0);
  r.update(4, 1);  // one accepted, the second rejected: 2 tested
  EXPECT_DOUBLE_EQ(r.accepted, 0.8 * 4 + 1);
  EXPECT_DOUBLE_EQ(r.tested, 0.8 * 4 + 2);
  r.update(0, 0);  // nothing drafted: unchanged
  EXPECT_DOUBLE_EQ(r.tested, 0.8 * 4 + 2);
  DraftRecord bad;
  for (int i = 0; i < 20; ++i) bad.update(8, 0);
  EXPECT_LT(bad.p(), 0.3);
  for (int i = 0; i < 200; ++i) bad.fade();
  EXPECT_NEAR(bad.p(), 0.9, 0.01);
}

}  // namespace
}  // namespace edgeinfer
