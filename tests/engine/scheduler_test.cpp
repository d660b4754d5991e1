// Scheduler with a simulated model (tests/engine/scheduler_sim.h): budgets and chunked prefill,
// decode-first order, the prefill cap, priorities, preemption, cancellation, prefix hits at
// admission, in-flight prefix sharing and speculative drafts. Milliseconds, no tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "scheduler_sim.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

using simtest::concat;
using simtest::continuation;
using simtest::make_prompt;
using simtest::Sim;

SchedulerConfig config(int32_t max_batch, int32_t max_running = 16, int32_t prefill_cap = 0) {
  SchedulerConfig c;
  c.max_batch_tokens = max_batch;
  c.max_running = max_running;
  c.max_prefill_with_decode = prefill_cap;
  c.max_ctx = 4096;
  return c;
}

std::vector<int32_t> chunks_of(const std::vector<ScheduledSeq>& work, const Sequence* s) {
  std::vector<int32_t> out;
  for (const auto& w : work) {
    if (w.seq == s) out.push_back(w.n_tokens);
  }
  return out;
}

TEST(Scheduler, ChunkedPrefillUnderTokenBudget) {
  Sim sim(64, 16, config(64));
  const auto prompt = make_prompt(1, 150);
  Sequence* a = sim.add(prompt, 3);
  std::vector<std::pair<int32_t, bool>> steps;
  while (!sim.idle()) {
    auto rec = sim.step();
    ASSERT_EQ(rec.work.size(), 1u);
    steps.emplace_back(rec.work[0].n_tokens, rec.work[0].sample);
  }
  const std::vector<std::pair<int32_t, bool>> want = {{64, false}, {64, false}, {22, true}, {1, true}, {1, true}};
  EXPECT_EQ(steps, want);
  EXPECT_EQ(sim.generated(a), continuation(prompt, 3));
  EXPECT_EQ(sim.sched.stats().n_prompt_tokens_computed, 150u);
}

TEST(Scheduler, DecodeFirstThenPrefillWithinBudget) {
  Sim sim(256, 16, config(32));
  Sequence* a = sim.add(make_prompt(1, 10), 40);
  sim.step();  // a's prompt; first token
  ASSERT_EQ(a->n_generated(), 1);
  Sequence* b = sim.add(make_prompt(2, 100), 5);
  std::vector<int32_t> b_chunks;
  for (int i = 0; i < 4; ++i) {
    auto rec = sim.step();
    ASSERT_GE(rec.work.size(), 1u);
    EXPECT_EQ(rec.work[0].seq, a) << "the decoding sequence goes first";
    EXPECT_EQ(rec.work[0].n_tokens, 1);
    EXPECT_EQ(rec.n_tokens, std::min<int32_t>(32, 1 + 100 - 31 * i));
    for (int32_t c : chunks_of(rec.work, b)) b_chunks.push_back(c);
  }
  EXPECT_EQ(b_chunks, (std::vector<int32_t>{31, 31, 31, 7}));
  EXPECT_EQ(a->n_generated(), 5) << "one token per step while b prefilled";
  sim.run();
  for (Sequence* s : {a, b}) EXPECT_EQ(sim.generated(s), continuation(std::vector<int32_t>(s->tokens.begin(), s->tokens.begin() + s->n_prompt), s->max_tokens));
}

TEST(Scheduler, PrefillCapAppliesOnlyWhileDecoding) {
  {
    // Nothing decodes: a lone prompt takes the whole budget.
    Sim sim(256, 16, config(64, 16, 8));
    Sequence* b = sim.add(make_prompt(2, 40), 1);
    auto rec = sim.step();
    EXPECT_EQ(chunks_of(rec.work, b), (std::vector<int32_t>{40}));
  }
  Sim sim(256, 16, config(64, 16, 8));
  Sequence* a = sim.add(make_prompt(1, 5), 4);
  sim.step();
  Sequence* b = sim.add(make_prompt(2, 40), 2);
  std::vector<int32_t> b_chunks;
  while (b->n_generated() == 0) {
    auto rec = sim.step();
    for (int32_t c : chunks_of(rec.work, b)) b_chunks.push_back(c);
  }
  // a decodes for three more steps (8 prompt tokens each), then b has the step to itself.
  EXPECT_EQ(b_chunks, (std::vector<int32_t>{8, 8, 8, 16}));
  EXPECT_EQ(a->status, SeqStatus::Finished);
}

