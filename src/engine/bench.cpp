#include "engine/bench.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "kv/kv_storage.h"
#include "model/forward.h"
#include "quant/type_traits.h"
#include "sampling/rng.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer {

namespace {

using Clock = std::chrono::steady_clock;
// Passes of each read-bandwidth probe taken between generation repetitions (the best counts).
constexpr int kBracketPasses = 2;

// Every matrix a forward pass multiplies by, with the op (forward_profile.h) it belongs to.
template <class F>
void for_each_matrix(const Model& m, F&& f) {
  const ModelWeights& w = m.weights();
  for (const LayerWeights& L : w.layers) {
    f(FwdOp::Qkv, L.wq);
    f(FwdOp::Qkv, L.wk);
    f(FwdOp::Qkv, L.wv);
    f(FwdOp::AttnOut, L.wo);
    f(FwdOp::GateUp, L.w_gate);
    f(FwdOp::GateUp, L.w_up);
    f(FwdOp::Down, L.w_down);
  }
  f(FwdOp::Output, w.output);
}

// The type most matmul weight bytes are in, as the model's label.
TensorType dominant_type(const Model& m) {
  std::map<TensorType, uint64_t> bytes;
  for_each_matrix(m, [&](FwdOp, const WeightMatrix& x) { bytes[x.type] += x.row_bytes * static_cast<uint64_t>(x.n_out); });
  TensorType best = TensorType::F32;
  uint64_t most = 0;
  for (auto& [t, b] : bytes) {
    if (b > most) {
      most = b;
      best = t;
    }
  }
  return best;
}

// n_seq sequences of n_ctx slots each over one KV cache (sequence i owns its own blocks),
// driven directly through the forward pass.
class BenchBatch {
 public:
  BenchBatch(const Model& m, const Kernels& k, ThreadPool& pool, int64_t n_ctx, int n_seq, TensorType kv_type)
      : fwd_(m, k, pool), blocks_per_seq_((n_ctx + kBlock - 1) / kBlock) {
    const int64_t n_blocks = blocks_per_seq_ * n_seq;
    if (n_blocks > INT32_MAX) throw Error("bench: KV cache of " + std::to_string(n_blocks) + " blocks is too large");
    kv_ = std::make_unique<KvStorage>(m.config().n_layer, m.config().kv_dim(), kBlock, static_cast<int32_t>(n_blocks), kv_type);
    tables_.resize(static_cast<size_t>(n_seq));
    for (int s = 0; s < n_seq; ++s) {
      for (int64_t i = 0; i < blocks_per_seq_; ++i) tables_[s].push_back(static_cast<int32_t>(s * blocks_per_seq_ + i));
    }
  }
  void set_profile(ForwardProfile* p) { fwd_.set_profile(p); }
  // Sequence 0 takes `tokens` at positions [pos0, pos0 + size).
  void decode(std::span<const int32_t> tokens, int64_t pos0) {
    SeqBatch sb;
    sb.tokens = tokens;
    sb.pos0 = pos0;
    sb.block_table = tables_[0];
    fwd_.forward(std::span<const SeqBatch>(&sb, 1), *kv_);
  }
  // One decode step of sequences [0, n): sequence s takes tokens[s] at position pos.
  void step(std::span<const int32_t> tokens, int64_t pos) {
    batch_.resize(tokens.size());
    for (size_t s = 0; s < tokens.size(); ++s) {
      batch_[s] = SeqBatch{};
      batch_[s].tokens = tokens.subspan(s, 1);
      batch_[s].pos0 = pos;
      batch_[s].block_table = tables_[s];
    }
    fwd_.forward(batch_, *kv_);
  }
  // Sequences [1, n_seq) take sequence 0's blocks for its first n_rows cached rows, as requests
  // sharing a cached prefix do: the whole blocks by reference, the rows of a last partial block
  // copied (each sequence writes its own tokens after them).
  void share_prefix(int64_t n_rows, int n_seq) {
    const int64_t whole = n_rows / kBlock;
    for (int s = 1; s < n_seq; ++s) {
      for (int64_t i = 0; i < whole; ++i) tables_[s][static_cast<size_t>(i)] = tables_[0][static_cast<size_t>(i)];
    }
    copy_rows(whole * kBlock, n_rows, n_seq);
  }
  // Copies sequence 0's first n_rows cached rows (every layer, K and V) into sequences [1, n_seq):
  // each gets the same prompt in its own memory, without prefilling it again.
  void copy_prefix(int64_t n_rows, int n_seq) { copy_rows(0, n_rows, n_seq); }

