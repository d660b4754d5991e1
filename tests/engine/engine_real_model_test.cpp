// The serving engine on real models (stories260K and the synthetic models): concurrent greedy
// requests give exactly the tokens each gives alone — with and without prefix-cache hits, with
// F32/F16/Q8_0 KV, with speculation, under preemption — plus stop strings, length limits,
// logprobs, text deltas, request validation and prefix-cache persistence across restarts; and
// bench-serve's three workloads, small, end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <unistd.h>

#include "engine/engine.h"
#include "engine/serve_bench.h"
#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "model/synth_model.h"
#include "tokenizer/tokenizer.h"
#include "util/data_path.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

namespace fs = std::filesystem;

std::string model_path(const char* name) { return data_dir() + "/models/" + name; }

std::vector<int32_t> greedy_alone(const Model& m, const std::vector<int32_t>& prompt, int n, TensorType kv) {
  ThreadPool pool(1);  // results do not depend on the thread count (work is split by output rows)
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

struct Result {
  std::vector<int32_t> tokens;
  std::string text;
  std::vector<TokenLogprobs> logprobs;
  size_t n_events = 0;
  TokenEvent final_event;
};

struct Collector {
  std::mutex mu;
  std::condition_variable cv;
  std::map<uint64_t, Result> results;
  size_t n_done = 0;
  EventSink sink() {
    return [this](const TokenEvent& ev) {
      std::lock_guard<std::mutex> lk(mu);
      Result& r = results[ev.request_id];
      EXPECT_FALSE(r.final_event.done) << "event after the final one";
      r.tokens.insert(r.tokens.end(), ev.tokens.begin(), ev.tokens.end());
      r.text += ev.text;
      r.logprobs.insert(r.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
      r.n_events++;
      if (ev.done) {
        r.final_event = ev;
        ++n_done;
        cv.notify_all();
      }
    };
  }
  void wait(size_t n) {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return n_done >= n; });
  }
};

GenerationRequest greedy_request(const std::vector<int32_t>& prompt, int n_gen, Collector& c) {
  GenerationRequest r;
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.max_tokens = n_gen;
  r.ignore_eos = true;
  r.sink = c.sink();
  return r;
}

// Submits every prompt at once, waits, returns results in prompt order.
std::vector<Result> run_all(Engine& engine, const std::vector<std::vector<int32_t>>& prompts, int n_gen,
                            const std::function<void(GenerationRequest&)>& tweak = {}) {
  Collector c;
  std::vector<uint64_t> ids;
  for (const auto& p : prompts) {
    GenerationRequest r = greedy_request(p, n_gen, c);
    if (tweak) tweak(r);
    ids.push_back(engine.submit(std::move(r)));
  }
  c.wait(ids.size());
  std::vector<Result> out;
  for (uint64_t id : ids) out.push_back(c.results[id]);
  return out;
}

struct Loaded {
  std::unique_ptr<Model> model;
  Tokenizer tok;
};

Loaded load(const char* name) {
  auto m = Model::load(model_path(name));
  Tokenizer t = Tokenizer::from_gguf(m->gguf());
  return {std::move(m), std::move(t)};
}

std::vector<std::vector<int32_t>> story_prompts(const Tokenizer& tok) {
  const std::string shared = "Once upon a time, there was a little girl named Lily. She loved to play outside.";
  std::vector<std::vector<int32_t>> prompts;
  for (const char* tail : {" One day", " Her dog", " The sun", " Lily saw a"}) prompts.push_back(tok.encode(shared + tail, true));
  return prompts;
}

// Random-token prompts for the synthetic models (their vocabulary is stories260K's), sharing a
// prefix of `shared` tokens (>= 8), then `unique` tokens of their own, then an echo of shared
// tokens 1..4, so that prompt lookup has something to propose.
std::vector<std::vector<int32_t>> random_prompts(int n, int shared, int unique, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> base(static_cast<size_t>(shared));
  base.insert(base.begin(), 1);  // BOS
  for (size_t i = 1; i < base.size(); ++i) base[i] = 3 + static_cast<int32_t>(rng() % 500);
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < n; ++i) {
    auto p = base;
    for (int j = 0; j < unique; ++j) p.push_back(3 + static_cast<int32_t>(rng() % 500));
    if (unique > 0) p.insert(p.end(), base.begin() + 1, base.begin() + 5);
    out.push_back(p);
  }
  return out;
}

