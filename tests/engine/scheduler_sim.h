#pragma once
// A simulated model for driving the Scheduler without tensors. The "model" predicts the next
// token as a hash of the whole prefix, so every sequence has one right continuation no matter how
// it was batched, chunked, preempted or served from the prefix cache. The simulated KV memory
// stores, per block slot, a key of the prefix ending at that position: every step checks that the
// positions a sequence attends to hold its own prefix (a shared or evicted block that was
// overwritten shows up at once) and that new rows are written only to blocks nobody else holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "engine/scheduler.h"
#include "tokenizer/stream_decoder.h"

namespace edgeinfer::simtest {

inline uint64_t mix(uint64_t h, int32_t t) {
  h ^= static_cast<uint64_t>(t) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

// Prefix keys: key[p] covers tokens[0, p].
inline std::vector<uint64_t> prefix_keys(const std::vector<int32_t>& tokens) {
  std::vector<uint64_t> k(tokens.size());
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < tokens.size(); ++i) k[i] = h = mix(h, tokens[i]);
  return k;
}

inline int32_t model_next(uint64_t prefix_key) { return 3 + static_cast<int32_t>(prefix_key % 400); }

// What a sequence generates alone: the model applied max_tokens times.
inline std::vector<int32_t> continuation(std::vector<int32_t> tokens, int32_t n) {
  std::vector<int32_t> out;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t t = model_next(prefix_keys(tokens).back());
    out.push_back(t);
    tokens.push_back(t);
  }
  return out;
}

struct StepRecord {
  std::vector<ScheduledSeq> work;
  int32_t n_tokens = 0;  // all tokens of the step, drafts included
};

class Sim {
 public:
  Sim(int32_t n_blocks, int32_t block_size, SchedulerConfig cfg)
      : cache(n_blocks, block_size), sched(cache, cfg), kv_(static_cast<size_t>(n_blocks) * block_size, 0) {}

  PrefixCache cache;
  Scheduler sched;
  // Drafts for a decoding sequence before each step (nullptr: no drafts).
  std::function<std::vector<int32_t>(const Sequence&)> drafter;

  Sequence* add(std::vector<int32_t> prompt, int32_t max_tokens, int32_t priority = 0, uint64_t salt = 0) {
    auto s = std::make_unique<Sequence>();
    s->id = next_id_++;
    s->arrival = s->id;
    s->priority = priority;
    s->tokens = std::move(prompt);
    s->n_prompt = static_cast<int32_t>(s->tokens.size());
    s->max_tokens = max_tokens;
    s->cache_salt = salt;
    s->timings.n_prompt = s->n_prompt;
    Sequence* p = s.get();
    seqs_[p->id] = std::move(s);
    sched.add(p);
    return p;
  }

  void cancel(Sequence* s) {
    sched.remove(s);
    finished_.push_back(s);
  }

  bool idle() const { return sched.n_running() == 0 && sched.n_waiting() == 0; }

