#include "engine/engine.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "engine/kv_persist.h"
#include "tokenizer/stream_decoder.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// What makes KV of equal tokens differ: the weights (file identity), the KV element type and the
// block size. Persisted blocks of another model or layout can then never match.
BlockHash model_root_hash(const Model& m, TensorType kv_type, int32_t block_size) {
  const GgufFile& f = m.gguf();
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  const uint64_t header[4] = {f.file_size(), f.tensors().size(), static_cast<uint64_t>(kv_type),
                              static_cast<uint64_t>(block_size)};
  XXH3_64bits_update(st, header, sizeof(header));
  for (const auto& t : f.tensors()) {
    XXH3_64bits_update(st, t.name.data(), t.name.size());
    const size_t n = std::min<uint64_t>(t.n_bytes, 4096);
    XXH3_64bits_update(st, t.data, n);
    XXH3_64bits_update(st, t.data + t.n_bytes - n, n);
  }
  const BlockHash h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return h;
}

}  // namespace

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::None: return "none";
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::Error: return "error";
  }
  return "?";
}

Engine::Engine(const Model& model, const Tokenizer& tokenizer, const EngineOptions& opt)
    : model_(model),
      tok_(tokenizer),
      opt_(opt),
      pool_(opt.n_threads > 0 ? opt.n_threads : ThreadPool::hardware_threads()),
      fwd_(model, kernels_for(select_isa()), pool_),
      cost_(std::max(1, opt.max_running)) {
  const ModelConfig& c = model.config();
  n_ctx_ = opt.n_ctx > 0 ? opt.n_ctx : static_cast<int32_t>(std::min<int64_t>(c.n_ctx_train, 4096));
  const int32_t bs = std::max<int32_t>(1, opt.kv_block_size);
  int64_t kv_tokens = opt.kv_tokens;
  if (kv_tokens <= 0 && opt.kv_mem_bytes > 0) {
    const size_t per_token = 2 * static_cast<size_t>(c.n_layer) * KvStorage::row_bytes_for(c.kv_dim(), opt.kv_type);
    kv_tokens = static_cast<int64_t>(opt.kv_mem_bytes / per_token);
    if (kv_tokens < bs) throw Error("--kv-mem is too small for even one KV block");
  }
  if (kv_tokens <= 0) kv_tokens = std::max<int64_t>(8192, n_ctx_);
  const int32_t n_blocks = static_cast<int32_t>((kv_tokens + bs - 1) / bs);
  kv_ = std::make_unique<KvStorage>(c.n_layer, c.kv_dim(), bs, n_blocks, opt.kv_type);
  cache_ = std::make_unique<PrefixCache>(n_blocks, bs);
  root_ = model_root_hash(model, opt.kv_type, bs);
  SchedulerConfig sc;
  sc.max_batch_tokens = std::max<int32_t>(1, opt.max_batch_tokens);
  sc.max_running = std::max<int32_t>(1, opt.max_running);
  sc.max_prefill_with_decode = opt.max_prefill_with_decode > 0 ? opt.max_prefill_with_decode : 0;
  sc.max_ctx = n_ctx_;
  sc.root = root_;
  sched_ = std::make_unique<Scheduler>(*cache_, sc);
  if (opt.draft_model && opt.speculative) {
    draft_ = std::make_unique<DraftModel>(*opt.draft_model, model, pool_, opt.kv_type, bs, kv_tokens);
  }
  if (!opt_.cache_dir.empty()) load_persisted();
  inserted_at_save_ = cache_->stats().n_inserted;
  last_save_ = Clock::now();
  update_stats();
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() { stop(StopMode::Cancel); }

uint64_t Engine::submit(GenerationRequest req) {
  const int64_t n_vocab = model_.config().n_vocab;
  if (req.prompt.empty()) throw Error("the prompt is empty");
  for (int32_t t : req.prompt) {
    if (t < 0 || t >= n_vocab) throw Error("prompt token id " + std::to_string(t) + " is outside the vocabulary");
  }
  if (req.max_tokens < 0) throw Error("max_tokens must not be negative");
  req.sampling.validate();
  const int64_t n_prompt = static_cast<int64_t>(req.prompt.size());
  if (n_prompt >= n_ctx_) {
    throw Error("the prompt has " + std::to_string(n_prompt) + " tokens; the context holds " + std::to_string(n_ctx_));
  }
  if (!sched_->fits(n_prompt + 1)) throw Error("the prompt does not fit in the KV cache");

  auto seq = std::make_unique<Sequence>();
  seq->t_arrival = Clock::now();
  seq->priority = req.priority;
  seq->tokens = req.prompt;
  seq->n_prompt = static_cast<int32_t>(n_prompt);
  // Generation stops at the context size or when the sequence would fill the whole KV pool alone
  // (finish reason "length") rather than failing; a sequence that fits alone always makes
  // progress, however often it is preempted.
  seq->max_tokens = static_cast<int32_t>(std::min<int64_t>(req.max_tokens, sched_->max_tokens_alone() - n_prompt));
  seq->cache_salt = req.cache_salt;
  seq->sampler = std::make_unique<Sampler>(req.sampling, static_cast<int32_t>(n_vocab));
  for (int32_t t : req.prompt) seq->sampler->accept(t);
  seq->decoder = std::make_unique<StreamDecoder>(tok_, req.show_special);
  seq->stop = std::make_unique<StopMatcher>(req.stop);
  seq->timings.n_prompt = seq->n_prompt;
  seq->req = std::move(req);

  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) throw Error("the engine is shutting down");
  const uint64_t id = next_id_++;
  seq->id = id;
  seq->arrival = next_arrival_++;
  inbox_.new_seqs.push_back(std::move(seq));
  idle_ = false;
  cv_.notify_one();
  return id;
}

