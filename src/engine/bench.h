#pragma once
// `edgeinfer bench`: prompt processing and generation speed with llama-bench's meaning, plus the
// machine probes (util/probes.h) measured in the same run, so each figure comes with its roofline
// ratio.
//   ppN: one batch of N random tokens decoded from an empty KV cache; tok/s = N / time.
//   tgN: N random tokens decoded one at a time from an empty cache; tok/s = N / time.
//   tgN@dD: the same after D random prompt tokens (prefilled once, untimed), i.e. decoding at
//     depth D, where attention reads D cached rows per token.
//   tgN xP (tgN@dD xP): P sequences decoding together, one batched forward per step (each
//     sequence its own cache, of depth D); tok/s = P · N / time, all streams together.
//   tgN@dD xP shared: the same with the depth prompt's whole blocks shared by the P sequences, as
//     the prefix cache shares a common system prompt (BenchOptions::shared_depth).
// Each test runs once as a warm-up, then `reps` times; the figure is the median ± the sample
// standard deviation of the repetitions.
// Roofline: generation against memory bandwidth (bytes the weights and KV cache stream per token ×
// tok/s ÷ probed read bandwidth; the bandwidth is probed again beside every repetition, and the
// figure is the median of the repetitions' own ratios), prompt processing against compute (matmul + attention ops per
// token × tok/s ÷ the probed int8 dot-product peak for quantized weights, the FP32 FMA peak for
// float weights). A prompt's matmul ops count every token through the layers but one row through
// the output matrix: the engine computes only the last token's logits.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "model/forward_profile.h"
#include "model/model.h"
#include "quant/tensor_type.h"
#include "util/probes.h"

namespace edgeinfer {

struct BenchOptions {
  std::vector<int> n_prompt = {512};  // 0 entries are skipped; a negative one is an Error
  std::vector<int> n_gen = {128};
  std::vector<int> threads = {1};
  std::vector<int> parallel = {1};  // sequences decoding together in the tg tests
  int depth = 0;                    // prompt tokens in each sequence's cache before a tg test
  bool shared_depth = false;        // parallel sequences share the depth prompt's blocks
  int reps = 5;
  TensorType kv_type = TensorType::F16;
  bool probes = true;
  bool profile = false;  // per-op time breakdown of the timed repetitions
  uint64_t seed = 1234;
  ProbeOptions probe_options;
};

struct BenchResult {
  std::string test;  // "pp512", "tg128", "tg128@d1024", "tg128@d1024 x8"
  int n_prompt = 0;
  int n_gen = 0;
  int parallel = 1;
  int depth = 0;
  int threads = 0;
  std::vector<double> tok_s;  // one per repetition (all parallel streams together)
  double median = 0;
  double mean = 0;
  double stddev = 0;
  // Roofline: achieved / peak, and what was compared (0 when probes are off).
  double achieved = 0;   // bytes/s (tg) or ops/s (pp) at the median speed
  double peak = 0;
  double roofline = 0;
  std::string basis;     // "read bandwidth", "int8 peak", "fp32 fma peak"
  // With probes, the peak beside each repetition (the higher of the probes just before and
  // after it): read bandwidth for generation, int8 or FP32 FMA peak for prompt processing.
  // roofline is then the median of the repetitions' own ratios and peak the median of these.
  std::vector<double> rep_peak;
  ForwardProfile profile;  // filled with BenchOptions::profile
};

// One matmul op's weights (FwdOp Qkv, AttnOut, GateUp, Down, Output; zero for the other ops):
// the bytes a decode step streams through it and its ops per token (2 · weights).
struct OpWork {
  double bytes = 0;
  double ops = 0;
};
using OpWorkTable = std::array<OpWork, static_cast<size_t>(FwdOp::Count)>;

struct BenchReport {
  std::string model_path;
  std::string model_type;  // e.g. "q4_0" (most common matmul weight type)
  int64_t n_params = 0;
  uint64_t model_bytes = 0;
  uint64_t stream_bytes_per_token = 0;  // weights read per generated token (matmuls)
  double matmul_ops_per_token = 0;      // 2 · weights in matmuls (a generated token's)
  OpWorkTable op_work{};                // the same two, op by op
  std::string isa;
  std::vector<ProbeResult> probes;  // one per thread count
  std::vector<BenchResult> results;
};

// Bytes of matmul weights one decode step streams (every layer matrix + the output matrix).
uint64_t decode_stream_bytes(const Model& m);
// 2 · (number of matmul weights): ops per token of the matmuls.
double matmul_ops_per_token(const Model& m);
// decode_stream_bytes and matmul_ops_per_token split by forward-pass op.
OpWorkTable matmul_work_by_op(const Model& m);
// Each op's rate over a result's profiled forward calls, 0 where the op has no matmul work or
// took no time: for a generation test bytes/s of weights (every forward call streams each
// matrix once, whatever the parallel streams), for a prompt test ops/s (n_prompt tokens per call
// through the layer matrices, one row through the output matrix).
std::array<double, static_cast<size_t>(FwdOp::Count)> profile_rates(const BenchResult& r, const OpWorkTable& w);
// Median and sample standard deviation.
double median_of(std::vector<double> v);
double stddev_of(const std::vector<double>& v);

// Runs every (test, thread count). `on_result` is called as each finishes (progress output).
BenchReport run_bench(const Model& model, const std::string& model_path, const Kernels& kernels,
                      const BenchOptions& opt, const std::function<void(const BenchResult&)>& on_result = {});

}  // namespace edgeinfer