  // One step: schedule, check, "compute", sample, finish. Returns what ran.
  StepRecord step() {
    if (drafter) {
      for (Sequence* s : sched.running()) {
        s->draft.clear();
        if (s->n_pending() == 1) s->draft = drafter(*s);
      }
    }
    StepRecord rec;
    rec.work = sched.schedule();
    check_refcounts();
    const int32_t bs = cache.block_size();
    std::map<const Sequence*, int> seen;
    for (const ScheduledSeq& w : rec.work) {
      Sequence* s = w.seq;
      EXPECT_EQ(seen[s]++, 0) << "sequence " << s->id << " scheduled twice in one step";
      EXPECT_EQ(s->status, SeqStatus::Running);
      EXPECT_GE(w.n_tokens, 1);
      EXPECT_LE(s->n_computed + w.n_tokens, static_cast<int32_t>(s->tokens.size()));
      EXPECT_EQ(w.sample, s->n_computed + w.n_tokens == static_cast<int32_t>(s->tokens.size()));
      if (w.n_draft > 0) {
        EXPECT_TRUE(w.sample && w.n_tokens == 1);
      }
      const int32_t end = s->n_computed + w.n_tokens + w.n_draft;
      EXPECT_LE(end, sched.config().max_ctx);
      EXPECT_GE(static_cast<int64_t>(s->blocks.size()) * bs, end) << "block table too short";
      rec.n_tokens += w.n_tokens + w.n_draft;
      // What attention reads: the sequence's own prefix.
      std::vector<int32_t> full(s->tokens.begin(), s->tokens.begin() + s->n_computed + w.n_tokens);
      full.insert(full.end(), s->draft.begin(), s->draft.begin() + w.n_draft);
      const std::vector<uint64_t> keys = prefix_keys(full);
      for (int32_t p = 0; p < s->n_computed; ++p) {
        const BlockId b = s->blocks[p / bs];
        if (kv_[static_cast<size_t>(b) * bs + p % bs] != keys[p]) {
          ADD_FAILURE() << "sequence " << s->id << " position " << p << ": its KV slot holds another prefix";
          return rec;
        }
      }
      for (int32_t p = s->n_computed; p < end; ++p) {
        const BlockId b = s->blocks[p / bs];
        if (cache.pool().ref_count(b) != 1 || cache.is_cached(b)) {
          ADD_FAILURE() << "writing into block " << b << ", which another sequence holds or is cached";
          return rec;
        }
        kv_[static_cast<size_t>(b) * bs + p % bs] = keys[p];
      }
    }
    EXPECT_LE(rec.n_tokens, sched.config().max_batch_tokens);
    for (const ScheduledSeq& w : rec.work) {
      Sequence* s = w.seq;
      s->scheduled_once = true;
      if (!w.sample) {
        sched.advance(s, w.n_tokens);
        continue;
      }
      std::vector<int32_t> cur = s->tokens;
      std::vector<int32_t> accepted;
      int32_t m = 0;
      for (int32_t j = 0; j <= w.n_draft; ++j) {
        const int32_t t = model_next(prefix_keys(cur).back());
        accepted.push_back(t);
        cur.push_back(t);
        if (j < w.n_draft) {
          if (t != s->draft[j]) break;
          ++m;
        }
      }
      n_drafted += w.n_draft;
      n_accepted += m;
      sched.advance(s, w.n_tokens + m);
      s->draft.clear();
      bool done = false;
      for (int32_t t : accepted) {
        s->tokens.push_back(t);
        s->timings.n_generated++;
        if (s->n_generated() >= s->max_tokens) {
          done = true;
          break;
        }
      }
      if (done) {
        sched.remove(s);
        finished_.push_back(s);
      }
    }
    check_refcounts();
    return rec;
  }

  // Steps until nothing is left (fails after max_steps: a livelock).
  int run(int max_steps = 100000) {
    int n = 0;
    while (!idle()) {
      step();
      if (::testing::Test::HasFatalFailure()) return n;
      if (++n >= max_steps) {
        ADD_FAILURE() << "no progress after " << max_steps << " steps";
        return n;
      }
    }
    return n;
  }

  const std::vector<Sequence*>& finished() const { return finished_; }
  std::vector<int32_t> generated(const Sequence* s) const {
    return std::vector<int32_t>(s->tokens.begin() + s->n_prompt, s->tokens.end());
  }
  uint64_t n_drafted = 0, n_accepted = 0;

  // Each block's reference count equals the number of block tables holding it.
  void check_refcounts() {
    std::vector<int32_t> refs(static_cast<size_t>(cache.n_blocks()), 0);
    for (const Sequence* s : sched.running()) {
      for (BlockId b : s->blocks) refs[static_cast<size_t>(b)]++;
    }
    for (const Sequence* s : sched.waiting()) EXPECT_TRUE(s->blocks.empty()) << "waiting sequence holds blocks";
    for (BlockId b = 0; b < cache.n_blocks(); ++b) {
      ASSERT_EQ(cache.pool().ref_count(b), refs[static_cast<size_t>(b)]) << "block " << b;
    }
  }

 private:
  std::vector<uint64_t> kv_;
  std::map<uint64_t, std::unique_ptr<Sequence>> seqs_;
  std::vector<Sequence*> finished_;
  uint64_t next_id_ = 1;
};

// Deterministic prompt: `n` tokens from a seed (ids 3..402).
inline std::vector<int32_t> make_prompt(uint64_t seed, int32_t n) {
  std::vector<int32_t> p;
  uint64_t h = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int32_t i = 0; i < n; ++i) {
    h = mix(h, i);
    p.push_back(3 + static_cast<int32_t>(h % 400));
  }
  return p;
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace edgeinfer::simtest