void Engine::cancel(uint64_t id) {
  std::lock_guard<std::mutex> lk(mu_);
  inbox_.cancels.push_back(id);
  cv_.notify_one();
}

void Engine::stop(StopMode mode, int64_t grace_ms) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
    stop_mode_ = mode;
    stop_deadline_ = Clock::now() + std::chrono::milliseconds(std::max<int64_t>(0, grace_ms));
    cv_.notify_one();
  }
  thread_.join();
  if (!opt_.cache_dir.empty()) save_persisted();
}

void Engine::wait_idle() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_cv_.wait(lk, [&] { return idle_ || !thread_.joinable(); });
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

void Engine::take_inbox() {
  Inbox in;
  {
    std::lock_guard<std::mutex> lk(mu_);
    std::swap(in, inbox_);
  }
  for (auto& s : in.new_seqs) {
    Sequence* p = s.get();
    n_prompt_tokens_ += p->n_prompt;
    seqs_.emplace(p->id, std::move(s));
    if (p->max_tokens == 0) {
      finish(p, FinishReason::Length);
      continue;
    }
    sched_->add(p);
  }
  for (uint64_t id : in.cancels) {
    auto it = seqs_.find(id);
    if (it != seqs_.end()) finish(it->second.get(), FinishReason::Cancelled);
  }
}

void Engine::finish(Sequence* seq, FinishReason reason, const std::string& error) {
  const auto now = Clock::now();
  TokenEvent ev;
  ev.request_id = seq->id;
  // Text held back for stop-string matching or an incomplete character is released at the end.
  if (reason != FinishReason::Cancelled && reason != FinishReason::Error && !seq->stop->stopped()) {
    ev.text = seq->stop->push(seq->decoder->flush());
    if (!seq->stop->stopped()) ev.text += seq->stop->flush();
  }
  ev.done = true;
  ev.finish = reason;
  ev.stop_match = seq->stop->matched();
  ev.error = error;
  RequestTimings& t = seq->timings;
  if (!seq->scheduled_once) {
    t.queue_ms = ms_between(seq->t_arrival, now);
  } else if (t.n_generated > 0) {
    t.decode_ms = ms_between(seq->t_first_token, now);
  }
  ev.timings = t;
  n_finished_[static_cast<int>(reason)]++;
  sched_->remove(seq);
  if (draft_) draft_->release(seq->id);
  // Statistics first, so that whoever reacts to the final event (a server answering, then a
  // client reading /metrics) already sees this request counted and its blocks freed.
  update_stats();
  if (seq->req.sink) seq->req.sink(ev);
  seqs_.erase(seq->id);
}

