// Bench and machine probes: sane, positive figures on a small model; statistics helpers.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "engine/bench.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "tools_test_util.h"
#include "util/error.h"
#include "util/probes.h"
#include "util/thread_pool.h"

namespace edgeinfer::test {
namespace {

TEST(Probes, GivePlausibleFigures) {
  ThreadPool pool(1);
  ProbeOptions po;
  po.read_bytes = size_t{64} << 20;
  po.read_passes = 3;
  po.compute_seconds = 0.01;
  const ProbeResult r = run_probes(pool, po);
  std::printf("[probes 1 thread, %s] read %.1f GB/s, int8 %.1f Gop/s, fp32 fma %.1f GFLOP/s\n", r.isa.c_str(),
              r.read_bytes_per_s / 1e9, r.int8_ops_per_s / 1e9, r.fma_flops / 1e9);
  // Any machine this runs on streams more than 0.5 GB/s and less than 2 TB/s from one thread...
  EXPECT_GT(r.read_bytes_per_s, 0.5e9);
  EXPECT_LT(r.read_bytes_per_s, 2e12);
  // ...and one core does between 1 and 10,000 G ops/s.
  EXPECT_GT(r.int8_ops_per_s, 1e9);
  EXPECT_LT(r.int8_ops_per_s, 1e13);
  EXPECT_GT(r.fma_flops, 1e9);
  EXPECT_LT(r.fma_flops, 1e13);
}

TEST(Probes, ReadProbeCanBeTakenAgain) {
  ThreadPool pool(2);
  ReadProbe probe(pool, size_t{16} << 20);
  for (int i = 0; i < 3; ++i) {
    const double bw = probe.measure(2);
    EXPECT_GT(bw, 0.5e9);
    EXPECT_LT(bw, 2e12);
  }
}

TEST(Bench, RunsPpAndTgOnSynthLlama) {
  auto model = Model::load(data_file("models/synth-llama-q4_0.gguf"));
  BenchOptions bo;
  bo.n_prompt = {32};
  bo.n_gen = {8};
  bo.threads = {1};
  bo.reps = 3;
  bo.profile = true;
  bo.probe_options.read_bytes = size_t{32} << 20;
  bo.probe_options.compute_seconds = 0.01;
  int calls = 0;
  const BenchReport rep =
      run_bench(*model, "synth-llama-q4_0", kernels_for(select_isa()), bo, [&](const BenchResult&) { ++calls; });
  EXPECT_EQ(calls, 2);
  ASSERT_EQ(rep.results.size(), 2u);
  ASSERT_EQ(rep.probes.size(), 1u);
  EXPECT_EQ(rep.model_type, "q4_0");
  EXPECT_GT(rep.stream_bytes_per_token, 1000000u);
  EXPECT_LT(rep.stream_bytes_per_token, model->weight_bytes());
  for (const BenchResult& r : rep.results) {
    SCOPED_TRACE(r.test);
    std::printf("[bench] %s t=%d: %.1f ± %.1f tok/s, roofline %.1f%% of %s\n", r.test.c_str(), r.threads, r.median,
                r.stddev, 100 * r.roofline, r.basis.c_str());
    ASSERT_EQ(r.tok_s.size(), 3u);
    EXPECT_GT(r.median, 1.0);
    EXPECT_GT(r.roofline, 0.0);
    EXPECT_EQ(r.basis, r.test[0] == 't' ? "read bandwidth" : "int8 peak");
    // One peak beside every repetition (bandwidth for tg, int8 ops for pp); the figure is the
    // median of the repetitions' own ratios.
    ASSERT_EQ(r.rep_peak.size(), 3u);
    std::vector<double> ratios;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_GT(r.rep_peak[i], r.test[0] == 't' ? 0.5e9 : 1e9);
      ratios.push_back(r.achieved / r.median * r.tok_s[i] / r.rep_peak[i]);
    }
    EXPECT_DOUBLE_EQ(r.roofline, median_of(ratios));
    EXPECT_DOUBLE_EQ(r.peak, median_of(r.rep_peak));
    // Every timed forward call was profiled, and the ops account for the time.
    EXPECT_EQ(r.profile.forward_calls, r.test[0] == 't' ? 3u * 8u : 3u);
    EXPECT_GT(r.profile.total(), 0.0);
    EXPECT_GT(r.profile.seconds[static_cast<int>(FwdOp::GateUp)], 0.0);
    // Each matmul op's rate: weights streamed per forward call (tg), or ops of n_prompt tokens
    // through the layers and one row through the output matrix (pp); no rate for other ops.
    const auto rates = profile_rates(r, rep.op_work);
    const double n_calls = static_cast<double>(r.profile.forward_calls);
    for (FwdOp op : {FwdOp::Qkv, FwdOp::AttnOut, FwdOp::GateUp, FwdOp::Down, FwdOp::Output}) {
      const size_t i = static_cast<size_t>(op);
      const OpWork& w = rep.op_work[i];
      const double rows = r.n_prompt == 0 ? 0.0 : op == FwdOp::Output ? 1.0 : static_cast<double>(r.n_prompt);
      EXPECT_DOUBLE_EQ(rates[i], (r.n_prompt > 0 ? w.ops * rows : w.bytes) * n_calls / r.profile.seconds[i]) << i;
    }
    EXPECT_EQ(rates[static_cast<size_t>(FwdOp::Attention)], 0.0);
    EXPECT_EQ(rates[static_cast<size_t>(FwdOp::AttnNorm)], 0.0);
  }
  // The pp roofline's work per token: every token through the layer matrices, one (the last,
  // whose logits the engine computes) through the output matrix, plus causal attention.
  const BenchResult& pp = rep.results[0];
  ASSERT_EQ(pp.test, "pp32");
  const ModelConfig& c = model->config();
  const double out_ops = rep.op_work[static_cast<size_t>(FwdOp::Output)].ops;
  const double attn_ops = 4.0 * static_cast<double>(c.q_dim()) * static_cast<double>(c.n_layer) * (32 + 1) / 2.0;
  EXPECT_NEAR(pp.achieved / pp.median, rep.matmul_ops_per_token - out_ops + out_ops / 32 + attn_ops,
              1e-9 * rep.matmul_ops_per_token);
}

TEST(Bench, MatmulWorkByOpAddsUpToTheModelsTotals) {
  auto model = Model::load(data_file("models/synth-llama-q4_0.gguf"));
  const OpWorkTable w = matmul_work_by_op(*model);
  double bytes = 0, ops = 0;
  for (const OpWork& x : w) {
    bytes += x.bytes;
    ops += x.ops;
  }
  EXPECT_DOUBLE_EQ(bytes, static_cast<double>(decode_stream_bytes(*model)));
  EXPECT_DOUBLE_EQ(ops, matmul_ops_per_token(*model));
  const ModelConfig& c = model->config();
  const double E = static_cast<double>(c.n_embd), L = static_cast<double>(c.n_layer);
  EXPECT_DOUBLE_EQ(w[static_cast<size_t>(FwdOp::Output)].ops, 2.0 * static_cast<double>(c.n_vocab) * E);
  EXPECT_DOUBLE_EQ(w[static_cast<size_t>(FwdOp::Qkv)].ops,
                   2.0 * L * E * static_cast<double>(c.q_dim() + 2 * c.kv_dim()));
  EXPECT_DOUBLE_EQ(w[static_cast<size_t>(FwdOp::GateUp)].ops, 2.0 * L * E * 2.0 * static_cast<double>(c.n_ff));
  EXPECT_DOUBLE_EQ(w[static_cast<size_t>(FwdOp::Attention)].ops, 0.0);
}

TEST(Bench, GenerationAtDepthWithParallelStreams) {
  auto model = Model::load(data_file("models/synth-llama-q4_0.gguf"));
  BenchOptions bo;
  bo.n_prompt = {0};
  bo.n_gen = {4};
  bo.threads = {2};
  bo.parallel = {1, 3};
  bo.depth = 37;  // not a whole number of 16-slot blocks
  bo.reps = 2;
  bo.profile = true;
  bo.probes = false;
  const BenchReport rep = run_bench(*model, "synth-llama-q4_0", kernels_for(select_isa()), bo);
  ASSERT_EQ(rep.results.size(), 2u);
  EXPECT_EQ(rep.results[0].test, "tg4@d37");
  EXPECT_EQ(rep.results[1].test, "tg4@d37 x3");
  for (const BenchResult& r : rep.results) {
    SCOPED_TRACE(r.test);
    EXPECT_EQ(r.depth, 37);
    ASSERT_EQ(r.tok_s.size(), 2u);
    EXPECT_GT(r.median, 1.0);
    EXPECT_EQ(r.profile.forward_calls, 2u * 4u);  // one batched forward per step, whatever the streams
    EXPECT_GT(r.profile.seconds[static_cast<int>(FwdOp::Attention)], 0.0);
  }
  EXPECT_EQ(rep.results[1].parallel, 3);
  bo.parallel = {0};
  EXPECT_THROW(run_bench(*model, "m", kernels_for(select_isa()), bo), Error);
  bo.parallel = {1};
  bo.depth = -1;
  EXPECT_THROW(run_bench(*model, "m", kernels_for(select_isa()), bo), Error);
  // A negative length is an error, not a skipped test (0 skips).
  bo.depth = 0;
  bo.n_gen = {4, -1};
  EXPECT_THROW(run_bench(*model, "m", kernels_for(select_isa()), bo), Error);
  bo.n_gen = {0};
  bo.n_prompt = {-5};
  EXPECT_THROW(run_bench(*model, "m", kernels_for(select_isa()), bo), Error);
}

TEST(Bench, Statistics) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(stddev_of({1, 1, 1}), 0.0);
  EXPECT_NEAR(stddev_of({1, 2, 3, 4}), 1.2909944, 1e-6);
  EXPECT_DOUBLE_EQ(stddev_of({5}), 0.0);
}

}  // namespace
}  // namespace edgeinfer::test