 private:
  // Rows [p_begin, p_end) of sequence 0 into sequences [1, n_seq), every layer, K and V.
  void copy_rows(int64_t p_begin, int64_t p_end, int n_seq) {
    const KvStorage& src = *kv_;
    for (int s = 1; s < n_seq; ++s) {
      for (int64_t l = 0; l < kv_->n_layer(); ++l) {
        for (int64_t p = p_begin; p < p_end; ++p) {
          const int32_t b0 = tables_[0][static_cast<size_t>(p / kBlock)], b = tables_[s][static_cast<size_t>(p / kBlock)];
          const int32_t slot = static_cast<int32_t>(p % kBlock);
          std::memcpy(kv_->k_row(l, b, slot), src.k_row(l, b0, slot), kv_->row_bytes());
          std::memcpy(kv_->v_row(l, b, slot), src.v_row(l, b0, slot), kv_->row_bytes());
        }
      }
    }
  }

  static constexpr int32_t kBlock = 16;
  ForwardPass fwd_;
  int64_t blocks_per_seq_;
  std::unique_ptr<KvStorage> kv_;
  std::vector<std::vector<int32_t>> tables_;
  std::vector<SeqBatch> batch_;
};

}  // namespace

uint64_t decode_stream_bytes(const Model& m) {
  uint64_t b = 0;
  for_each_matrix(m, [&](FwdOp, const WeightMatrix& x) { b += x.row_bytes * static_cast<uint64_t>(x.n_out); });
  return b;
}

double matmul_ops_per_token(const Model& m) {
  double n = 0;
  for_each_matrix(m, [&](FwdOp, const WeightMatrix& x) { n += static_cast<double>(x.n_in) * static_cast<double>(x.n_out); });
  return 2.0 * n;
}

OpWorkTable matmul_work_by_op(const Model& m) {
  OpWorkTable t{};
  for_each_matrix(m, [&](FwdOp op, const WeightMatrix& x) {
    OpWork& w = t[static_cast<size_t>(op)];
    w.bytes += static_cast<double>(x.row_bytes) * static_cast<double>(x.n_out);
    w.ops += 2.0 * static_cast<double>(x.n_in) * static_cast<double>(x.n_out);
  });
  return t;
}