bool Engine::emit_tokens(Sequence* seq, const std::vector<int32_t>& toks, std::vector<TokenLogprobs>& lps,
                         int32_t n_already_accepted) {
  TokenEvent ev;
  ev.request_id = seq->id;
  FinishReason reason = FinishReason::None;
  for (size_t i = 0; i < toks.size(); ++i) {
    const int32_t id = toks[i];
    seq->tokens.push_back(id);
    if (static_cast<int32_t>(i) >= n_already_accepted) seq->sampler->accept(id);
    seq->timings.n_generated++;
    n_generated_++;
    ev.tokens.push_back(id);
    if (i < lps.size()) ev.logprobs.push_back(std::move(lps[i]));
    if (!seq->req.ignore_eos && tok_.is_eog(id)) {
      reason = FinishReason::Stop;
      break;
    }
    ev.text += seq->stop->push(seq->decoder->push(id));
    if (seq->stop->stopped()) {
      reason = FinishReason::Stop;
      break;
    }
    if (seq->n_generated() >= seq->max_tokens) {
      reason = FinishReason::Length;
      break;
    }
  }
  if (!ev.tokens.empty() && seq->req.sink) seq->req.sink(ev);
  if (reason != FinishReason::None) {
    finish(seq, reason);
    return true;
  }
  return false;
}