TEST(Scheduler, AdmitsByPriorityThenArrival) {
  Sim sim(256, 16, config(64, /*max_running=*/1));
  Sequence* l = sim.add(make_prompt(1, 8), 2, 0);
  Sequence* h = sim.add(make_prompt(2, 8), 2, 5);
  Sequence* m1 = sim.add(make_prompt(3, 8), 2, 2);
  Sequence* m2 = sim.add(make_prompt(4, 8), 2, 2);
  std::vector<const Sequence*> order;
  while (!sim.idle()) {
    auto rec = sim.step();
    for (const auto& w : rec.work) {
      if (order.empty() || order.back() != w.seq) order.push_back(w.seq);
    }
  }
  EXPECT_EQ(order, (std::vector<const Sequence*>{h, m1, m2, l}));
  EXPECT_EQ(sim.sched.stats().n_preemptions, 0u) << "equal or lower priority never preempts";
}

TEST(Scheduler, HigherPriorityPreemptsWhenSlotsAreFull) {
  Sim sim(256, 16, config(64, /*max_running=*/1));
  const auto lp = make_prompt(1, 40);
  Sequence* l = sim.add(lp, 30, 0);
  for (int i = 0; i < 5; ++i) sim.step();
  ASSERT_EQ(l->n_generated(), 5);
  Sequence* h = sim.add(make_prompt(2, 8), 3, 1);
  auto rec = sim.step();
  ASSERT_EQ(rec.work.size(), 1u);
  EXPECT_EQ(rec.work[0].seq, h);
  EXPECT_EQ(l->status, SeqStatus::Waiting);
  EXPECT_TRUE(l->blocks.empty());
  EXPECT_EQ(l->timings.n_preempted, 1);
  const uint64_t cached_before = sim.sched.stats().n_cached_tokens;
  sim.run();
  EXPECT_EQ(sim.generated(l), continuation(lp, 30)) << "recomputed after preemption, same tokens";
  // l's recompute took its full blocks (40 prompt + 5 generated = 2 blocks of 16) from the cache.
  EXPECT_EQ(sim.sched.stats().n_cached_tokens - cached_before, 32u);
  EXPECT_EQ(sim.sched.stats().n_preemptions, 1u);
}

TEST(Scheduler, BlocksRunOutLowestPriorityPreemptedFirstAndRecomputed) {
  // 10 blocks of 4 tokens; three sequences that end at 26 tokens (7 blocks) each.
  Sim sim(10, 4, config(64));
  std::vector<Sequence*> s;
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 3; ++i) {
    prompts.push_back(make_prompt(10 + i, 6));
    s.push_back(sim.add(prompts.back(), 20, /*priority=*/2 - i));
  }
  std::vector<const Sequence*> victims;
  int steps = 0;
  while (!sim.idle() && steps++ < 10000) {
    std::vector<int32_t> before;
    for (auto* q : s) before.push_back(q->timings.n_preempted);
    sim.step();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i]->timings.n_preempted > before[i]) victims.push_back(s[i]);
    }
  }
  ASSERT_TRUE(sim.idle());
  ASSERT_FALSE(victims.empty());
  EXPECT_EQ(victims.front(), s[2]) << "the lowest priority goes first";
  EXPECT_EQ(s[0]->timings.n_preempted, 0) << "the highest priority is never preempted";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sim.generated(s[i]), continuation(prompts[i], 20)) << "sequence " << i;
}

TEST(Scheduler, EqualPrioritySequencesThatEachFillThePoolAllFinish) {
  // 8 blocks of 4 = 32 tokens; each sequence grows to exactly 32 tokens.
  Sim sim(8, 4, config(64));
  std::vector<Sequence*> s;
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < 3; ++i) {
    prompts.push_back(make_prompt(20 + i, 4));
    s.push_back(sim.add(prompts.back(), 28));
  }
  sim.run(5000);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(sim.generated(s[i]), continuation(prompts[i], 28));
  EXPECT_GT(sim.sched.stats().n_preemptions, 0u);
}

TEST(Scheduler, CancellationFreesBlocksAtOnce) {
  Sim sim(16, 4, config(64));
  Sequence* a = sim.add(make_prompt(1, 30), 100);
  sim.step();
  sim.step();
  EXPECT_EQ(sim.cache.n_free(), 16 - 8);
  // b needs 12 blocks: it waits for a.
  Sequence* b = sim.add(make_prompt(2, 45), 2);
  sim.step();
  EXPECT_EQ(b->status, SeqStatus::Waiting);
  sim.cancel(a);
  EXPECT_EQ(sim.cache.n_free(), 16) << "blocks are back the moment the sequence is removed";
  EXPECT_EQ(a->status, SeqStatus::Finished);
  auto rec = sim.step();
  EXPECT_EQ(chunks_of(rec.work, b), (std::vector<int32_t>{45}));
  sim.run();
  EXPECT_EQ(b->status, SeqStatus::Finished);
}