std::array<double, static_cast<size_t>(FwdOp::Count)> profile_rates(const BenchResult& r, const OpWorkTable& w) {
  std::array<double, static_cast<size_t>(FwdOp::Count)> rate{};
  const double calls = static_cast<double>(r.profile.forward_calls);
  for (size_t i = 0; i < rate.size(); ++i) {
    const double s = r.profile.seconds[i];
    if (s <= 0) continue;
    if (r.n_prompt > 0) {
      const double rows = i == static_cast<size_t>(FwdOp::Output) ? 1.0 : static_cast<double>(r.n_prompt);
      rate[i] = w[i].ops * rows * calls / s;
    } else {
      rate[i] = w[i].bytes * calls / s;
    }
  }
  return rate;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double s = 0;
  for (double x : v) s += (x - mean) * (x - mean);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

BenchReport run_bench(const Model& model, const std::string& model_path, const Kernels& kernels,
                      const BenchOptions& opt, const std::function<void(const BenchResult&)>& on_result) {
  const ModelConfig& c = model.config();
  BenchReport rep;
  rep.model_path = model_path;
  const TensorType wt = dominant_type(model);
  rep.model_type = std::string(tensor_type_name(wt));
  rep.model_bytes = model.weight_bytes();
  for (const GgufTensorInfo& t : model.gguf().tensors()) rep.n_params += t.n_elements();
  rep.stream_bytes_per_token = decode_stream_bytes(model);
  rep.matmul_ops_per_token = matmul_ops_per_token(model);
  rep.op_work = matmul_work_by_op(model);
  rep.isa = std::string(isa_name(kernels.isa));
  const bool int_path = type_traits(wt).is_quantized;
  if (opt.reps < 1) throw Error("bench: repetitions must be at least 1");

  if (opt.depth < 0) throw Error("bench: depth must not be negative");
  int max_p = 0, max_n = 0, max_par = 1;
  for (int p : opt.n_prompt) {
    if (p < 0) throw Error("bench: prompt lengths must not be negative, got " + std::to_string(p));
    max_p = std::max(max_p, p);
  }
  for (int n : opt.n_gen) {
    if (n < 0) throw Error("bench: generation lengths must not be negative, got " + std::to_string(n));
    max_n = std::max(max_n, n);
  }
  for (int p : opt.parallel) {
    if (p < 1 || p > 256) throw Error("bench: parallel sequences must be in [1, 256], got " + std::to_string(p));
    max_par = std::max(max_par, p);
  }
  if (max_n == 0) max_par = 1;  // no tg test: only sequence 0 is used
  const int64_t n_ctx = std::max<int64_t>(16, std::max<int64_t>(max_p, int64_t{opt.depth} + max_n));

  Rng rng(opt.seed);
  auto random_tokens = [&](int n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int32_t& x : t) x = static_cast<int32_t>(rng.next_u64() % static_cast<uint64_t>(c.n_vocab));
    return t;
  };
  // KV bytes one decode step reads at position p (K and V of every layer up to p).
  const double kv_row_bytes = static_cast<double>(KvStorage::row_bytes_for(c.kv_dim(), opt.kv_type)) * 2.0 *
                              static_cast<double>(c.n_layer);

  for (int nth : opt.threads) {
    if (nth < 1) throw Error("bench: thread count must be at least 1");
    ThreadPool pool(nth);
    ProbeResult probe;
    // The read probe's buffer, kept for the probes between generation repetitions.
    std::optional<ReadProbe> bracket;
    if (opt.probes) {
      bracket.emplace(pool, opt.probe_options.read_bytes);
      probe = run_probes(pool, opt.probe_options, &*bracket);
      rep.probes.push_back(probe);
      if (max_n == 0) bracket.reset();
    }
    BenchBatch seq(model, kernels, pool, n_ctx, max_par, opt.kv_type);

    // With r.rep_peak (one peak per repetition, measured beside it), the roofline is the median
    // of the repetitions' own ratios and `peak` the median of those peaks; otherwise `peak`.
    auto finish = [&](BenchResult& r, double work_per_token, double peak, const char* basis) {
      r.median = median_of(r.tok_s);
      double mean = 0;
      for (double x : r.tok_s) mean += x;
      r.mean = mean / static_cast<double>(r.tok_s.size());
      r.stddev = stddev_of(r.tok_s);
      if (opt.probes && peak > 0) {
        r.achieved = work_per_token * r.median;
        r.peak = peak;
        r.roofline = r.achieved / peak;
        r.basis = basis;
        if (!r.rep_peak.empty()) {
          std::vector<double> ratios;
          for (size_t i = 0; i < r.tok_s.size(); ++i) ratios.push_back(work_per_token * r.tok_s[i] / r.rep_peak[i]);
          r.peak = median_of(r.rep_peak);
          r.roofline = median_of(ratios);
        }
      }
      if (on_result) on_result(r);
      rep.results.push_back(std::move(r));
    };

    for (int np : opt.n_prompt) {
      if (np <= 0) continue;
      BenchResult r;
      r.test = "pp" + std::to_string(np);
      r.n_prompt = np;
      r.threads = nth;
      const std::vector<int32_t> toks = random_tokens(np);
      seq.decode(toks, 0);  // warm-up
      ForwardProfile prof;
      if (opt.profile) seq.set_profile(&prof);
      // The compute peak is probed again between repetitions, as the read bandwidth is for
      // generation: on the Intel VMs it swings by up to half within minutes (2 threads: FP32
      // 175-349 GFLOP/s, int8 606-1123 Gop/s), so a peak taken once compares a repetition with
      // another moment's machine.
      auto compute_peak = [&] {
        return int_path ? probe_int8_peak(pool, opt.probe_options) : probe_fma_peak(pool, opt.probe_options);
      };
      double peak_before = opt.probes ? compute_peak() : 0;
      for (int i = 0; i < opt.reps; ++i) {
        const auto t0 = Clock::now();
        seq.decode(toks, 0);
        const double s = std::chrono::duration<double>(Clock::now() - t0).count();
        r.tok_s.push_back(np / s);
        if (opt.probes) {
          const double peak_after = compute_peak();
          r.rep_peak.push_back(std::max(peak_before, peak_after));
          peak_before = peak_after;
        }
      }
      seq.set_profile(nullptr);
      r.profile = prof;
      // Attention: for each token at position p, 2·p·q_dim (scores) + 2·p·q_dim (values) ops.
      const double attn_ops = 4.0 * static_cast<double>(c.q_dim()) * static_cast<double>(c.n_layer) * (np + 1) / 2.0;
      // Every token goes through the layers; only the last one through the output matrix.
      const double out_ops = rep.op_work[static_cast<size_t>(FwdOp::Output)].ops;
      const double prompt_ops = rep.matmul_ops_per_token - out_ops + out_ops / np;
      finish(r, prompt_ops + attn_ops, int_path ? probe.int8_ops_per_s : probe.fma_flops,
             int_path ? "int8 peak" : "fp32 fma peak");
    }
    // The depth prompt, prefilled once into sequence 0 (in chunks, as the engine would) and
    // copied into the others (or, with shared_depth, its blocks shared with them); tg tests then
    // decode from position `depth`, overwriting only the slots after it.
    if (opt.depth > 0 && max_n > 0) {
      const std::vector<int32_t> prompt = random_tokens(opt.depth);
      for (int p0 = 0; p0 < opt.depth; p0 += 512) {
        const int len = std::min(512, opt.depth - p0);
        seq.decode(std::span<const int32_t>(prompt).subspan(static_cast<size_t>(p0), static_cast<size_t>(len)), p0);
      }
      if (opt.shared_depth) {
        seq.share_prefix(opt.depth, max_par);
      } else {
        seq.copy_prefix(opt.depth, max_par);
      }
    }
    for (int ng : opt.n_gen) {
      if (ng <= 0) continue;
      for (int np : opt.parallel) {
        BenchResult r;
        r.test = "tg" + std::to_string(ng);
        if (opt.depth > 0) r.test += "@d" + std::to_string(opt.depth);
        if (np > 1) r.test += " x" + std::to_string(np);
        if (np > 1 && opt.depth > 0 && opt.shared_depth) r.test += " shared";
        r.n_gen = ng;
        r.parallel = np;
        r.depth = opt.depth;
        r.threads = nth;
        const std::vector<int32_t> toks = random_tokens(ng * np);  // step i: toks[i * np + s]
        auto run_once = [&] {
          for (int i = 0; i < ng; ++i) {
            const std::span<const int32_t> step_toks(&toks[static_cast<size_t>(i) * np], static_cast<size_t>(np));
            if (np == 1) {
              seq.decode(step_toks, opt.depth + i);
            } else {
              seq.step(step_toks, opt.depth + i);
            }
          }
        };
        run_once();  // warm-up
        ForwardProfile prof;
        if (opt.profile) seq.set_profile(&prof);
        // The read bandwidth is probed again between repetitions (these VMs' bandwidth drifts
        // over seconds): each repetition is compared with the higher of the probes just before
        // and just after it.
        double bw_before = bracket ? bracket->measure(kBracketPasses) : 0;
        for (int i = 0; i < opt.reps; ++i) {
          const auto t0 = Clock::now();
          run_once();
          const double s = std::chrono::duration<double>(Clock::now() - t0).count();
          r.tok_s.push_back(static_cast<double>(ng) * np / s);
          if (bracket) {
            const double bw_after = bracket->measure(kBracketPasses);
            r.rep_peak.push_back(std::max(bw_before, bw_after));
            bw_before = bw_after;
          }
        }
        seq.set_profile(nullptr);
        r.profile = prof;
        // Per token: its share of one pass over the weights (one per step for all np streams)
        // plus its own sequence's cached rows.
        const double bytes = static_cast<double>(rep.stream_bytes_per_token) / np +
                             kv_row_bytes * (opt.depth + (ng + 1) / 2.0);
        finish(r, bytes, probe.read_bytes_per_s, "read bandwidth");
      }
    }
  }
  rep.isa = std::string(isa_name(kernels.isa));
  return rep;
}

}  // namespace edgeinfer
