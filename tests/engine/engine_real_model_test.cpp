// The serving engine on a real model: concurrent greedy requests give exactly the tokens each
// gives alone (with and without prefix-cache hits, with speculation).
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>

#include "engine/engine.h"
#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"
#include "util/data_path.h"

namespace edgeinfer {
namespace {

std::string model_path(const char* name) { return data_dir() + "/models/" + name; }

std::vector<int32_t> greedy_alone(const Model& m, const std::vector<int32_t>& prompt, int n, TensorType kv) {
  ThreadPool pool(2);
  RunnerOptions ro;
  ro.n_ctx = static_cast<int64_t>(prompt.size()) + n + 1;
  ro.kv_type = kv;
  SequenceRunner r(m, kernels_for(select_isa()), pool, ro);
  std::vector<int32_t> out;
  const float* l = r.eval(prompt);
  for (int i = 0; i < n; ++i) {
    const int32_t id = static_cast<int32_t>(std::max_element(l, l + m.config().n_vocab) - l);
    out.push_back(id);
    l = r.eval(std::span<const int32_t>(&id, 1));
  }
  return out;
}

struct Collector {
  std::mutex mu;
  std::condition_variable cv;
  std::map<uint64_t, std::vector<int32_t>> tokens;
  std::map<uint64_t, TokenEvent> final_event;
  EventSink sink() {
    return [this](const TokenEvent& ev) {
      std::lock_guard<std::mutex> lk(mu);
      auto& v = tokens[ev.request_id];
      v.insert(v.end(), ev.tokens.begin(), ev.tokens.end());
      if (ev.done) {
        final_event[ev.request_id] = ev;
        cv.notify_all();
      }
    };
  }
  void wait(size_t n) {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return final_event.size() >= n; });
  }
};

void run_concurrent(TensorType kv, bool speculative) {
  auto model = Model::load(model_path("stories260K.gguf"));
  Tokenizer tok = Tokenizer::from_gguf(model->gguf());
  const std::string shared = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  std::vector<std::vector<int32_t>> prompts;
  for (const char* tail : {" One day", " Her dog", " The sun", " Lily saw a"}) {
    prompts.push_back(tok.encode(shared + tail, true));
  }
  const int n_gen = 40;
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) alone.push_back(greedy_alone(*model, p, n_gen, kv));

  EngineOptions opt;
  opt.n_threads = 2;
  opt.kv_type = kv;
  opt.speculative = speculative;
  Engine engine(*model, tok, opt);
  // Round 1: all at once (no prefix cached yet); round 2: the shared prefix is cached.
  for (int round = 0; round < 2; ++round) {
    Collector c;
    std::vector<uint64_t> ids;
    for (const auto& p : prompts) {
      GenerationRequest r;
      r.prompt = p;
      r.sampling.temperature = 0;
      r.max_tokens = n_gen;
      r.ignore_eos = true;
      r.sink = c.sink();
      ids.push_back(engine.submit(std::move(r)));
    }
    c.wait(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      SCOPED_TRACE("round " + std::to_string(round) + " request " + std::to_string(i));
      EXPECT_EQ(c.tokens[ids[i]], alone[i]);
      EXPECT_EQ(c.final_event[ids[i]].finish, FinishReason::Length);
      if (round == 1) EXPECT_GT(c.final_event[ids[i]].timings.n_cached, 0);
    }
  }
  const EngineStats s = engine.stats();
  EXPECT_GT(s.prefix_hits, 0u);
  if (speculative) EXPECT_GT(s.n_drafted, 0u);
}

TEST(EngineRealModel, ConcurrentGreedyEqualsAloneF32Kv) { run_concurrent(TensorType::F32, false); }
TEST(EngineRealModel, ConcurrentGreedyEqualsAloneF16KvSpeculative) { run_concurrent(TensorType::F16, true); }

TEST(EngineRealModel, CancelFreesBlocks) {
  auto model = Model::load(model_path("stories260K.gguf"));
  Tokenizer tok = Tokenizer::from_gguf(model->gguf());
  EngineOptions opt;
  opt.n_threads = 1;
  Engine engine(*model, tok, opt);
  Collector c;
  GenerationRequest r;
  r.prompt = tok.encode("Once upon a time", true);
  r.sampling.temperature = 0;
  r.max_tokens = 100000;
  r.ignore_eos = true;
  r.sink = c.sink();
  const uint64_t id = engine.submit(std::move(r));
  engine.cancel(id);
  c.wait(1);
  EXPECT_EQ(c.final_event[id].finish, FinishReason::Cancelled);
  engine.wait_idle();
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

}  // namespace
}  // namespace edgeinfer