TEST(Scheduler, PrefixHitsAtAdmissionNeverCoverTheLastPromptToken) {
  Sim sim(64, 16, config(256));
  const auto base = make_prompt(1, 64);  // exactly 4 blocks
  sim.add(base, 1);
  sim.run();
  ASSERT_EQ(sim.cache.n_cached(), 4);

  Sequence* same = sim.add(base, 1);  // all 4 blocks cached, but the last token must run
  auto rec = sim.step();
  EXPECT_EQ(same->timings.n_cached, 48);
  EXPECT_EQ(chunks_of(rec.work, same), (std::vector<int32_t>{16}));
  sim.run();

  Sequence* longer = sim.add(concat(base, make_prompt(2, 10)), 1);
  rec = sim.step();
  EXPECT_EQ(longer->timings.n_cached, 64);
  EXPECT_EQ(chunks_of(rec.work, longer), (std::vector<int32_t>{10}));
  sim.run();

  auto other = base;
  other[0] += 1;  // chained hashes: a different first token shares nothing
  Sequence* miss = sim.add(other, 1);
  rec = sim.step();
  EXPECT_EQ(miss->timings.n_cached, 0);
  sim.run();

  Sequence* salted = sim.add(base, 1, 0, /*salt=*/7);
  rec = sim.step();
  EXPECT_EQ(salted->timings.n_cached, 0) << "another cache salt shares nothing";
  sim.run();
  EXPECT_EQ(sim.generated(same), continuation(base, 1));
  EXPECT_EQ(sim.generated(longer), continuation(concat(base, make_prompt(2, 10)), 1));
}

TEST(Scheduler, AdmissionCountsHitsOnTheFreeListExactly) {
  // 6 blocks of 4. a leaves 4 cached blocks on the free list.
  Sim sim(6, 4, config(64));
  const auto base = make_prompt(1, 16);
  sim.add(base, 1);
  sim.run();
  ASSERT_EQ(sim.cache.n_cached(), 4);
  ASSERT_EQ(sim.cache.n_free(), 6);
  // b: the 4 cached blocks (taken off the free list) + 2 new blocks = every free block.
  Sequence* b = sim.add(concat(base, make_prompt(2, 7)), 2);
  auto rec = sim.step();
  EXPECT_EQ(b->timings.n_cached, 16);
  EXPECT_EQ(chunks_of(rec.work, b), (std::vector<int32_t>{7}));
  EXPECT_EQ(sim.cache.n_free(), 0);
  EXPECT_EQ(sim.cache.stats().n_evicted, 0u) << "no hit was evicted to make room for the new blocks";
  sim.run();
  EXPECT_EQ(sim.generated(b), continuation(concat(base, make_prompt(2, 7)), 2));
}

TEST(Scheduler, AdmissionThatCannotStartTakesNothing) {
  // 7 blocks of 4: the 4 blocks of `base` cached and free, r holds the other 3.
  Sim sim(7, 4, config(64));
  const auto base = make_prompt(1, 16);
  sim.add(base, 1);
  sim.run();
  Sequence* r = sim.add(make_prompt(3, 9), 3);  // takes the 3 uncached free blocks
  sim.step();
  ASSERT_EQ(r->blocks.size(), 3u);
  const auto free_list = sim.cache.pool().free_list();
  const auto queries = sim.cache.stats().n_queries;
  // e would take every cached free block as hits and still need new blocks: none left.
  Sequence* e = sim.add(concat(base, make_prompt(4, 12)), 1);  // 7 blocks: 4 hits + 3 new
  sim.step();
  EXPECT_EQ(e->status, SeqStatus::Waiting);
  EXPECT_TRUE(e->blocks.empty());
  EXPECT_EQ(sim.cache.pool().free_list(), free_list) << "no hit resurrected and given back (LRU order kept)";
  EXPECT_EQ(sim.cache.stats().n_queries, queries) << "no lookup counted for an admission that did not happen";
  sim.run(100);
  EXPECT_EQ(e->timings.n_cached, 16);
  EXPECT_EQ(e->status, SeqStatus::Finished);
}

TEST(Scheduler, RefusesASequenceThatCouldNeverFit) {
  Sim sim(4, 4, config(64));
  EXPECT_THROW(sim.add(make_prompt(1, 17), 1), Error);
  EXPECT_EQ(sim.sched.n_waiting(), 0);
}