void expect_concurrent_equals_alone(const char* model_name, TensorType kv, bool speculative,
                                    const std::vector<std::vector<int32_t>>& prompts, int n_gen, int n_threads = 2) {
  Loaded L = load(model_name);
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) alone.push_back(greedy_alone(*L.model, p, n_gen, kv));

  EngineOptions opt;
  opt.n_threads = n_threads;
  opt.kv_type = kv;
  opt.speculative = speculative;
  opt.draft_cost_gate = false;  // every draft verified, whatever the timings: the tests check them
  Engine engine(*L.model, L.tok, opt);
  // Round 1: all at once (no prefix cached yet); round 2: the shared prefix is cached.
  for (int round = 0; round < 2; ++round) {
    const auto res = run_all(engine, prompts, n_gen);
    for (size_t i = 0; i < prompts.size(); ++i) {
      SCOPED_TRACE(std::string(model_name) + " round " + std::to_string(round) + " request " + std::to_string(i));
      EXPECT_EQ(res[i].tokens, alone[i]);
      EXPECT_EQ(res[i].final_event.finish, FinishReason::Length);
      EXPECT_EQ(res[i].final_event.timings.n_generated, n_gen);
      if (round == 1) {
        EXPECT_GT(res[i].final_event.timings.n_cached, 0);
      }
    }
  }
  engine.wait_idle();  // statistics are folded in after the step that sent the final events
  const EngineStats s = engine.stats();
  EXPECT_GT(s.prefix_hits, 0u);
  EXPECT_EQ(s.kv_blocks_used, 0);
  if (speculative) {
    EXPECT_GT(s.n_drafted, 0u);
  }
}

TEST(EngineRealModel, ConcurrentGreedyEqualsAloneF32Kv) {
  Loaded L = load("stories260K.gguf");
  expect_concurrent_equals_alone("stories260K.gguf", TensorType::F32, false, story_prompts(L.tok), 40);
}
TEST(EngineRealModel, ConcurrentGreedyEqualsAloneF16KvSpeculative) {
  Loaded L = load("stories260K.gguf");
  expect_concurrent_equals_alone("stories260K.gguf", TensorType::F16, true, story_prompts(L.tok), 40);
}
TEST(EngineRealModel, ConcurrentGreedyEqualsAloneQ8Kv) {
  // stories260K's heads (8 wide) are narrower than a Q8_0 block (32): blocks span heads.
  Loaded L = load("stories260K.gguf");
  expect_concurrent_equals_alone("stories260K.gguf", TensorType::Q8_0, true, story_prompts(L.tok), 40);
}
TEST(EngineRealModel, ConcurrentGreedyEqualsAloneSynthModels) {
  // GQA, biases + NEOX rope, MQA + rope factors; Q8_0 KV with whole-block heads.
  expect_concurrent_equals_alone("synth-llama-f32.gguf", TensorType::F16, true, random_prompts(4, 40, 9, 1), 16, 1);
  expect_concurrent_equals_alone("synth-llama-f16.gguf", TensorType::Q8_0, false, random_prompts(3, 33, 5, 2), 12, 1);
  expect_concurrent_equals_alone("synth-qwen2-f32.gguf", TensorType::Q8_0, true, random_prompts(3, 35, 7, 3), 12, 1);
  expect_concurrent_equals_alone("synth-llama3-f32.gguf", TensorType::F16, false, random_prompts(3, 20, 30, 4), 12, 1);
}
TEST(EngineRealModel, ConcurrentGreedyEqualsAloneQuantizedWeights) {
  // Types whose prefill tile and decode dot round differently (every SIMD tile does): a
  // token's numbers must follow its own kind (prompt or generated), not its batch-mates.
  // (Random models rarely repeat an n-gram of the prompt, so prompt lookup may propose nothing
  // here: speculation is exercised on stories260K above.)
  expect_concurrent_equals_alone("synth-llama-q4_0.gguf", TensorType::F16, false, random_prompts(4, 36, 7, 5), 14, 2);
  expect_concurrent_equals_alone("synth-llama-q8_0.gguf", TensorType::F16, false, random_prompts(3, 33, 5, 6), 12, 1);
  expect_concurrent_equals_alone("synth-llama-q4_k_m.gguf", TensorType::Q8_0, false, random_prompts(3, 40, 6, 7), 12, 2);
  expect_concurrent_equals_alone("synth-qwen2-q4_k_m.gguf", TensorType::F16, false, random_prompts(3, 35, 9, 8), 12, 1);
}