void Engine::step() {
  const auto t_start = Clock::now();
  set_decode_positions();
  // Drafts for decoding sequences (prompt lookup), before scheduling so they ride along.
  if (opt_.speculative) {
    int32_t n_decoding = 0;  // sequences that decode this step (drafts cost each of them)
    for (const Sequence* s : sched_->running()) n_decoding += s->n_pending() == 1 ? 1 : 0;
    // Draft rows of this step, all sequences together, while others decode beside them (-1:
    // no limit): what the step slack leaves after the prompt tokens the cap lets in.
    int32_t draft_room = -1;
    if (opt_.draft_cost_gate && n_decoding > 1) {
      draft_room = cost_.rows_within(n_decoding, opt_.step_slack);
      if (draft_room >= 0 && sched_->n_waiting() + sched_->n_running() > n_decoding) {
        draft_room = std::max(0, draft_room - std::max(0, sched_->config().max_prefill_with_decode));
      }
    }
    for (Sequence* s : sched_->running()) {
      s->draft.clear();
      if (s->req.speculative && s->n_pending() == 1) {
        PromptLookupParams lp = opt_.lookup;
        if (lp.max_draft_adaptive > 0) {
          if (s->draft_len == 0) s->draft_len = lp.max_draft;
          lp.max_draft = s->draft_len;
        }
        if (!s->req.prediction.empty()) {
          predicted_draft(s->tokens, std::span<const int32_t>(s->tokens).subspan(s->n_prompt), s->req.prediction, lp,
                          s->draft);
        }
        if (s->draft.empty()) prompt_lookup_draft(s->tokens, lp, s->draft);
        // At most what the request may still generate, and only the drafts whose expected
        // saving pays for their rows in this batch.
        const int32_t left = s->max_tokens - s->n_generated() - 1;
        int32_t worth = opt_.draft_cost_gate ? cost_.drafts_worth(std::max(0, left), s->draft_record.p(), n_decoding)
                                             : std::max(0, left);
        if (draft_room >= 0) worth = std::min(worth, draft_room);
        if (static_cast<int32_t>(s->draft.size()) > worth) {
          s->draft.resize(std::max(0, worth));
          if (worth == 0) s->draft_record.fade();
        }
        if (draft_ && s->draft.empty() && worth > 0) {
          DraftModel::Want want;
          want.id = s->id;
          want.tokens = s->tokens;
          want.n_prompt = s->n_prompt;
          want.n_draft = std::min(lp.max_draft, worth);
          want.out = &s->draft;
          draft_wants_.push_back(want);
          if (draft_room >= 0) draft_room -= want.n_draft;
        } else if (draft_room >= 0) {
          draft_room -= static_cast<int32_t>(s->draft.size());
        }
      }
    }
    // The draft model proposes for the rest, all of them batched into each of its steps.
    if (!draft_wants_.empty()) {
      draft_->propose(draft_wants_);
      draft_wants_.clear();
    }
  }
  std::vector<ScheduledSeq> work = sched_->schedule();
  if (work.empty()) return;

  const auto t0 = Clock::now();
  step_tokens_.resize(work.size());
  step_batch_.resize(work.size());
  int32_t n_decode = 0, n_prefill = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    const ScheduledSeq& w = work[i];
    Sequence* s = w.seq;
    if (!s->scheduled_once) {
      s->scheduled_once = true;
      s->t_scheduled = t0;
      s->timings.queue_ms = ms_between(s->t_arrival, t0);
    }
    auto& toks = step_tokens_[i];
    toks.assign(s->tokens.begin() + s->n_computed, s->tokens.begin() + s->n_computed + w.n_tokens);
    toks.insert(toks.end(), s->draft.begin(), s->draft.begin() + w.n_draft);
    SeqBatch& b = step_batch_[i];
    b.tokens = toks;
    b.pos0 = s->n_computed;
    b.block_table = s->blocks;
    b.logits = w.n_draft > 0 ? SeqBatch::Logits::All : (w.sample ? SeqBatch::Logits::Last : SeqBatch::Logits::None);
    // Generated tokens (also when recomputed after preemption) and drafts take the decode
    // kernels, prompt tokens the prefill ones, as when the sequence runs alone.
    b.decode_from = s->n_prompt;
    if (w.sample && s->n_pending() == 1) {
      n_decode += 1;
    } else {
      n_prefill += w.n_tokens;
    }
  }
  const int32_t cap_in_force = sched_->config().max_prefill_with_decode;
  const float* logits = fwd_.forward(step_batch_, *kv_);
  const auto t_fwd = Clock::now();
  int32_t n_draft_step = 0, n_accepted_step = 0;
  const int64_t V = model_.config().n_vocab;

  std::vector<int32_t> accepted;
  std::vector<TokenLogprobs> lps;
  std::vector<Sampler::TokenLogprob> top;
  for (size_t i = 0; i < work.size(); ++i) {
    const ScheduledSeq& w = work[i];
    Sequence* s = w.seq;
    if (!w.sample) {
      sched_->advance(s, w.n_tokens);
      continue;
    }
    const int32_t n_rows = w.n_draft > 0 ? w.n_tokens + w.n_draft : 1;
    const float* rows = logits;
    logits += n_rows * V;
    // Rows: with drafts, row 0 follows the last real token and row j the j-th draft.
    const int32_t first_row = w.n_draft > 0 ? w.n_tokens - 1 : 0;
    accepted.clear();
    lps.clear();
    const int32_t n_lp = s->req.n_logprobs;
    int32_t m = 0;  // accepted drafts
    for (int32_t j = 0; j <= w.n_draft; ++j) {
      const float* row = rows + (first_row + j) * V;
      int32_t id;
      if (n_lp >= 0) {
        float chosen = 0;
        id = s->sampler->sample(row, n_lp, &top, &chosen);
        TokenLogprobs tl;
        tl.id = id;
        tl.logprob = chosen;
        for (const auto& t : top) tl.top.emplace_back(t.id, t.logprob);
        lps.push_back(std::move(tl));
      } else {
        id = s->sampler->sample(row);
      }
      accepted.push_back(id);
      // The sampler's penalty window must see each token before the next is drawn.
      if (j < w.n_draft) {
        if (id != s->draft[j]) break;
        s->sampler->accept(id);
        ++m;
      }
    }
    if (w.n_draft > 0 && opt_.lookup.max_draft_adaptive > 0) {
      // Longer drafts while they hold, shorter when they do not.
      s->draft_len = m == w.n_draft ? std::min(2 * std::max(s->draft_len, w.n_draft), opt_.lookup.max_draft_adaptive)
                                    : std::max(2, (s->draft_len + m + 1) / 2);
    }
    s->draft_record.update(w.n_draft, m);
    s->timings.n_drafted += w.n_draft;
    s->timings.n_accepted += m;
    n_draft_step += w.n_draft;
    n_accepted_step += m;
    n_drafted_ += w.n_draft;
    n_accepted_ += m;
    sched_->advance(s, w.n_tokens + m);
    if (s->timings.n_generated == 0) {
      s->t_first_token = Clock::now();
      s->timings.prefill_ms = ms_between(s->t_scheduled, s->t_first_token);
      s->timings.ttft_ms = ms_between(s->t_arrival, s->t_first_token);
    }
    s->draft.clear();
    emit_tokens(s, accepted, lps, /*n_already_accepted=*/m);
  }
  const auto t_end = Clock::now();
  tune_prefill_cap(ms_between(t0, t_end), n_decode, n_prefill + n_draft_step, 1000.0 * fwd_.attention_seconds(),
                   fwd_.attended_positions());
  if (opt_.on_step) {
    StepInfo si;
    si.step = sched_->stats().n_steps;
    si.n_seqs = static_cast<int32_t>(work.size());
    si.n_decode = n_decode;
    si.n_prefill_tokens = n_prefill;
    si.n_draft_tokens = n_draft_step;
    si.n_accepted = n_accepted_step;
    si.prefill_cap = cap_in_force;
    si.schedule_ms = ms_between(t_start, t0);
    si.forward_ms = ms_between(t0, t_fwd);
    si.attention_ms = 1000.0 * fwd_.attention_seconds();
    si.total_ms = ms_between(t_start, t_end);
    opt_.on_step(si);
  }
}

