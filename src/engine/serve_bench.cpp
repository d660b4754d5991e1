#include "engine/serve_bench.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "engine/tpot_ratios.h"
#include "quant/quantize_model.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double load_average() {
  std::ifstream f("/proc/loadavg");
  double v = -1;
  if (f) f >> v;
  return v;
}

std::string fmt(const char* f, double a) {
  char b[64];
  std::snprintf(b, sizeof b, f, a);
  return b;
}

// Seeded synthetic tokens from the model's ordinary vocabulary entries.
class TokenSource {
 public:
  TokenSource(const Tokenizer& tok, uint64_t seed) : rng_(seed) {
    for (int32_t id = 0; id < tok.n_vocab(); ++id) {
      if (tok.is_control(id) || tok.is_byte(id) || tok.is_eog(id) || tok.is_user_defined(id)) continue;
      if (id == tok.bos() || id == tok.eos() || id == tok.unk() || id == tok.pad()) continue;
      ids_.push_back(id);
    }
    if (ids_.empty()) throw Error("bench-serve: the vocabulary has no ordinary tokens to build prompts from");
  }
  int32_t one() { return ids_[rng_() % ids_.size()]; }
  std::vector<int32_t> draw(int64_t n) {
    std::vector<int32_t> v(static_cast<size_t>(std::max<int64_t>(0, n)));
    for (auto& t : v) t = one();
    return v;
  }
  uint64_t next() { return rng_(); }

 private:
  std::vector<int32_t> ids_;
  std::mt19937_64 rng_;
};

std::vector<int32_t> cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// What one request's client saw.
struct Rec {
  uint64_t id = 0;
  Clock::time_point t_submit, t_done;
  std::vector<std::pair<Clock::time_point, int32_t>> events;  // (arrival, tokens in the event)
  std::vector<int32_t> tokens;
  bool done = false;
  TokenEvent final_event;

  double ttft_ms() const { return events.empty() ? -1 : ms_between(t_submit, events.front().first); }
  Clock::time_point t_first() const { return events.empty() ? t_done : events.front().first; }
  // Generated tokens per second after the first token.
  double decode_tps() const {
    if (tokens.size() < 2 || events.empty()) return 0;
    const double s = ms_between(events.front().first, events.back().first) / 1000.0;
    return s > 0 ? static_cast<double>(tokens.size() - 1) / s : 0;
  }
  // Tokens that arrived at or before t.
  size_t tokens_by(Clock::time_point t) const {
    size_t n = 0;
    for (const auto& e : events) {
      if (e.first > t) break;
      n += static_cast<size_t>(e.second);
    }
    return n;
  }
  // The gap before each answer token (ms) by the token's index, an event's gap shared by its
  // tokens as in tpot_samples; -1 for the first event's tokens (no gap before them).
  std::vector<double> gaps_by_token() const {
    std::vector<double> g;
    if (events.empty()) return g;
    g.assign(static_cast<size_t>(events[0].second), -1.0);
    for (size_t i = 1; i < events.size(); ++i) {
      const double gap = ms_between(events[i - 1].first, events[i].first) / events[i].second;
      g.insert(g.end(), static_cast<size_t>(events[i].second), gap);
    }
    return g;
  }
  void tpot_samples(std::vector<double>& out, Clock::time_point from = Clock::time_point::min(),
                    Clock::time_point to = Clock::time_point::max()) const {
    for (size_t i = 1; i < events.size(); ++i) {
      if (events[i].first < from || events[i].first > to) continue;
      const double gap = ms_between(events[i - 1].first, events[i].first) / events[i].second;
      for (int32_t k = 0; k < events[i].second; ++k) out.push_back(gap);
    }
  }
};
using RecPtr = std::shared_ptr<Rec>;

// Submits requests and waits for them, recording every event's arrival time.
class Driver {
 public:
  explicit Driver(Engine& e) : e_(e) {}