// Draft-model speculation: output identical to greedy decoding alone; drafts proposed and
// accepted. Prompt lookup is switched off (n-grams longer than any prompt) so every draft comes
// from the draft model.
void expect_draft_model_keeps_output(const char* main_name, const char* draft_name, TensorType kv,
                                     const std::vector<std::vector<int32_t>>& prompts, int n_gen,
                                     double min_acceptance) {
  Loaded L = load(main_name);
  auto draft = Model::load(model_path(draft_name));
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) alone.push_back(greedy_alone(*L.model, p, n_gen, kv));
  EngineOptions opt;
  opt.n_threads = 2;
  opt.kv_type = kv;
  opt.draft_model = draft.get();
  opt.lookup.min_ngram = opt.lookup.max_ngram = 100000;
  Engine engine(*L.model, L.tok, opt);
  for (int round = 0; round < 2; ++round) {
    const auto res = run_all(engine, prompts, n_gen);
    for (size_t i = 0; i < prompts.size(); ++i) {
      SCOPED_TRACE(std::string(main_name) + " drafted by " + draft_name + ", round " + std::to_string(round) +
                   ", request " + std::to_string(i));
      EXPECT_EQ(res[i].tokens, alone[i]);
      EXPECT_EQ(res[i].final_event.timings.n_generated, n_gen);
    }
  }
  engine.wait_idle();
  const EngineStats s = engine.stats();
  EXPECT_GT(s.n_drafted, 0u);
  EXPECT_GE(static_cast<double>(s.n_draft_accepted), min_acceptance * static_cast<double>(s.n_drafted))
      << s.n_draft_accepted << " of " << s.n_drafted << " drafts accepted";
  EXPECT_EQ(s.kv_blocks_used, 0);
}

TEST(EngineRealModel, DraftModelSpeculationKeepsGreedyOutput) {
  // A model drafting for itself proposes exactly what greedy decoding picks: every draft holds.
  Loaded L = load("stories260K.gguf");
  expect_draft_model_keeps_output("stories260K.gguf", "stories260K.gguf", TensorType::F16, story_prompts(L.tok), 40,
                                  1.0);
  // A quantized copy drafting for the F32 model: most drafts hold, output unchanged.
  expect_draft_model_keeps_output("synth-llama-f32.gguf", "synth-llama-q8_0.gguf", TensorType::F16,
                                  random_prompts(3, 30, 8, 9), 16, 0.3);
}

TEST(EngineRealModel, DraftModelWithAnotherVocabularyIsRefused) {
  // A small random model with Llama's 32000-token vocabulary cannot draft for stories260K (512).
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("edgeinfer-draft-vocab-" + std::to_string(::getpid()) + ".gguf")).string();
  {
    ThreadPool pool(2);
    SynthOptions so;
    so.preset = "small";
    so.type = "q4_0";
    so.vocab_from = data_dir() + "/tokenizer/ggml-vocab-llama-spm.gguf";
    write_synth_model(path, so, pool);
  }
  Loaded L = load("stories260K.gguf");
  auto other = Model::load(path);
  ASSERT_NE(other->config().n_vocab, L.model->config().n_vocab);
  EngineOptions opt;
  opt.n_threads = 1;
  opt.draft_model = other.get();
  try {
    Engine e(*L.model, L.tok, opt);
    ADD_FAILURE() << "a draft model with another vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(EngineRealModel, Q8KvLogitsCloseToF16) {
  Loaded L = load("stories260K.gguf");
  const auto prompt = story_prompts(L.tok)[0];
  auto logits = [&](TensorType kv) {
    ThreadPool pool(1);
    RunnerOptions ro;
    ro.n_ctx = 256;
    ro.kv_type = kv;
    SequenceRunner r(*L.model, kernels_for(select_isa()), pool, ro);
    const float* l = r.eval(prompt, /*all_logits=*/true);
    return std::vector<float>(l, l + prompt.size() * L.model->config().n_vocab);
  };
  const auto a = logits(TensorType::F16), b = logits(TensorType::Q8_0);
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += a[i] * a[i];
  }
  const double rel = std::sqrt(num / den);
  EXPECT_LT(rel, 0.02) << "relative RMS difference of the logits, q8_0 vs f16 KV";
  EXPECT_GT(rel, 0.0) << "q8_0 KV should not be bit-identical to f16";
}