void Engine::set_decode_positions() {
  int64_t positions = 0;
  for (const Sequence* s : sched_->running()) {
    if (s->n_pending() == 1) positions += s->n_computed + 1;
  }
  cost_.set_decode_positions(positions);
}

void Engine::tune_prefill_cap(double step_ms, int32_t n_decode, int32_t n_extra, double attn_ms, int64_t attn_positions) {
  cost_.observe(n_decode, n_extra, step_ms, attn_ms, attn_positions);
  if (opt_.max_prefill_with_decode >= 0) return;  // fixed by the user (0 = no cap)
  // Let prompt tokens add at most step_slack (20%) to a step of this many decoding sequences, so
  // time per output token stays steady while new prompts are absorbed. Both sides at the
  // contexts of the coming step: the decoding sequences' and that of the prompt being absorbed
  // (the first one part-way through; a waiting one is taken to start at 0).
  if (n_decode > 0) {
    set_decode_positions();
    int64_t prompt_pos = 0;
    for (const Sequence* s : sched_->running()) {
      if (s->n_pending() > 1) {
        prompt_pos = s->n_computed;
        break;
      }
    }
    const int32_t cap = cost_.prefill_cap(n_decode, opt_.step_slack, prompt_pos);
    if (cap > 0) sched_->set_max_prefill_with_decode(cap);
  }
}