  RecPtr submit(GenerationRequest req) {
    auto rec = std::make_shared<Rec>();
    req.sink = [this, rec](const TokenEvent& ev) {
      const auto t = Clock::now();
      std::lock_guard<std::mutex> lk(mu_);
      if (!ev.tokens.empty()) {
        rec->events.emplace_back(t, static_cast<int32_t>(ev.tokens.size()));
        rec->tokens.insert(rec->tokens.end(), ev.tokens.begin(), ev.tokens.end());
      }
      if (ev.done) {
        rec->done = true;
        rec->t_done = t;
        rec->final_event = ev;
        cv_.notify_all();
      }
    };
    rec->t_submit = Clock::now();
    rec->id = e_.submit(std::move(req));
    return rec;
  }
  void wait(const RecPtr& r) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return r->done; });
  }
  void wait_all(const std::vector<RecPtr>& rs) {
    for (const auto& r : rs) wait(r);
  }
  // Waits for one of `rs` to be done and returns its index.
  size_t wait_any(const std::vector<RecPtr>& rs) {
    std::unique_lock<std::mutex> lk(mu_);
    size_t which = 0;
    cv_.wait(lk, [&] {
      for (size_t i = 0; i < rs.size(); ++i) {
        if (rs[i]->done) {
          which = i;
          return true;
        }
      }
      return false;
    });
    return which;
  }
  // Waits until every one of rs has at least n tokens (or is done).
  void wait_tokens(const std::vector<RecPtr>& rs, size_t n) {
    for (;;) {
      {
        std::lock_guard<std::mutex> lk(mu_);
        bool ok = true;
        for (const auto& r : rs) ok = ok && (r->done || r->tokens.size() >= n);
        if (ok) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  Engine& engine() { return e_; }

 private:
  Engine& e_;
  std::mutex mu_;
  std::condition_variable cv_;
};

GenerationRequest greedy(std::vector<int32_t> prompt, int32_t max_tokens, uint64_t salt = 0) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  r.cache_salt = salt;
  return r;
}

// The workload's own figures from its requests and the engine's counters over it.
void fill_figures(ServeBenchReport& rep, const std::vector<RecPtr>& recs, Clock::time_point t0, Clock::time_point t1,
                  const EngineStats& before, const EngineStats& after) {
  std::vector<double> ttft, tpot;
  for (const auto& r : recs) {
    rep.n_requests++;
    rep.n_prompt_tokens += r->final_event.timings.n_prompt;
    rep.n_cached_tokens += r->final_event.timings.n_cached;
    rep.n_generated += static_cast<int64_t>(r->tokens.size());
    if (r->ttft_ms() >= 0) ttft.push_back(r->ttft_ms());
    r->tpot_samples(tpot);
  }
  rep.wall_s = ms_between(t0, t1) / 1000.0;
  rep.ttft = summarize(ttft);
  rep.tpot = summarize(tpot);
  rep.gen_tokens_per_s = rep.wall_s > 0 ? rep.n_generated / rep.wall_s : 0;
  rep.prompt_tokens_per_s = rep.wall_s > 0 ? (rep.n_prompt_tokens - rep.n_cached_tokens) / rep.wall_s : 0;
  const uint64_t q = after.prefix_queries - before.prefix_queries, h = after.prefix_hits - before.prefix_hits;
  rep.block_hit_rate = q ? static_cast<double>(h) / static_cast<double>(q) : 0;
  rep.token_hit_rate = rep.n_prompt_tokens ? static_cast<double>(rep.n_cached_tokens) / rep.n_prompt_tokens : 0;
  rep.n_drafted = after.n_drafted - before.n_drafted;
  rep.n_accepted = after.n_draft_accepted - before.n_draft_accepted;
  rep.n_preemptions = after.n_preemptions - before.n_preemptions;
}

TargetCheck check(std::string name, double value, double limit, bool at_least, std::string detail) {
  TargetCheck t;
  t.name = std::move(name);
  t.value = value;
  t.limit = limit;
  t.at_least = at_least;
  t.met = std::isfinite(value) && (at_least ? value >= limit : value <= limit);
  t.detail = std::move(detail);
  return t;
}

void log(const ServeBenchOptions& o, const std::string& s) {
  if (o.log) o.log(s);
}

// A fresh folder for the restart check (removed at the end).
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& parent) {
    const std::filesystem::path base = parent.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(parent);
    path = base / ("edgeinfer-bench-serve-" + std::to_string(::getpid()));
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

void run_agent(const Model& model, const Tokenizer& tok, const ServeBenchOptions& o, ServeBenchReport& rep) {
  TokenSource src(tok, o.seed);
  std::vector<int32_t> system;
  if (tok.add_bos()) system.push_back(tok.bos());
  const auto sys_body = src.draw(o.system_tokens - static_cast<int64_t>(system.size()));
  system.insert(system.end(), sys_body.begin(), sys_body.end());
  ScratchDir dir(o.engine.cache_dir);
  EngineOptions eo = o.engine;
  eo.cache_dir = dir.path.string();
  eo.persist_interval_ms = 0;  // saved at stop only (the restart check): no idle save inside the timings
  auto engine = std::make_unique<Engine>(model, tok, eo);
  Driver drv(*engine);
  const int32_t A = o.answer_tokens;
  // Salted requests share no cached block with anything else: the "cold" references.
  constexpr uint64_t kColdSalt = 0xC01D;
  const std::vector<int32_t> ref_turn = src.draw(o.turn_tokens);
  const std::vector<int32_t> ref_prompt = cat(system, ref_turn);

  RecPtr alone;
  if (o.targets) {
    // A warm-up of the same size first (its own tokens, salted: nothing of it is reused), so that
    // the reference below pays no first-request costs (the KV pool's first page faults, the
    // threads' start): the cold references are denominators of three targets.
    log(o, "agent: warm-up request");
    TokenSource warm(tok, o.seed ^ 0x5EEDu);
    drv.wait(drv.submit(greedy(warm.draw(static_cast<int64_t>(ref_prompt.size())), A, kColdSalt - 1)));
    log(o, "agent: one request alone, cold (" + std::to_string(ref_prompt.size()) + " prompt tokens)");
    alone = drv.submit(greedy(ref_prompt, A, kColdSalt));
    drv.wait(alone);
  }

  // The workload: closed-loop clients, round 1 together with the system prompt not cached.
  log(o, "agent: " + std::to_string(o.n_clients) + " clients x " + std::to_string(o.rounds) + " rounds");
  std::vector<std::vector<int32_t>> conv(static_cast<size_t>(o.n_clients));
  std::vector<int32_t> round_of(static_cast<size_t>(o.n_clients), 1);
  std::vector<RecPtr> all, round1, live(static_cast<size_t>(o.n_clients));
  const EngineStats s0 = engine->stats();
  const auto t0 = Clock::now();
  for (int32_t c = 0; c < o.n_clients; ++c) {
    conv[c] = cat(system, src.draw(o.turn_tokens));
    live[c] = drv.submit(greedy(conv[c], A));
    round1.push_back(live[c]);
    all.push_back(live[c]);
  }
  std::vector<RecPtr> pending = live;
  std::vector<int32_t> client_of(pending.size());
  std::iota(client_of.begin(), client_of.end(), 0);
  while (!pending.empty()) {
    const size_t i = drv.wait_any(pending);
    const RecPtr done = pending[i];
    const int32_t c = client_of[i];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    client_of.erase(client_of.begin() + static_cast<std::ptrdiff_t>(i));
    if (round_of[c] >= o.rounds) continue;
    round_of[c]++;
    conv[c] = cat(cat(conv[c], done->tokens), src.draw(o.turn_tokens));
    if (static_cast<int64_t>(conv[c].size()) + A >= engine->n_ctx()) continue;  // the context is full
    RecPtr next = drv.submit(greedy(conv[c], A));
    all.push_back(next);
    pending.push_back(next);
    client_of.push_back(c);
  }
  const auto t1 = Clock::now();
  engine->wait_idle();
  fill_figures(rep, all, t0, t1, s0, engine->stats());
  {
    std::vector<double> r1;
    for (const auto& r : round1) r1.push_back(r->ttft_ms());
    const LatencySummary s = summarize(r1);
    rep.lines.push_back("round 1 (all " + std::to_string(o.n_clients) + " clients at once, prefix not cached): TTFT mean " +
                        fmt("%.0f ms", s.mean) + ", max " + fmt("%.0f ms", s.max));
  }
  if (!o.targets) return;

  // Target 1: mean TTFT of round 1 vs one such request alone.
  const double ttft_alone = alone->ttft_ms();
  {
    double sum = 0;
    for (const auto& r : round1) sum += r->ttft_ms();
    const double mean = sum / static_cast<double>(round1.size());
    rep.targets.push_back(check("agent: mean TTFT of " + std::to_string(o.n_clients) + " clients / one alone", mean / ttft_alone,
                                1.5, false,
                                fmt("%.0f ms", mean) + " vs " + fmt("%.0f ms", ttft_alone) + " alone (cold " +
                                    std::to_string(ref_prompt.size()) + "-token prompt)"));
  }
  // The alone request again, its system prompt now cached (target 3); it also decodes alone,
  // after the workload as the first did before it.
  log(o, "agent: the alone request again, system prompt cached");
  RecPtr cached = drv.submit(greedy(ref_prompt, A));
  drv.wait(cached);
  // Target 2: aggregate decode tokens/s of round 1's streams vs a single stream alone: the mean
  // of the two alone requests' decode rates, one before the workload and one after (a single
  // stream reads every weight per token, so it follows the machine's memory bandwidth, which
  // drifts on these VMs over seconds; the two bracket round 1).
  {
    Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
    int64_t n = 0;
    for (const auto& r : round1) {
      first = std::min(first, r->t_first());
      last = std::max(last, r->events.back().first);
      n += static_cast<int64_t>(r->tokens.size()) - 1;
    }
    const double agg = n / (ms_between(first, last) / 1000.0);
    const double before = alone->decode_tps(), after = cached->decode_tps();
    const double single = (before + after) / 2;
    rep.targets.push_back(check("agent: aggregate decode tok/s, " + std::to_string(o.n_clients) + " streams / 1", agg / single, 4.0,
                                true,
                                fmt("%.2f tok/s", agg) + " vs " + fmt("%.2f tok/s", single) + " single stream (" +
                                    fmt("%.2f", before) + " before the workload, " + fmt("%.2f", after) + " after)"));
  }
  // Target 3: the same request with its system prompt cached vs cold.
  {
    rep.targets.push_back(check("agent: TTFT with the " + std::to_string(o.system_tokens) + "-token prefix cached / cold",
                                cached->ttft_ms() / ttft_alone, 0.10, false,
                                fmt("%.0f ms", cached->ttft_ms()) + " (" + std::to_string(cached->final_event.timings.n_cached) +
                                    " tokens cached) vs " + fmt("%.0f ms", ttft_alone)));
  }
  // Target 4: time per output token of decoding streams while other prompts are prefilled.
  // The streams' contexts grow by a token a step while the prompts are absorbed (a 1050-token
  // prompt takes about as many steps when a step's slack fits one prompt row), so their raw
  // gaps grow with them: a control run of the same streams alone has a p99/p50 well above 1.3
  // without any prefill. The target is taken on local ratios (tpot_ratios.h: each gap over the
  // median of its stream's neighbouring gaps in the window), which keep stalls and drop trends;
  // beside it, the steady cost the prompt rows add: the median of paired ratios against that
  // control (same prompts, so the same greedy tokens at the same contexts and token indices),
  // held to the scheduler's slack (step_slack, 20%). The raw figures are printed too.
  {
    log(o, "agent: 4 decoding streams while 2 cold prompts are prefilled");
    std::vector<std::vector<int32_t>> prompts;
    for (int i = 0; i < 4; ++i) prompts.push_back(cat(system, src.draw(o.turn_tokens)));
    const int32_t stream_tokens = engine->n_ctx() - o.system_tokens - o.turn_tokens - 1;
    std::vector<RecPtr> streams;
    // Without speculation here: decoding alone, the control would verify drafts (a random-weight
    // model's greedy answers repeat, and prompt lookup finds them) while the streams beside a
    // prefill mostly would not, and the pairs would compare speculation, not the prefill.
    auto stream = [&](const std::vector<int32_t>& p) {
      GenerationRequest r = greedy(p, stream_tokens);
      r.speculative = false;
      return r;
    };
    for (const auto& p : prompts) streams.push_back(drv.submit(stream(p)));
    drv.wait_tokens(streams, 16);
    const auto w0 = Clock::now();
    for (uint64_t k = 0; k < 2; ++k) {
      RecPtr cold = drv.submit(greedy(cat(system, src.draw(o.turn_tokens)), 1, kColdSalt + 1 + k));
      drv.wait(cold);
    }
    const auto w1 = Clock::now();
    drv.wait_tokens(streams, 0);
    for (const auto& s : streams) engine->cancel(s->id);
    drv.wait_all(streams);
    std::vector<double> base, during;
    std::vector<std::pair<size_t, size_t>> range;  // per stream: the answer tokens of the window
    size_t last = 0;
    for (const auto& s : streams) {
      s->tpot_samples(base, Clock::time_point::min(), w0);
      s->tpot_samples(during, w0, w1);
      range.emplace_back(s->tokens_by(w0), s->tokens_by(w1));
      last = std::max(last, range.back().second);
    }
    log(o, "agent: the same 4 streams alone (control)");
    std::vector<RecPtr> control;
    for (const auto& p : prompts) control.push_back(drv.submit(stream(p)));
    drv.wait_tokens(control, last + 1);
    for (const auto& s : control) engine->cancel(s->id);
    drv.wait_all(control);
    constexpr size_t kRadius = 8;  // gaps i-8 .. i+8 as the reference of token i
    std::vector<double> control_gaps, local, paired, control_local;
    for (size_t i = 0; i < streams.size(); ++i) {
      const std::vector<double> g = streams[i]->gaps_by_token(), gc = control[i]->gaps_by_token();
      // The control's gaps of the window's tokens (the first event's tokens have none).
      for (size_t t = range[i].first; t < std::min(range[i].second, gc.size()); ++t) {
        if (gc[t] >= 0) control_gaps.push_back(gc[t]);
      }
      append_local_ratios(g, range[i].first, range[i].second, kRadius, local);
      append_paired_ratios(g, gc, range[i].first, range[i].second, kRadius, paired);
      append_local_ratios(gc, range[i].first, range[i].second, kRadius, control_local);  // the machine's own jitter
    }
    const LatencySummary b = summarize(base), d = summarize(during), c = summarize(control_gaps), l = summarize(local),
                         pr = summarize(paired), cl = summarize(control_local);
    rep.targets.push_back(check("agent: TPOT p99/p50 while prompts prefill, each gap over its stream's 17 neighbours", l.p99 / l.p50,
                                1.3, false,
                                std::to_string(l.n) + " tokens; the same tokens alone: " + fmt("%.3f", cl.p50 > 0 ? cl.p99 / cl.p50 : 0) +
                                    "; raw: p99 " + fmt("%.0f ms", d.p99) + " p50 " + fmt("%.0f ms", d.p50) +
                                    " (p99/p50 " + fmt("%.2f", d.p50 > 0 ? d.p99 / d.p50 : 0) + ") during prefill vs p50 " +
                                    fmt("%.0f ms", c.p50) + " p99 " + fmt("%.0f ms", c.p99) + " alone, p50 " + fmt("%.0f ms", b.p50) +
                                    " before the prompts (4 streams)"));
    rep.targets.push_back(check("agent: TPOT while prompts prefill / the same tokens decoded alone, median of per-token pairs",
                                pr.p50, 1.0 + eo.step_slack, false,
                                "p99 " + fmt("%.3f", pr.p99) + " (with the drift between the two runs; no speculation in either), " + std::to_string(pr.n) +
                                    " tokens"));
  }
  // Target 5: restart with the prefix cache persisted.
  {
    log(o, "agent: restart with --cache-dir");
    engine->stop(Engine::StopMode::Drain);
    engine.reset();
    Engine second(model, tok, eo);
    Driver d2(second);
    const int32_t loaded = second.stats().n_persisted_loaded;
    RecPtr r = d2.submit(greedy(ref_prompt, A));
    d2.wait(r);
    second.stop(Engine::StopMode::Cancel);
    rep.targets.push_back(check("agent: TTFT after a restart with --cache-dir / cold", r->ttft_ms() / ttft_alone, 0.10, false,
                                fmt("%.0f ms", r->ttft_ms()) + " (" + std::to_string(loaded) + " blocks loaded, " +
                                    std::to_string(r->final_event.timings.n_cached) + " tokens cached) vs " +
                                    fmt("%.0f ms", ttft_alone)));
  }
}

void run_completion(const Model& model, const Tokenizer& tok, const ServeBenchOptions& o, ServeBenchReport& rep) {
  TokenSource src(tok, o.seed);
  std::vector<int32_t> file;
  const bool bos = tok.add_bos();
  const auto body = src.draw(o.file_tokens);
  file.insert(file.end(), body.begin(), body.end());
  int64_t cursor = static_cast<int64_t>(file.size()) * 3 / 4;
  const Tokenizer::Fim& f = tok.fim();
  const bool fim = f.pre >= 0 && f.suf >= 0 && f.mid >= 0;
  rep.notes = fim ? "FIM: [SUF] suffix [PRE] prefix [MID]" : "FIM: the vocabulary has no FIM tokens, plain prefix completion";
  Engine engine(model, tok, o.engine);
  Driver drv(engine);
  const int64_t room = engine.n_ctx() - o.completion_tokens - 8;
  std::vector<RecPtr> recs;
  const EngineStats s0 = engine.stats();
  const auto t0 = Clock::now();
  for (int32_t i = 0; i < o.n_completions; ++i) {
    if (i > 0) {
      // A small edit near the cursor: type 1-4 tokens, or fix a token just before the cursor
      // and type one.
      const uint64_t r = src.next();
      if (r % 10 < 7) {
        const auto typed = src.draw(1 + static_cast<int64_t>((r >> 8) % 4));
        file.insert(file.begin() + cursor, typed.begin(), typed.end());
        cursor += static_cast<int64_t>(typed.size());
      } else {
        file[static_cast<size_t>(cursor - 1 - static_cast<int64_t>((r >> 8) % 3))] = src.one();
        file.insert(file.begin() + cursor, src.one());
        cursor += 1;
      }
    }
    std::vector<int32_t> prompt;
    if (bos) prompt.push_back(tok.bos());
    if (fim) {
      const int64_t suffix_len = std::min<int64_t>(static_cast<int64_t>(file.size()) - cursor, std::max<int64_t>(0, room - cursor - 4));
      prompt.push_back(f.suf);
      prompt.insert(prompt.end(), file.begin() + cursor, file.begin() + cursor + suffix_len);
      prompt.push_back(f.pre);
      prompt.insert(prompt.end(), file.begin(), file.begin() + cursor);
      prompt.push_back(f.mid);
    } else {
      prompt.insert(prompt.end(), file.begin(), file.begin() + cursor);
    }
    RecPtr rec = drv.submit(greedy(std::move(prompt), o.completion_tokens));
    drv.wait(rec);
    recs.push_back(rec);
    log(o, "completion " + std::to_string(i + 1) + "/" + std::to_string(o.n_completions) + ": TTFT " +
               fmt("%.0f ms", rec->ttft_ms()) + ", " + std::to_string(rec->final_event.timings.n_cached) + "/" +
               std::to_string(rec->final_event.timings.n_prompt) + " prompt tokens cached");
  }
  const auto t1 = Clock::now();
  engine.wait_idle();
  fill_figures(rep, recs, t0, t1, s0, engine.stats());
  std::vector<double> later;
  for (size_t i = 1; i < recs.size(); ++i) later.push_back(recs[i]->ttft_ms());
  const LatencySummary s = summarize(later);
  rep.lines.push_back("first request (cold, " + std::to_string(recs.front()->final_event.timings.n_prompt) +
                      " prompt tokens): TTFT " + fmt("%.0f ms", recs.front()->ttft_ms()));
  if (o.targets && !later.empty()) {
    rep.targets.push_back(check("completion: median TTFT after the first request (ms)", s.p50, 150, false,
                                "p50 " + fmt("%.0f ms", s.p50) + ", p90 " + fmt("%.0f ms", s.p90) + " over " +
                                    std::to_string(later.size()) + " requests"));
  }
}

// `out` with n small changes undone, at spread-out places: the file a rewrite `out` was made
// from. Each change is one of: 1-2 tokens replaced, 1-3 tokens the rewrite added (removed here),
// 1-2 tokens the rewrite removed (inserted here).
std::vector<int32_t> with_changes(const std::vector<int32_t>& out, int32_t n, TokenSource& src) {
  std::vector<int32_t> file;
  const size_t len = out.size();
  // Change c sits at a random place in the c-th of n equal stretches (at least 8 tokens each).
  const size_t n_changes = std::min<size_t>(static_cast<size_t>(std::max(0, n)), len / 8);
  size_t at = 0;
  for (size_t c = 0; c < n_changes; ++c) {
    const size_t lo = len * c / n_changes, hi = len * (c + 1) / n_changes;
    const size_t pos = lo + 2 + src.next() % (hi - lo - 4);
    file.insert(file.end(), out.begin() + static_cast<std::ptrdiff_t>(at), out.begin() + static_cast<std::ptrdiff_t>(pos));
    at = pos;
    switch (src.next() % 3) {
      case 0: {  // replaced
        const size_t k = 1 + src.next() % 2;
        for (size_t i = 0; i < k; ++i) file.push_back(src.one());
        at += k;
        break;
      }
      case 1:  // added by the rewrite
        at += 1 + src.next() % 3;
        break;
      default: {  // removed by the rewrite
        const auto ins = src.draw(static_cast<int64_t>(1 + src.next() % 2));
        file.insert(file.end(), ins.begin(), ins.end());
        break;
      }
    }
  }
  file.insert(file.end(), out.begin() + static_cast<std::ptrdiff_t>(std::min(at, len)), out.end());
  return file;
}

void run_edit(const Model& model, const Tokenizer& tok, const ServeBenchOptions& o, ServeBenchReport& rep) {
  TokenSource src(tok, o.seed);
  std::vector<int32_t> prompt;
  if (tok.add_bos()) prompt.push_back(tok.bos());
  const auto instruction = src.draw(24), file = src.draw(o.edit_file_tokens), separator = src.draw(8);
  prompt = cat(cat(cat(prompt, instruction), file), separator);
  const int32_t n_gen = o.edit_file_tokens + 16;
  Engine engine(model, tok, o.engine);
  Driver drv(engine);
  log(o, "edit: prompt of " + std::to_string(prompt.size()) + " tokens (warm-up)");
  drv.wait(drv.submit(greedy(prompt, 1)));

  struct Run {
    std::string name;
    RecPtr rec;
  };
  std::vector<Run> runs;
  const EngineStats s0 = engine.stats();
  const auto t0 = Clock::now();
  auto run = [&](const std::string& name, bool spec, std::vector<int32_t> prediction) {
    log(o, "edit: rewrite, " + name);
    GenerationRequest r = greedy(prompt, n_gen);
    r.speculative = spec;
    r.prediction = std::move(prediction);
    RecPtr rec = drv.submit(std::move(r));
    drv.wait(rec);
    runs.push_back({name, rec});
    return rec;
  };
  const RecPtr off = run("no speculation", false, {});
  const std::vector<int32_t> original = with_changes(off->tokens, o.edit_changes, src);
  const RecPtr on = run("speculation, the file (" + std::to_string(o.edit_changes) + " small changes from the rewrite) as predicted output",
                        true, original);
  const RecPtr wrong = run("speculation, an unrelated file as predicted output (drafts wrong)", true, file);
  const RecPtr oracle = run("speculation, the rewrite itself as predicted output (every draft right)", true, off->tokens);
  const auto t1 = Clock::now();
  engine.wait_idle();
  std::vector<RecPtr> recs;
  for (const auto& r : runs) recs.push_back(r.rec);
  fill_figures(rep, recs, t0, t1, s0, engine.stats());
  for (const auto& r : runs) {
    const RequestTimings& t = r.rec->final_event.timings;
    EditRun er;
    er.name = r.name;
    er.decode_tps = r.rec->decode_tps();
    er.n_drafted = t.n_drafted;
    er.n_accepted = t.n_accepted;
    er.identical = r.rec->tokens == off->tokens;
    rep.lines.push_back(er.name + ": " + fmt("%.2f tok/s", er.decode_tps) + " decoding, " + std::to_string(er.n_accepted) +
                        "/" + std::to_string(er.n_drafted) + " drafts accepted, output " +
                        (er.identical ? "identical" : "DIFFERENT"));
    rep.edit_runs.push_back(std::move(er));
  }
  if (!o.targets) return;
  const double base = off->decode_tps();
  rep.targets.push_back(check("edit: speculation speedup rewriting a file with " + std::to_string(o.edit_changes) +
                                  " small changes (tok/s on / off)",
                              on->decode_tps() / base, 1.8, true,
                              fmt("%.2f", on->decode_tps()) + " vs " + fmt("%.2f tok/s", base) + ", output " +
                                  (on->tokens == off->tokens ? "identical" : "DIFFERENT")));
  if (on->tokens != off->tokens || wrong->tokens != off->tokens || oracle->tokens != off->tokens) {
    rep.targets.push_back(check("edit: greedy output identical with and without speculation", 0, 1, true, "outputs differ"));
  }
}

std::string model_description(const Model& m) {
  int64_t n_params = 0;
  for (const GgufTensorInfo& t : m.gguf().tensors()) n_params += t.n_elements();
  std::string ftype = "?";
  if (auto ft = m.gguf().get_int_opt("general.file_type")) {
    if (auto t = quant_target_for_file_type(static_cast<FileType>(*ft))) ftype = std::string(t->name);
  }
  return m.config().arch + ", " + ftype + ", " + fmt("%.3f B params", n_params / 1e9);
}

}  // namespace