TEST(EngineRealModel, SpeculationKeepsGreedyOutputAndAcceptsDrafts) {
  Loaded L = load("stories260K.gguf");
  // Repetitive text: prompt lookup finds what comes next in the prompt itself.
  std::string text;
  for (int i = 0; i < 3; ++i) text += "Tom had a red ball. He liked to play with it in the park with his friend Sam. ";
  const std::vector<std::vector<int32_t>> prompts = {L.tok.encode(text, true), L.tok.encode(text + "Tom", true)};
  std::vector<std::vector<Result>> res;
  EngineStats spec_stats;
  for (bool spec : {false, true}) {
    EngineOptions opt;
    opt.n_threads = 2;
    opt.speculative = spec;
    opt.draft_cost_gate = false;  // every draft verified, whatever the timings: the tests check them
    Engine engine(*L.model, L.tok, opt);
    res.push_back(run_all(engine, prompts, 48));
    if (spec) spec_stats = engine.stats();
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(res[1][i].tokens, res[0][i].tokens);
    EXPECT_EQ(res[1][i].text, res[0][i].text);
    EXPECT_LT(res[1][i].n_events, res[0][i].n_events) << "several tokens per step with accepted drafts";
    EXPECT_GT(res[1][i].final_event.timings.n_accepted, 0);
  }
  EXPECT_GT(spec_stats.n_draft_accepted, 0u);
  EXPECT_LE(spec_stats.n_draft_accepted, spec_stats.n_drafted);
}

TEST(EngineRealModel, SeededSamplingUnchangedBySpeculation) {
  Loaded L = load("stories260K.gguf");
  std::string text;
  for (int i = 0; i < 3; ++i) text += "The cat sat on the mat and looked at the bird. ";
  const std::vector<std::vector<int32_t>> prompts = {L.tok.encode(text, true)};
  std::vector<Result> res;
  for (bool spec : {false, true}) {
    EngineOptions opt;
    opt.n_threads = 1;
    opt.speculative = spec;
    opt.draft_cost_gate = false;  // every draft verified, whatever the timings: the tests check them
    Engine engine(*L.model, L.tok, opt);
    res.push_back(run_all(engine, prompts, 48, [](GenerationRequest& r) {
      r.sampling.temperature = 0.7f;
      r.sampling.seed = 42;
    })[0]);
  }
  EXPECT_EQ(res[1].tokens, res[0].tokens);
}

TEST(EngineRealModel, PreemptionUnderATinyKvPoolKeepsOutputs) {
  Loaded L = load("stories260K.gguf");
  const auto prompts = story_prompts(L.tok);  // ~25 tokens each
  const int n_gen = 60;
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) alone.push_back(greedy_alone(*L.model, p, n_gen, TensorType::F16));
  EngineOptions opt;
  opt.n_threads = 2;
  opt.kv_tokens = 160;  // 10 blocks: any one request fits, all four together do not
  opt.speculative = true;
  opt.draft_cost_gate = false;  // every draft verified, whatever the timings: the tests check them
  Engine engine(*L.model, L.tok, opt);
  const auto res = run_all(engine, prompts, n_gen, [](GenerationRequest& r) { r.priority = static_cast<int32_t>(r.prompt.size() % 3); });
  for (size_t i = 0; i < prompts.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(res[i].tokens, alone[i]);
    EXPECT_EQ(res[i].final_event.finish, FinishReason::Length);
  }
  engine.wait_idle();
  const EngineStats s = engine.stats();
  EXPECT_GT(s.n_preemptions, 0u);
  EXPECT_EQ(s.kv_blocks_used, 0);
  int preempted = 0;
  for (const auto& r : res) preempted += r.final_event.timings.n_preempted;
  EXPECT_EQ(static_cast<uint64_t>(preempted), s.n_preemptions);
}

TEST(EngineRealModel, GenerationIsCappedAtTheKvPool) {
  Loaded L = load("stories260K.gguf");
  EngineOptions opt;
  opt.n_threads = 1;
  opt.kv_tokens = 64;
  Engine engine(*L.model, L.tok, opt);
  const auto prompt = story_prompts(L.tok)[0];
  const auto res = run_all(engine, {prompt, prompt}, 1000);
  for (const auto& r : res) {
    EXPECT_EQ(r.final_event.finish, FinishReason::Length);
    EXPECT_EQ(r.tokens.size() + prompt.size(), 64u);
  }
}