TEST(Scheduler, MaxRunningIsRespected) {
  Sim sim(256, 16, config(512, /*max_running=*/2));
  for (int i = 0; i < 5; ++i) sim.add(make_prompt(i, 20), 5);
  int steps = 0;
  while (!sim.idle() && steps++ < 1000) {
    sim.step();
    EXPECT_LE(sim.sched.n_running(), 2);
  }
  EXPECT_TRUE(sim.idle());
}

TEST(Scheduler, DraftsRideAlongWhenAccepted) {
  Sim sim(64, 16, config(64));
  const auto prompt = make_prompt(1, 12);
  // Oracle drafts: the model's next 4 tokens; with `wrong_at`, that one is wrong.
  int wrong_at = -1;
  sim.drafter = [&](const Sequence& s) {
    auto d = continuation(s.tokens, 4);
    if (wrong_at >= 0) d[wrong_at] += 1;
    return d;
  };
  Sequence* a = sim.add(prompt, 21);
  sim.step();
  auto rec = sim.step();
  ASSERT_EQ(rec.work.size(), 1u);
  EXPECT_EQ(rec.work[0].n_draft, 4);
  EXPECT_EQ(a->n_generated(), 1 + 5) << "4 accepted drafts + the bonus token";
  wrong_at = 1;
  rec = sim.step();
  EXPECT_EQ(a->n_generated(), 6 + 2) << "draft 0 accepted, draft 1 rejected and replaced";
  wrong_at = -1;
  sim.run();
  EXPECT_EQ(sim.generated(a), continuation(prompt, 21));
}

TEST(Scheduler, DraftsLeaveBudgetForEveryDecoder) {
  Sim sim(64, 16, config(4));
  sim.drafter = [](const Sequence& s) { return continuation(s.tokens, 4); };
  Sequence* a = sim.add(make_prompt(1, 3), 50);
  Sequence* b = sim.add(make_prompt(2, 1), 50);
  sim.step();  // both prompts (3 + 1 tokens)
  auto rec = sim.step();
  ASSERT_EQ(rec.work.size(), 2u);
  EXPECT_EQ(rec.work[0].seq, a);
  EXPECT_EQ(rec.work[0].n_draft, 2) << "budget 4 = a's token + 2 drafts + b's token";
  EXPECT_EQ(rec.work[1].seq, b);
  EXPECT_EQ(rec.work[1].n_draft, 0);
}

TEST(Scheduler, DraftsDroppedWhenBlocksAreShortNobodyPreempted) {
  // 3 blocks of 4: an 8-token prompt, then its first decode opens block 3; drafts would need a 4th.
  Sim sim(3, 4, config(64));
  sim.drafter = [](const Sequence& s) { return continuation(s.tokens, 4); };
  const auto prompt = make_prompt(1, 8);
  Sequence* a = sim.add(prompt, 4);
  sim.step();
  auto rec = sim.step();
  ASSERT_EQ(rec.work.size(), 1u);
  EXPECT_EQ(rec.work[0].n_draft, 3) << "drafts up to the last slot of the last block";
  sim.run();
  EXPECT_EQ(sim.generated(a), continuation(prompt, 4));
  EXPECT_EQ(sim.sched.stats().n_preemptions, 0u);

  Sim tight(3, 4, config(64));
  tight.drafter = [](const Sequence& s) { return continuation(s.tokens, 4); };
  Sequence* b = tight.add(make_prompt(1, 8), 4);
  Sequence* c = tight.add(make_prompt(2, 3), 4);
  tight.step();  // b holds 2 blocks, c 1: none free
  rec = tight.step();
  for (const auto& w : rec.work) {
    if (w.seq == b) {
      EXPECT_EQ(w.n_draft, 0) << "no block for b's drafts";
    }
  }
  tight.run();
  EXPECT_EQ(tight.generated(b), continuation(make_prompt(1, 8), 4));
  EXPECT_EQ(tight.generated(c), continuation(make_prompt(2, 3), 4));
}