LatencySummary summarize(std::vector<double> v) {
  LatencySummary s;
  s.n = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    const double x = p * static_cast<double>(v.size() - 1);
    const size_t i = static_cast<size_t>(x);
    const double f = x - static_cast<double>(i);
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
  };
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.p50 = q(0.50);
  s.p90 = q(0.90);
  s.p99 = q(0.99);
  s.max = v.back();
  return s;
}

ServeBenchReport run_serve_bench(const Model& model, const Tokenizer& tok, const ServeBenchOptions& opt) {
  ServeBenchReport rep;
  rep.workload = opt.workload;
  rep.model_desc = model_description(model);
  rep.n_threads = opt.engine.n_threads > 0 ? opt.engine.n_threads : ThreadPool::hardware_threads();
  rep.load_before = load_average();
  if (opt.workload == "agent") {
    if (opt.n_clients < 1 || opt.rounds < 1 || opt.system_tokens < 2 || opt.turn_tokens < 1 || opt.answer_tokens < 2) {
      throw Error("bench-serve: agent needs at least 1 client and round, a system prompt of 2+ tokens, answers of 2+");
    }
    run_agent(model, tok, opt, rep);
  } else if (opt.workload == "completion") {
    if (opt.file_tokens < 8 || opt.n_completions < 1 || opt.completion_tokens < 1) {
      throw Error("bench-serve: completion needs a file of 8+ tokens and 1+ completions");
    }
    run_completion(model, tok, opt, rep);
  } else if (opt.workload == "edit") {
    if (opt.edit_file_tokens < 8) throw Error("bench-serve: edit needs a file of 8+ tokens");
    run_edit(model, tok, opt, rep);
  } else {
    throw Error("bench-serve: unknown workload '" + opt.workload + "' (agent, completion, edit)");
  }
  rep.load_after = load_average();
  {
    // The KV layout as the engine built it.
    const ModelConfig& c = model.config();
    const int32_t bs = std::max<int32_t>(1, opt.engine.kv_block_size);
    rep.kv_desc = std::string(tensor_type_name(opt.engine.kv_type)) + ", blocks of " + std::to_string(bs) + " tokens, " +
                  fmt("%.0f KiB/token", 2.0 * c.n_layer * KvStorage::row_bytes_for(c.kv_dim(), opt.engine.kv_type) / 1024.0);
  }
  return rep;
}