TEST(EngineRealModel, StopStringsEndTheTextBeforeThem) {
  Loaded L = load("stories260K.gguf");
  const auto prompt = story_prompts(L.tok)[0];
  const auto alone = greedy_alone(*L.model, prompt, 60, TensorType::F16);
  const std::string full = L.tok.decode(alone, false, /*at_text_start=*/false);
  // A stop string from the middle of the greedy text (the first occurrence of a word there).
  const size_t at = full.find(' ', full.size() / 2);
  ASSERT_NE(at, std::string::npos);
  const size_t end = full.find(' ', at + 1);
  const std::string stop = full.substr(at, end - at);
  const size_t first = full.find(stop);
  EngineOptions opt;
  opt.n_threads = 1;
  for (bool spec : {false, true}) {
    opt.speculative = spec;
    opt.draft_cost_gate = false;  // every draft verified, whatever the timings: the tests check them
    Engine engine(*L.model, L.tok, opt);
    const auto res = run_all(engine, {prompt}, 60, [&](GenerationRequest& r) { r.stop = {"never appears", stop}; });
    EXPECT_EQ(res[0].final_event.finish, FinishReason::Stop);
    EXPECT_EQ(res[0].final_event.stop_match, stop);
    EXPECT_EQ(res[0].text, full.substr(0, first)) << "stop string '" << stop << "'";
    EXPECT_LT(res[0].tokens.size(), alone.size());
  }
}

TEST(EngineRealModel, LengthLimitsAndEndOfGeneration) {
  Loaded L = load("stories260K.gguf");
  EngineOptions opt;
  opt.n_threads = 1;
  Engine engine(*L.model, L.tok, opt);
  const auto prompt = story_prompts(L.tok)[1];
  auto res = run_all(engine, {prompt}, 7);
  EXPECT_EQ(res[0].final_event.finish, FinishReason::Length);
  EXPECT_EQ(res[0].tokens.size(), 7u);
  res = run_all(engine, {prompt}, 0);
  EXPECT_EQ(res[0].final_event.finish, FinishReason::Length);
  EXPECT_TRUE(res[0].tokens.empty());
  EXPECT_EQ(res[0].n_events, 1u);
  // End of generation: stories260K (trained with BOS between stories) practically never emits
  // EOS, so take a random-weight model and a prompt whose greedy continuation reaches it.
  Loaded S = load("synth-llama-f32.gguf");
  const auto eos_prompt = random_prompts(1, 8, 0, 7)[0];  // seed 7: EOS after 6 greedy tokens
  const auto g = greedy_alone(*S.model, eos_prompt, 20, TensorType::F16);
  const auto at = std::find_if(g.begin(), g.end(), [&](int32_t t) { return S.tok.is_eog(t); });
  ASSERT_NE(at, g.end()) << "the greedy continuation reaches EOS";
  const std::vector<int32_t> alone(g.begin(), at + 1);
  Engine synth_engine(*S.model, S.tok, opt);
  res = run_all(synth_engine, {eos_prompt}, 1000, [](GenerationRequest& r) { r.ignore_eos = false; });
  EXPECT_EQ(res[0].tokens, alone);
  EXPECT_EQ(res[0].final_event.finish, FinishReason::Stop);
  ASSERT_FALSE(res[0].tokens.empty());
  EXPECT_TRUE(L.tok.is_eog(res[0].tokens.back()));
  EXPECT_TRUE(res[0].final_event.stop_match.empty());
}

TEST(EngineRealModel, TextDeltasAndTimings) {
  Loaded L = load("stories260K.gguf");
  EngineOptions opt;
  opt.n_threads = 1;
  Engine engine(*L.model, L.tok, opt);
  const auto prompt = story_prompts(L.tok)[2];
  const auto res = run_all(engine, {prompt}, 50);
  EXPECT_EQ(res[0].text, L.tok.decode(res[0].tokens, false, /*at_text_start=*/false));
  const RequestTimings& t = res[0].final_event.timings;
  EXPECT_EQ(t.n_prompt, static_cast<int32_t>(prompt.size()));
  EXPECT_EQ(t.n_generated, 50);
  EXPECT_GT(t.ttft_ms, 0);
  EXPECT_GE(t.ttft_ms, t.queue_ms);
  EXPECT_GT(t.decode_ms, 0);
}

