// Model quantization against the shared llama-quantize outputs (../shared/data/models):
//  - the type chosen for every tensor equals the reference file's (mixes included);
//  - the tensor bytes equal the reference file's (our reference quantizers are bit-exact);
//  - our forward pass on our file is as far from the F32 reference logits as llama.cpp's own file
//    is (f32_rms_diff), within 1.1x.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "gguf/gguf_file.h"
#include "model/model.h"
#include "quant/quantize_model.h"
#include "tools_test_util.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::test {
namespace {

struct TypeCase {
  const char* target;  // our target name
  const char* stem;    // shared file stem
};

constexpr TypeCase kSynthLlamaCases[] = {
    {"f16", "synth-llama-f16"},       {"q8_0", "synth-llama-q8_0"},     {"q6_k", "synth-llama-q6_k"},
    {"q5_k_m", "synth-llama-q5_k_m"}, {"q5_1", "synth-llama-q5_1"},     {"q5_0", "synth-llama-q5_0"},
    {"q4_k_m", "synth-llama-q4_k_m"}, {"q4_1", "synth-llama-q4_1"},     {"q4_0", "synth-llama-q4_0"},
    {"q3_k_m", "synth-llama-q3_k_m"}, {"q2_k", "synth-llama-q2_k"},
};

std::map<std::string, const GgufTensorInfo*> by_name(const GgufFile& f) {
  std::map<std::string, const GgufTensorInfo*> m;
  for (const auto& t : f.tensors()) m[t.name] = &t;
  return m;
}

TEST(QuantizeModel, SynthLlamaEveryTypeMatchesLlamaQuantize) {
  const std::string f32_path = data_file("models/synth-llama-f32.gguf");
  const nlohmann::json f32_ref = read_json_file(data_file("ref/synth-llama-f32.json"));
  const std::vector<int32_t> tokens = f32_ref["tokens"].get<std::vector<int32_t>>();
  const std::vector<float> f32_logits = read_f32_file(data_file("ref/synth-llama-f32.logits.f32"));
  ThreadPool pool(1);
  for (const TypeCase& tc : kSynthLlamaCases) {
    SCOPED_TRACE(tc.target);
    const std::string ref_path = data_file(std::string("models/") + tc.stem + ".gguf");
    const nlohmann::json ref_json = read_json_file(data_file(std::string("ref/") + tc.stem + ".json"));
    const std::string out = temp_path(std::string(tc.stem) + ".gguf");
    const QuantizeReport rep = quantize_model(f32_path, out, parse_quant_target(tc.target), pool);

    GgufFile ours = GgufFile::open(out);
    GgufFile ref = GgufFile::open(ref_path);
    ASSERT_EQ(ours.tensors().size(), ref.tensors().size());
    const auto ref_tensors = by_name(ref);
    int same_bytes = 0;
    for (const auto& t : ours.tensors()) {
      auto it = ref_tensors.find(t.name);
      ASSERT_NE(it, ref_tensors.end()) << t.name;
      EXPECT_EQ(tensor_type_name(t.type), tensor_type_name(it->second->type)) << t.name;
      EXPECT_EQ(t.ne, it->second->ne) << t.name;
      if (t.n_bytes == it->second->n_bytes && std::memcmp(t.data, it->second->data, t.n_bytes) == 0) ++same_bytes;
    }
    EXPECT_EQ(same_bytes, static_cast<int>(ours.tensors().size())) << "tensors whose bytes differ from llama-quantize's";
    EXPECT_EQ(ours.get_int("general.file_type"), ref.get_int("general.file_type"));
    const bool file_identical = read_bytes(out) == read_bytes(ref_path);

    auto model = Model::load(out);
    const std::vector<float> logits = batch_logits(*model, tokens);
    ASSERT_EQ(logits.size(), f32_logits.size());
    const double rms = rel_rms_diff(logits.data(), f32_logits.data(), logits.size());
    const double ref_rms = ref_json["f32_rms_diff"].get<double>();
    std::printf("[quantize %-6s] f32_rms_diff ours %.3e, llama.cpp file %.3e (ratio %.3f); tensors identical %d/%zu; "
                "file identical: %s; %.2f MiB\n",
                tc.target, rms, ref_rms, rms / ref_rms, same_bytes, ours.tensors().size(),
                file_identical ? "yes" : "no", rep.out_file_bytes / 1048576.0);
    EXPECT_LE(rms, 1.1 * ref_rms);
    std::remove(out.c_str());
  }
}

// The planner alone against other shared files: tied embeddings (qwen2), MQA with rope_freqs.
TEST(QuantizeModel, PlanMatchesOtherReferenceFiles) {
  const std::pair<const char*, const char*> cases[] = {
      {"synth-qwen2-f32", "synth-qwen2-q4_k_m"},
      {"synth-qwen2-f32", "synth-qwen2-q8_0"},
      {"synth-llama3-f32", "synth-llama3-q8_0"},
  };
  for (const auto& [src, dst] : cases) {
    SCOPED_TRACE(dst);
    GgufFile in = GgufFile::open(data_file(std::string("models/") + src + ".gguf"));
    GgufFile ref = GgufFile::open(data_file(std::string("models/") + dst + ".gguf"));
    const QuantTarget target = parse_quant_target(std::string(dst).substr(std::string(dst).rfind('-') + 1));
    const auto descs = tensor_descs(in);
    const auto plan = plan_tensor_types(descs, quant_model_info(in), target);
    const auto ref_tensors = by_name(ref);
    for (size_t i = 0; i < descs.size(); ++i) {
      auto it = ref_tensors.find(descs[i].name);
      ASSERT_NE(it, ref_tensors.end()) << descs[i].name;
      EXPECT_EQ(tensor_type_name(plan[i].type), tensor_type_name(it->second->type)) << descs[i].name;
    }
    // Written in the reference's order too.
    const auto order = quantization_order(descs);
    ASSERT_EQ(order.size(), ref.tensors().size());
    for (size_t k = 0; k < order.size(); ++k) EXPECT_EQ(descs[order[k]].name, ref.tensors()[k].name);
  }
}

TEST(QuantizeModel, KQuantFallbackForRowsNotMultipleOf256) {
  // Qwen2.5-0.5B-like shapes: rows of 896 elements cannot hold 256-blocks.
  std::vector<TensorDesc> t = {
      {"token_embd.weight", {896, 1000}, TensorType::F32},
      {"blk.0.attn_q.weight", {896, 896}, TensorType::F32},
      {"blk.0.attn_v.weight", {896, 128}, TensorType::F32},
      {"blk.0.ffn_down.weight", {4864, 896}, TensorType::F32},
      {"blk.0.ffn_up.weight", {896, 4864}, TensorType::F32},
      {"blk.0.attn_norm.weight", {896}, TensorType::F32},
      {"blk.0.attn_q.bias", {896}, TensorType::F32},
      {"blk.0.odd.weight", {100, 3}, TensorType::F32},
  };
  QuantModelInfo info{"qwen2", 1, 14, 2};
  auto plan = plan_tensor_types(t, info, parse_quant_target("q4_k_m"));
  EXPECT_EQ(plan[0].type, TensorType::Q8_0);  // tied output, 896 % 256 != 0
  EXPECT_EQ(plan[1].type, TensorType::Q5_0);  // Q4_K -> Q5_0
  EXPECT_FALSE(plan[1].note.empty());
  EXPECT_EQ(plan[2].type, TensorType::Q8_0);  // use_more_bits -> Q6_K -> Q8_0
  EXPECT_EQ(plan[3].type, TensorType::Q6_K);  // 4864 = 19 * 256
  EXPECT_EQ(plan[4].type, TensorType::Q5_0);
  EXPECT_EQ(plan[5].type, TensorType::F32);
  EXPECT_FALSE(plan[5].converted);
  EXPECT_EQ(plan[6].type, TensorType::F32);
  EXPECT_EQ(plan[7].type, TensorType::F16);  // 100 fits no block
  plan = plan_tensor_types(t, info, parse_quant_target("q3_k_s"));
  EXPECT_EQ(plan[1].type, TensorType::Q4_0);  // Q3_K -> Q4_0 (the reference uses IQ4_NL)
  plan = plan_tensor_types(t, info, parse_quant_target("q4_k_m"), /*pure=*/true);
  EXPECT_EQ(plan[0].type, TensorType::Q5_0);  // pure: no Q6_K/Q8_0 output rule, only the fallback
  EXPECT_EQ(plan[3].type, TensorType::Q4_K);
}

TEST(QuantizeModel, TargetNames) {
  EXPECT_EQ(parse_quant_target("Q4_K_M").file_type, FileType::MostlyQ4_K_M);
  EXPECT_EQ(parse_quant_target("q4_k").file_type, FileType::MostlyQ4_K_M);
  EXPECT_EQ(parse_quant_target("BF16").base, TensorType::BF16);
  EXPECT_THROW(parse_quant_target("q7_0"), Error);
  EXPECT_EQ(quant_target_for_file_type(FileType::MostlyQ5_K_M)->name, "q5_k_m");
}

TEST(QuantizeModel, Bf16AndOtherMixesLoadAndRun) {
  const std::string f32_path = data_file("models/synth-llama-f32.gguf");
  const std::vector<float> f32_logits = read_f32_file(data_file("ref/synth-llama-f32.logits.f32"));
  const std::vector<int32_t> tokens =
      read_json_file(data_file("ref/synth-llama-f32.json"))["tokens"].get<std::vector<int32_t>>();
  ThreadPool pool(1);
  for (const char* target : {"bf16", "q4_k_s", "q3_k_l"}) {
    SCOPED_TRACE(target);
    const std::string out = temp_path(std::string("synth-llama-") + target + ".gguf");
    quantize_model(f32_path, out, parse_quant_target(target), pool, QuantizeOptions{});
    auto model = Model::load(out);
    const std::vector<float> logits = batch_logits(*model, tokens);
    const double rms = rel_rms_diff(logits.data(), f32_logits.data(), logits.size());
    std::printf("[quantize %-6s] f32_rms_diff %.3e\n", target, rms);
    EXPECT_LT(rms, std::string(target) == "bf16" ? 0.02 : 0.45);
    std::remove(out.c_str());
  }
}

TEST(QuantizeModel, RefusesToRequantize) {
  ThreadPool pool(1);
  const std::string out = temp_path("requant.gguf");
  EXPECT_THROW(quantize_model(data_file("models/synth-llama-q8_0.gguf"), out, parse_quant_target("q4_0"), pool), Error);
}

}  // namespace
}  // namespace edgeinfer::test