void Engine::update_stats() {
  EngineStats s;
  s.n_running = sched_->n_running();
  s.n_waiting = sched_->n_waiting();
  s.kv_blocks_total = cache_->n_blocks();
  s.kv_blocks_used = cache_->pool().n_used();
  s.kv_block_size = cache_->block_size();
  s.n_steps = sched_->stats().n_steps;
  s.n_preemptions = sched_->stats().n_preemptions;
  s.prefix_queries = cache_->stats().n_query_blocks;
  s.prefix_hits = cache_->stats().n_hit_blocks;
  s.n_prompt_tokens = n_prompt_tokens_;
  s.n_cached_tokens = sched_->stats().n_cached_tokens;
  s.n_generated_tokens = n_generated_;
  s.n_drafted = n_drafted_;
  s.n_draft_accepted = n_accepted_;
  for (int i = 0; i < 5; ++i) s.n_finished[i] = n_finished_[i];
  s.prefill_cap = sched_->config().max_prefill_with_decode;
  s.n_persisted_loaded = n_persisted_loaded_;
  s.n_persist_saves = n_persist_saves_;
  std::lock_guard<std::mutex> lk(mu_);
  stats_ = s;
}

void Engine::loop() {
  for (;;) {
    take_inbox();
    bool stopping;
    StopMode mode;
    Clock::time_point deadline;
    {
      std::lock_guard<std::mutex> lk(mu_);
      stopping = stopping_;
      mode = stop_mode_;
      deadline = stop_deadline_;
    }
    if (stopping && (mode == StopMode::Cancel || Clock::now() >= deadline)) {
      std::vector<Sequence*> all;
      for (auto& [id, s] : seqs_) all.push_back(s.get());
      for (Sequence* s : all) finish(s, FinishReason::Cancelled);
    }
    if (seqs_.empty()) {
      update_stats();
      std::unique_lock<std::mutex> lk(mu_);
      if (stopping_ && inbox_.new_seqs.empty() && inbox_.cancels.empty()) {
        idle_ = true;
        idle_cv_.notify_all();
        return;
      }
      if (inbox_.new_seqs.empty() && inbox_.cancels.empty()) {
        idle_ = true;
        idle_cv_.notify_all();
        auto woken = [&] { return stopping_ || !inbox_.new_seqs.empty() || !inbox_.cancels.empty(); };
        if (!idle_save_due()) {
          cv_.wait(lk, woken);
        } else if (!cv_.wait_until(lk, last_save_ + std::chrono::milliseconds(opt_.persist_interval_ms), woken)) {
          lk.unlock();
          save_persisted();
        }
      }
      continue;
    }
    try {
      step();
    } catch (const std::exception& e) {
      // A failure inside a step ends the requests it touched rather than the server.
      std::vector<Sequence*> all;
      for (auto& [id, s] : seqs_) all.push_back(s.get());
      for (Sequence* s : all) finish(s, FinishReason::Error, e.what());
    }
    update_stats();
  }
}

void Engine::load_persisted() {
  try {
    n_persisted_loaded_ = load_prefix_cache(opt_.cache_dir, root_, *kv_, *cache_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: prefix cache in '%s' not loaded: %s\n", opt_.cache_dir.c_str(), e.what());
  }
}

bool Engine::idle_save_due() const {
  return !opt_.cache_dir.empty() && opt_.persist_interval_ms > 0 && cache_->stats().n_inserted != inserted_at_save_;
}

void Engine::save_persisted() {
  // Counted as done even when it fails: a failing folder is retried after the next interval, not
  // in a loop.
  inserted_at_save_ = cache_->stats().n_inserted;
  last_save_ = Clock::now();
  try {
    save_prefix_cache(opt_.cache_dir, root_, *kv_, *cache_, opt_.persist_max_blocks);
    ++n_persist_saves_;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: prefix cache not saved to '%s': %s\n", opt_.cache_dir.c_str(), e.what());
  }
  update_stats();
}

}  // namespace edgeinfer