TEST(EngineRealModel, LogprobsWhenAsked) {
  Loaded L = load("stories260K.gguf");
  const auto prompt = story_prompts(L.tok)[3];
  for (bool spec : {false, true}) {
    EngineOptions opt;
    opt.n_threads = 1;
    opt.speculative = spec;
    opt.draft_cost_gate = false;  // every draft verified, whatever the timings: the tests check them
    Engine engine(*L.model, L.tok, opt);
    auto res = run_all(engine, {prompt}, 30, [](GenerationRequest& r) { r.n_logprobs = 3; });
    ASSERT_EQ(res[0].logprobs.size(), res[0].tokens.size());
    for (size_t i = 0; i < res[0].tokens.size(); ++i) {
      const TokenLogprobs& lp = res[0].logprobs[i];
      EXPECT_EQ(lp.id, res[0].tokens[i]);
      EXPECT_LE(lp.logprob, 0.0f);
      ASSERT_EQ(lp.top.size(), 3u);
      EXPECT_EQ(lp.top[0].first, lp.id) << "greedy picks the most likely token";
      EXPECT_FLOAT_EQ(lp.top[0].second, lp.logprob);
      EXPECT_GE(lp.top[0].second, lp.top[1].second);
      EXPECT_GE(lp.top[1].second, lp.top[2].second);
    }
    res = run_all(engine, {prompt}, 5, [](GenerationRequest& r) { r.n_logprobs = 0; });
    ASSERT_EQ(res[0].logprobs.size(), 5u);
    EXPECT_TRUE(res[0].logprobs[0].top.empty());
    res = run_all(engine, {prompt}, 5);
    EXPECT_TRUE(res[0].logprobs.empty()) << "none unless asked";
  }
}

TEST(EngineRealModel, SubmitRejectsBadRequests) {
  Loaded L = load("stories260K.gguf");
  EngineOptions opt;
  opt.n_threads = 1;
  opt.n_ctx = 64;
  Engine engine(*L.model, L.tok, opt);
  Collector c;
  EXPECT_THROW(engine.submit(greedy_request({}, 5, c)), Error);
  EXPECT_THROW(engine.submit(greedy_request({1, 99999}, 5, c)), Error);
  EXPECT_THROW(engine.submit(greedy_request({1, -1}, 5, c)), Error);
  EXPECT_THROW(engine.submit(greedy_request(std::vector<int32_t>(64, 5), 5, c)), Error);
  auto bad = greedy_request({1, 5}, 5, c);
  bad.sampling.top_p = 0;
  EXPECT_THROW(engine.submit(std::move(bad)), Error);
  EXPECT_EQ(c.n_done, 0u);
}

TEST(EngineRealModel, CancelFreesBlocks) {
  Loaded L = load("stories260K.gguf");
  EngineOptions opt;
  opt.n_threads = 1;
  Engine engine(*L.model, L.tok, opt);
  Collector c;
  const uint64_t id = engine.submit(greedy_request(L.tok.encode("Once upon a time", true), 100000, c));
  engine.cancel(id);
  c.wait(1);
  EXPECT_EQ(c.results[id].final_event.finish, FinishReason::Cancelled);
  engine.wait_idle();
  EXPECT_EQ(engine.stats().kv_blocks_used, 0);
}

// --- persistence ---

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::temp_directory_path() / ("edgeinfer-engine-test-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path only_file() const {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(path)) files.push_back(e.path());
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? fs::path() : files[0];
  }
};

std::vector<int32_t> long_story_prompt(const Tokenizer& tok) {
  return tok.encode(
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her "
      "friends. One day, she saw a big red ball under a tree. She ran to the ball and picked it up. Her mom said",
      true);
}

struct PersistRun {
  Result result;
  int32_t n_loaded = 0;
  std::string stderr_text;
};

// One thread, the prefix cache persisted in dir, idle saves every interval_ms (0: at stop only).
EngineOptions cache_dir_options(const fs::path& dir, int64_t interval_ms = EngineOptions{}.persist_interval_ms) {
  EngineOptions opt;
  opt.n_threads = 1;
  opt.cache_dir = dir.string();
  opt.persist_interval_ms = interval_ms;
  return opt;
}

PersistRun run_with_cache_dir(const Loaded& L, const fs::path& dir, const std::vector<int32_t>& prompt) {
  const EngineOptions opt = cache_dir_options(dir);
  PersistRun out;
  ::testing::internal::CaptureStderr();
  {
    Engine engine(*L.model, L.tok, opt);
    out.n_loaded = engine.stats().n_persisted_loaded;
    out.result = run_all(engine, {prompt}, 20)[0];
    engine.stop(Engine::StopMode::Drain);
  }
  out.stderr_text = ::testing::internal::GetCapturedStderr();
  return out;
}