std::string format_serve_bench(const ServeBenchReport& r) {
  std::string s;
  char b[512];
  std::snprintf(b, sizeof b, "workload %s: %s, %d threads, KV %s\n", r.workload.c_str(), r.model_desc.c_str(), r.n_threads,
                r.kv_desc.c_str());
  s += b;
  std::snprintf(b, sizeof b, "load average (1 min): %.2f before, %.2f after\n", r.load_before, r.load_after);
  s += b;
  if (!r.notes.empty()) s += r.notes + "\n";
  std::snprintf(b, sizeof b, "requests %lld: %lld prompt tokens (%lld cached), %lld generated, %.1f s\n",
                static_cast<long long>(r.n_requests), static_cast<long long>(r.n_prompt_tokens),
                static_cast<long long>(r.n_cached_tokens), static_cast<long long>(r.n_generated), r.wall_s);
  s += b;
  std::snprintf(b, sizeof b, "TTFT ms:  p50 %9.1f  p90 %9.1f  p99 %9.1f  (mean %.1f, n %lld)\n", r.ttft.p50, r.ttft.p90, r.ttft.p99,
                r.ttft.mean, static_cast<long long>(r.ttft.n));
  s += b;
  std::snprintf(b, sizeof b, "TPOT ms:  p50 %9.1f  p99 %9.1f  (mean %.1f, n %lld)\n", r.tpot.p50, r.tpot.p99, r.tpot.mean,
                static_cast<long long>(r.tpot.n));
  s += b;
  std::snprintf(b, sizeof b, "tokens/s: %.2f generated, %.2f prompt (computed)\n", r.gen_tokens_per_s, r.prompt_tokens_per_s);
  s += b;
  std::snprintf(b, sizeof b, "prefix cache: hit rate %.1f%% of blocks looked up, %.1f%% of prompt tokens cached\n",
                100 * r.block_hit_rate, 100 * r.token_hit_rate);
  s += b;
  std::snprintf(b, sizeof b, "speculation: %llu/%llu drafts accepted; preemptions: %llu\n",
                static_cast<unsigned long long>(r.n_accepted), static_cast<unsigned long long>(r.n_drafted),
                static_cast<unsigned long long>(r.n_preemptions));
  s += b;
  for (const auto& l : r.lines) s += l + "\n";
  if (!r.targets.empty()) s += "targets:\n";
  for (const auto& t : r.targets) {
    std::snprintf(b, sizeof b, "  [%s] %s: %.3f (target %s %.2f) — %s\n", t.met ? "met" : "MISSED", t.name.c_str(), t.value,
                  t.at_least ? ">=" : "<=", t.limit, t.detail.c_str());
    s += b;
  }
  return s;
}

}  // namespace edgeinfer