TEST(Scheduler, SharedPrefixInFlightIsComputedOnce) {
  const auto shared = make_prompt(1, 992);  // 62 blocks of 16
  auto run = [&](bool share, uint64_t* computed, uint64_t* deferred) {
    SchedulerConfig c = config(2048, 16);
    c.share_inflight_prefixes = share;
    Sim sim(1024, 16, c);
    std::vector<Sequence*> s;
    for (int i = 0; i < 8; ++i) s.push_back(sim.add(concat(shared, make_prompt(100 + i, 50)), 1));
    int steps = 0;
    while (!sim.idle()) {
      sim.step();
      ++steps;
    }
    for (int i = 0; i < 8; ++i) {
      EXPECT_EQ(sim.generated(s[i]), continuation(concat(shared, make_prompt(100 + i, 50)), 1));
      if (share && i > 0) {
        EXPECT_EQ(s[i]->timings.n_cached, 992);
      }
    }
    *computed = sim.sched.stats().n_prompt_tokens_computed;
    *deferred = sim.sched.stats().n_deferred;
    return steps;
  };
  uint64_t computed = 0, deferred = 0;
  // Step 1: the first sequence's whole prompt, the others held back; step 2: their tails.
  EXPECT_EQ(run(true, &computed, &deferred), 2);
  EXPECT_EQ(computed, 992u + 8 * 50);
  EXPECT_EQ(deferred, 7u);
  // Without it, step 1 gives the rest of the budget to a second copy of the prefix.
  uint64_t computed_off = 0;
  run(false, &computed_off, &deferred);
  EXPECT_GT(computed_off, computed + 900);
  EXPECT_EQ(deferred, 0u);
}

TEST(Scheduler, RandomWorkloadsStayConsistent) {
  std::mt19937 rng(1234);
  uint64_t preemptions = 0, accepted = 0, cached = 0, finished = 0, n_cancelled = 0;
  for (int trial = 0; trial < 30; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const int32_t bs = 1 + static_cast<int32_t>(rng() % 8);
    const int32_t n_blocks = 8 + static_cast<int32_t>(rng() % 40);
    SchedulerConfig c = config(8 + static_cast<int32_t>(rng() % 64), 1 + static_cast<int32_t>(rng() % 6),
                               static_cast<int32_t>(rng() % 3) * 4);
    c.max_ctx = n_blocks * bs;
    Sim sim(n_blocks, bs, c);
    std::uniform_int_distribution<int> coin(0, 99);
    sim.drafter = [&](const Sequence& s) {
      auto d = continuation(s.tokens, static_cast<int32_t>(rng() % 5));
      if (!d.empty() && coin(rng) < 30) d[rng() % d.size()] += 1;
      return d;
    };
    const std::vector<int32_t> shared = make_prompt(trial, 3 * bs + 1);
    std::vector<std::pair<Sequence*, std::vector<int32_t>>> live;
    std::vector<Sequence*> cancelled;
    int added = 0;
    for (int step = 0; step < 4000 && (added < 12 || !sim.idle()); ++step) {
      if (added < 12 && coin(rng) < 30) {
        std::vector<int32_t> p = coin(rng) < 60 ? shared : std::vector<int32_t>{};
        p = concat(p, make_prompt(1000 * trial + added, 1 + static_cast<int32_t>(rng() % (2 * bs + 3))));
        const int64_t room = c.max_ctx - static_cast<int64_t>(p.size());
        if (room < 1) continue;
        const int32_t max_tokens = 1 + static_cast<int32_t>(rng() % std::min<int64_t>(room, 3 * bs));
        live.emplace_back(sim.add(p, max_tokens, static_cast<int32_t>(rng() % 3)), p);
        ++added;
      }
      if (!live.empty() && coin(rng) < 3) {
        Sequence* v = live[rng() % live.size()].first;
        if (v->status != SeqStatus::Finished) {
          sim.cancel(v);
          cancelled.push_back(v);
        }
      }
      sim.step();
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
    ASSERT_TRUE(sim.idle()) << "no progress";
    EXPECT_EQ(sim.cache.n_free(), n_blocks) << "every block returned";
    for (auto& [s, p] : live) {
      if (std::find(cancelled.begin(), cancelled.end(), s) != cancelled.end()) continue;
      EXPECT_EQ(sim.generated(s), continuation(p, s->max_tokens)) << "sequence " << s->id;
      ++finished;
    }
    preemptions += sim.sched.stats().n_preemptions;
    accepted += sim.n_accepted;
    cached += sim.sched.stats().n_cached_tokens;
    n_cancelled += cancelled.size();
  }
  // The workloads did exercise what they are meant to.
  EXPECT_GT(preemptions, 10u);
  EXPECT_GT(accepted, 100u);
  EXPECT_GT(cached, 100u);
  EXPECT_GT(n_cancelled, 3u);
  EXPECT_GT(finished, 250u);
  std::printf("random workloads: %llu finished, %llu cancelled, %llu preemptions, %llu drafts accepted, %llu cached tokens\n",
              (unsigned long long)finished, (unsigned long long)n_cancelled, (unsigned long long)preemptions,
              (unsigned long long)accepted, (unsigned long long)cached);
}

}  // namespace
}  // namespace edgeinfer