TEST(EngineRealModel, PrefixCachePersistsAcrossRestarts) {
  Loaded L = load("stories260K.gguf");
  TempDir dir("persist");
  const auto prompt = long_story_prompt(L.tok);
  const auto alone = greedy_alone(*L.model, prompt, 20, TensorType::F16);
  const PersistRun first = run_with_cache_dir(L, dir.path, prompt);
  EXPECT_EQ(first.n_loaded, 0);
  EXPECT_EQ(first.result.final_event.timings.n_cached, 0);
  EXPECT_EQ(first.result.tokens, alone);
  const fs::path file = dir.only_file();
  ASSERT_TRUE(fs::exists(file));

  const PersistRun second = run_with_cache_dir(L, dir.path, prompt);
  EXPECT_GT(second.n_loaded, 0);
  const int32_t bs = 16;
  EXPECT_EQ(second.result.final_event.timings.n_cached, (static_cast<int32_t>(prompt.size()) - 1) / bs * bs);
  EXPECT_EQ(second.result.tokens, alone) << "output from restored KV is the same";
  EXPECT_TRUE(second.stderr_text.find("warning") == std::string::npos) << second.stderr_text;
}

// With an interval, the idle engine saves its new prefixes without being stopped (what a crash
// would otherwise lose), once per batch of new blocks; another engine loads that file while the
// first still runs. With no interval nothing is written before stop().
TEST(EngineRealModel, PrefixCacheIsSavedWhileIdle) {
  Loaded L = load("stories260K.gguf");
  const auto prompt = long_story_prompt(L.tok);
  const auto alone = greedy_alone(*L.model, prompt, 20, TensorType::F16);
  auto wait_for_saves = [](const Engine& e, uint64_t n) {
    for (int i = 0; i < 2000 && e.stats().n_persist_saves < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return e.stats().n_persist_saves;
  };
  {
    TempDir dir("idle-save");
    Engine engine(*L.model, L.tok, cache_dir_options(dir.path, 50));
    EXPECT_EQ(engine.stats().n_persist_saves, 0u) << "nothing cached yet, nothing saved";
    EXPECT_EQ(run_all(engine, {prompt}, 20)[0].tokens, alone);
    ASSERT_EQ(wait_for_saves(engine, 1), 1u) << "saved within 10 s of going idle";
    ASSERT_TRUE(fs::exists(dir.only_file()));
    // Idle with nothing new: no further saves, however many intervals pass.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(engine.stats().n_persist_saves, 1u);

    // The file as a crash would leave it: a second engine loads it while the first still runs.
    Engine second(*L.model, L.tok, cache_dir_options(dir.path, 0));
    EXPECT_GT(second.stats().n_persisted_loaded, 0);
    const Result r = run_all(second, {prompt}, 20)[0];
    EXPECT_EQ(r.final_event.timings.n_cached, (static_cast<int32_t>(prompt.size()) - 1) / 16 * 16);
    EXPECT_EQ(r.tokens, alone);

    // New prefixes: saved again.
    run_all(engine, {prompt, L.tok.encode("Tom had a small dog that liked to run in the garden every morning before "
                                          "breakfast, and one day", true)},
            8);
    EXPECT_EQ(wait_for_saves(engine, 2), 2u);
    second.stop(Engine::StopMode::Drain);
    engine.stop(Engine::StopMode::Drain);
    EXPECT_EQ(engine.stats().n_persist_saves, 3u) << "and once more at stop";
  }
  {
    TempDir dir("stop-only");
    Engine engine(*L.model, L.tok, cache_dir_options(dir.path, 0));
    run_all(engine, {prompt}, 20);
    engine.wait_idle();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(engine.stats().n_persist_saves, 0u);
    EXPECT_TRUE(fs::is_empty(dir.path)) << "nothing written before stop";
    engine.stop(Engine::StopMode::Drain);
    EXPECT_EQ(engine.stats().n_persist_saves, 1u);
    EXPECT_FALSE(fs::is_empty(dir.path));
  }
}

TEST(EngineRealModel, CorruptOrForeignCacheFilesAreIgnored) {
  Loaded L = load("stories260K.gguf");
  const auto prompt = long_story_prompt(L.tok);
  const auto alone = greedy_alone(*L.model, prompt, 20, TensorType::F16);
  TempDir dir("corrupt");
  run_with_cache_dir(L, dir.path, prompt);
  const fs::path file = dir.only_file();
  std::vector<char> good;
  {
    std::ifstream in(file, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(good.size(), 1000u);
  auto write = [&](const std::vector<char>& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  auto expect_ignored = [&](const char* what) {
    SCOPED_TRACE(what);
    const PersistRun r = run_with_cache_dir(L, dir.path, prompt);
    EXPECT_EQ(r.n_loaded, 0);
    EXPECT_EQ(r.result.final_event.timings.n_cached, 0) << "nothing of the file was loaded";
    EXPECT_EQ(r.result.tokens, alone);
    EXPECT_NE(r.stderr_text.find("warning"), std::string::npos) << "a warning says why";
  };
  // A flipped byte in the last record's payload, in the header, a truncated file.
  auto flipped = good;
  flipped[good.size() - 100] ^= 0x01;
  write(flipped);
  expect_ignored("flipped payload byte");
  flipped = good;
  flipped[20] ^= 0x40;
  write(flipped);
  expect_ignored("flipped header byte");
  write(std::vector<char>(good.begin(), good.end() - 37));
  expect_ignored("truncated");
  write(std::vector<char>(good.begin(), good.begin() + 10));
  expect_ignored("truncated inside the header");

  // Another model's file under this model's name.
  Loaded other = load("synth-llama-f32.gguf");
  TempDir other_dir("foreign");
  run_with_cache_dir(other, other_dir.path, random_prompts(1, 60, 4, 9)[0]);
  fs::copy_file(other_dir.only_file(), file, fs::copy_options::overwrite_existing);
  expect_ignored("another model's file");

  // The good file again: loaded.
  write(good);
  const PersistRun ok = run_with_cache_dir(L, dir.path, prompt);
  EXPECT_GT(ok.n_loaded, 0);
  EXPECT_GT(ok.result.final_event.timings.n_cached, 0);
}

// bench-serve's workloads at small sizes on the trained model: every request served, the figures
// and target ratios finite, and in the edit workload the rewrite identical with and without
// speculation, most drafts taken from the predicted file that differs from it by a few changes.
TEST(ServeBenchRealModel, WorkloadsRunEndToEnd) {
  Loaded L = load("stories260K.gguf");
  ServeBenchOptions o;
  o.engine.n_threads = 2;
  o.n_clients = 3;
  o.system_tokens = 48;
  o.turn_tokens = 8;
  o.answer_tokens = 8;
  o.rounds = 2;
  o.file_tokens = 160;
  o.n_completions = 4;
  o.completion_tokens = 4;
  o.edit_file_tokens = 160;
  o.edit_changes = 3;
  for (const char* w : {"agent", "completion", "edit"}) {
    o.workload = w;
    const ServeBenchReport r = run_serve_bench(*L.model, L.tok, o);
    EXPECT_GT(r.n_requests, 0) << w;
    EXPECT_GT(r.n_generated, 0) << w;
    EXPECT_FALSE(r.targets.empty()) << w;
    for (const TargetCheck& t : r.targets) EXPECT_TRUE(std::isfinite(t.value)) << w << ": " << t.name;
    EXPECT_FALSE(format_serve_bench(r).empty());
  }
  // Which drafts are verified depends on measured step times (the cost gate), so the counts
  // below vary between machines; without the gate every proposed draft is verified and they
  // depend on the model's output only.
  o.workload = "edit";
  o.engine.draft_cost_gate = false;
  const ServeBenchReport e = run_serve_bench(*L.model, L.tok, o);
  EXPECT_EQ(e.n_requests, 4);
  for (const std::string& line : e.lines) EXPECT_EQ(line.find("DIFFERENT"), std::string::npos) << line;
  for (const TargetCheck& t : e.targets) EXPECT_EQ(t.name.find("identical"), std::string::npos) << t.detail;
  ASSERT_EQ(e.edit_runs.size(), 4u);
  for (const EditRun& r : e.edit_runs) EXPECT_TRUE(r.identical) << r.name;
  const EditRun &off = e.edit_runs[0], &changed = e.edit_runs[1], &oracle = e.edit_runs[3];
  EXPECT_EQ(off.n_drafted, 0);
  // The file a few changes away from the rewrite: most drafts taken.
  EXPECT_GT(changed.n_accepted, changed.n_drafted / 2) << changed.n_accepted << "/" << changed.n_drafted;
  EXPECT_GT(changed.n_accepted, 0);
  // The rewrite itself: every draft taken, and drafts for most of the output.
  EXPECT_EQ(oracle.n_accepted, oracle.n_drafted);
  EXPECT_GT(oracle.n_accepted, o.edit_file_tokens / 2);
}

}  // namespace
}  // namespace edgeinfer
