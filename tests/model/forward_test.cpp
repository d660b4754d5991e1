// The forward pass against llama.cpp's reference logits (../shared/data/ref), with exactly the
// acceptance criteria of the engine-foundation issue:
//  - F32 files, F32 KV cache: within 1e-5 relative RMS of *.kvf32.logits.f32;
//  - F32 files, F16 KV cache: within 2x kv_f16_vs_f32_rms_diff of *.logits.f32;
//  - other types: relative RMS from the F32 file's reference <= 1.5 x f32_rms_diff + 1e-3 and
//    top-1 agreement with it >= f32_top1_agreement - 0.06.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "engine/sequence_runner.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "ref_data.h"
#include "util/thread_pool.h"

namespace edgeinfer::test {
namespace {

std::vector<float> batch_logits(const Model& m, const std::vector<int32_t>& tokens, TensorType kv_type,
                                Isa isa = select_isa()) {
  ThreadPool pool(2);
  RunnerOptions ro;
  ro.n_ctx = static_cast<int64_t>(tokens.size());
  ro.n_batch = ro.n_ctx;
  ro.kv_type = kv_type;
  SequenceRunner r(m, kernels_for(isa), pool, ro);
  const float* l = r.eval(tokens, true);
  return std::vector<float>(l, l + tokens.size() * m.config().n_vocab);
}

struct RefCase {
  nlohmann::json j;
  std::unique_ptr<Model> model;
  std::vector<int32_t> tokens;
  size_t n_vocab = 0;
};

RefCase load_case(const std::string& json_path) {
  RefCase c;
  c.j = read_json(json_path);
  c.model = Model::load(data_path(c.j["model"].get<std::string>()));
  c.tokens = c.j["tokens"].get<std::vector<int32_t>>();
  c.n_vocab = c.j["n_vocab"].get<size_t>();
  EXPECT_EQ(static_cast<size_t>(c.model->config().n_vocab), c.n_vocab);
  return c;
}

TEST(Forward, EveryReferenceModelMatchesLlamaCpp) {
  const auto jsons = ref_jsons();
  ASSERT_FALSE(jsons.empty()) << "no reference json files found";
  for (const auto& path : jsons) {
    SCOPED_TRACE(path);
    RefCase c = load_case(path);
    const size_t n = c.tokens.size() * c.n_vocab;
    const std::string ref_dir = data_path("ref") + "/";
    const bool is_f32 = c.j["file_type"] == "F32";

    std::vector<float> ours_f16 = batch_logits(*c.model, c.tokens, TensorType::F16);
    ASSERT_EQ(ours_f16.size(), n);
    const std::vector<float> own_ref = read_f32(ref_dir + c.j["logits_file"].get<std::string>());
    ASSERT_EQ(own_ref.size(), n);
    const double vs_own = rel_rms(ours_f16.data(), own_ref.data(), n);

    if (is_f32) {
      std::vector<float> ours_f32 = batch_logits(*c.model, c.tokens, TensorType::F32);
      const std::vector<float> ref_kv32 = read_f32(ref_dir + c.j["logits_file_kv_f32"].get<std::string>());
      ASSERT_EQ(ref_kv32.size(), n);
      const double d32 = rel_rms(ours_f32.data(), ref_kv32.data(), n);
      const double budget16 = 2.0 * c.j["kv_f16_vs_f32_rms_diff"].get<double>();
      std::printf("[%s] kv f32 vs kvf32 ref: %.3e (<= 1e-5); kv f16 vs ref: %.3e (<= %.3e)\n",
                  c.j["model"].get<std::string>().c_str(), d32, vs_own, budget16);
      EXPECT_LE(d32, 1e-5);
      EXPECT_LE(vs_own, budget16);
    } else {
      const std::string base = c.j["f32_baseline"].get<std::string>();
      const std::vector<float> f32_ref = read_f32(ref_dir + base);
      ASSERT_EQ(f32_ref.size(), n);
      const double d = rel_rms(ours_f16.data(), f32_ref.data(), n);
      const double top1 = top1_agreement(ours_f16.data(), f32_ref.data(), c.tokens.size(), c.n_vocab);
      const double budget = 1.5 * c.j["f32_rms_diff"].get<double>() + 1e-3;
      const double min_top1 = c.j["f32_top1_agreement"].get<double>() - 0.06;
      std::printf("[%s] vs F32 ref: rms %.4e (<= %.4e, llama.cpp %.4e), top1 %.3f (>= %.3f); vs own llama.cpp file: %.3e\n",
                  c.j["model"].get<std::string>().c_str(), d, budget, c.j["f32_rms_diff"].get<double>(), top1,
                  min_top1, vs_own);
      EXPECT_LE(d, budget);
      EXPECT_GE(top1, min_top1);
    }
  }
}

TEST(Forward, Llama3LongContextUsesRopeFrequencyFactors) {
  nlohmann::json j = read_json(data_path("ref/synth-llama3-f32.json"));
  auto model = Model::load(data_path(j["model"].get<std::string>()));
  ASSERT_TRUE(model->weights().rope_freqs);
  const auto& lc = j["long_context"];
  const auto tokens = lc["tokens"].get<std::vector<int32_t>>();
  const int64_t r0 = lc["rows"][0].get<int64_t>(), r1 = lc["rows"][1].get<int64_t>();
  const size_t V = model->config().n_vocab;
  const std::vector<float> ref = read_f32(data_path("ref/" + lc["logits_file"].get<std::string>()));
  ASSERT_EQ(ref.size(), static_cast<size_t>(r1 - r0) * V);
  std::vector<float> ours = batch_logits(*model, tokens, TensorType::F16);
  const double d = rel_rms(ours.data() + r0 * V, ref.data(), ref.size());
  const double budget = 2.0 * lc["kv_f16_vs_f32_rms_diff"].get<double>();
  const double effect = lc["rope_freqs_effect_rms_diff"].get<double>();
  std::printf("[synth-llama3 long context] rms %.3e (<= %.3e; ignoring rope_freqs would give %.3e)\n", d, budget,
              effect);
  EXPECT_LE(d, budget);
  EXPECT_LT(budget, effect / 10);  // the test is tight enough to prove the factors are applied
  const auto argmax_ref = lc["argmax"].get<std::vector<int>>();
  int agree = 0;
  for (int64_t r = r0; r < r1; ++r) agree += argmax(ours.data() + r * V, V) == argmax_ref[r - r0];
  EXPECT_GE(agree, static_cast<int>(argmax_ref.size()) - 1);
}

TEST(Forward, IncrementalDecodingMatchesBatch) {
  auto model = Model::load(data_path("models/synth-llama-f32.gguf"));
  nlohmann::json j = read_json(data_path("ref/synth-llama-f32.json"));
  const auto tokens = j["tokens"].get<std::vector<int32_t>>();
  const size_t V = model->config().n_vocab;
  std::vector<float> batch = batch_logits(*model, tokens, TensorType::F32);

  ThreadPool pool(2);
  RunnerOptions ro;
  ro.n_ctx = static_cast<int64_t>(tokens.size());
  ro.kv_type = TensorType::F32;
  SequenceRunner r(*model, kernels_for(select_isa()), pool, ro);
  std::vector<float> inc;
  for (int32_t t : tokens) {
    const float* l = r.eval(std::span<const int32_t>(&t, 1));
    inc.insert(inc.end(), l, l + V);
  }
  EXPECT_LE(rel_rms(inc.data(), batch.data(), batch.size()), 1e-5);
}

// The scalar reference path end to end against the selected SIMD path. Where activations are
// quantized (Q8_0 weights), a last-bit difference anywhere (an f16 dot summed in double by the
// reference, in f32 lanes by SIMD) can move a value across a rounding step of the int8
// activations, and a few such flips move the logits ~1e-2 (as an F16 instead of an F32 cache
// does on this model): the Q8_0 model is compared with an F32 cache, where the two paths round
// alike (measured 7e-8), and an F16 cache is compared on the F32 model (measured 2e-5).
TEST(Forward, ScalarPathMatchesSelectedPath) {
  for (auto [name, kv, budget] : {std::tuple{"synth-llama-q8_0", TensorType::F32, 1e-5},
                                  std::tuple{"synth-llama-f32", TensorType::F16, 1e-4}}) {
    auto model = Model::load(data_path(std::string("models/") + name + ".gguf"));
    nlohmann::json j = read_json(data_path(std::string("ref/") + name + ".json"));
    const auto tokens = j["tokens"].get<std::vector<int32_t>>();
    std::vector<float> best = batch_logits(*model, tokens, kv);
    std::vector<float> scalar = batch_logits(*model, tokens, kv, Isa::Scalar);
    EXPECT_LE(rel_rms(best.data(), scalar.data(), best.size()), budget) << name;
  }
}

}  // namespace
}  // namespace edgeinfer::test
