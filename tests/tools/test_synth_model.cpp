// Random-weight models: the `small` preset written in a few types loads and runs; the file is a
// pure function of the seed (not of the thread count); shapes and type plans of the big presets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "model/synth_model.h"
#include "quant/quantize_model.h"
#include "tokenizer/tokenizer.h"
#include "tools_test_util.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::test {
namespace {

const std::vector<int32_t> kTokens = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426};

TEST(SynthModel, SmallPresetLoadsAndRuns) {
  ThreadPool pool(2);
  for (const char* type : {"f32", "q4_0", "q4_k_m"}) {
    SCOPED_TRACE(type);
    const std::string out = temp_path(std::string("synth-small-") + type + ".gguf");
    SynthOptions so;
    so.preset = "small";
    so.type = type;
    so.seed = 7;
    const SynthReport rep = write_synth_model(out, so, pool);
    EXPECT_EQ(rep.n_vocab, 512);
    EXPECT_EQ(rep.n_params, 3279104);  // same shapes as the shared synth-llama
    auto model = Model::load(out);
    const ModelConfig& c = model->config();
    EXPECT_EQ(c.n_embd, 256);
    EXPECT_EQ(c.n_layer, 4);
    EXPECT_EQ(c.n_head, 8);
    EXPECT_EQ(c.n_head_kv, 2);
    EXPECT_EQ(c.n_ff, 768);
    EXPECT_EQ(c.n_vocab, 512);
    // The stories260K vocabulary was copied verbatim.
    GgufFile voc = GgufFile::open(data_file("models/stories260K.gguf"));
    EXPECT_EQ(model->gguf().get("tokenizer.ggml.tokens"), voc.get("tokenizer.ggml.tokens"));
    EXPECT_EQ(model->gguf().get("tokenizer.ggml.scores"), voc.get("tokenizer.ggml.scores"));

    const std::vector<float> logits = batch_logits(*model, kTokens);
    double ss = 0;
    bool finite = true;
    for (float v : logits) {
      finite = finite && std::isfinite(v);
      ss += static_cast<double>(v) * v;
    }
    const double rms = std::sqrt(ss / static_cast<double>(logits.size()));
    std::printf("[synth small %-6s] %.2f MiB, logit RMS %.3f\n", type, rep.file_bytes / 1048576.0, rms);
    EXPECT_TRUE(finite);
    // Like the shared synth-llama (typical logit RMS 1.0): the draws have the right scale.
    EXPECT_GT(rms, 0.3);
    EXPECT_LT(rms, 3.0);

    // Types follow the quantize planner (e.g. output.weight Q6_K in the mixes).
    std::map<std::string, TensorType> types;
    for (const auto& t : model->gguf().tensors()) types[t.name] = t.type;
    if (std::string(type) != "f32") {
      EXPECT_EQ(types["output.weight"], TensorType::Q6_K);
    }
    EXPECT_EQ(types["blk.0.attn_norm.weight"], TensorType::F32);
    std::remove(out.c_str());
  }
}

TEST(SynthModel, SameSeedSameBytesOnAnyThreadCount) {
  SynthOptions so;
  so.preset = "small";
  so.type = "q8_0";
  so.seed = 99;
  const std::string a = temp_path("synth-a.gguf"), b = temp_path("synth-b.gguf"), c = temp_path("synth-c.gguf");
  {
    ThreadPool p1(1);
    write_synth_model(a, so, p1);
  }
  {
    ThreadPool p2(2);
    write_synth_model(b, so, p2);
    so.seed = 100;
    write_synth_model(c, so, p2);
  }
  const auto ba = read_bytes(a), bb = read_bytes(b), bc = read_bytes(c);
  EXPECT_EQ(ba, bb);
  EXPECT_NE(ba, bc);
  for (const auto& p : {a, b, c}) std::remove(p.c_str());
}

TEST(SynthModel, WeightStatisticsFollowTheRecipe) {
  ThreadPool pool(2);
  const std::string out = temp_path("synth-stats.gguf");
  SynthOptions so;
  so.preset = "small";
  so.type = "f32";
  write_synth_model(out, so, pool);
  GgufFile f = GgufFile::open(out);
  auto stats = [&](const char* name) {
    const GgufTensorInfo* t = f.find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    const auto* v = reinterpret_cast<const float*>(t->data);
    const int64_t n = t->n_elements();
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      s += v[i];
      s2 += static_cast<double>(v[i]) * v[i];
    }
    const double mean = s / n;
    return std::pair<double, double>(mean, std::sqrt(s2 / n - mean * mean));
  };
  auto [m_e, sd_e] = stats("token_embd.weight");
  EXPECT_NEAR(m_e, 0.0, 0.01);
  EXPECT_NEAR(sd_e, 1.0, 0.01);
  auto [m_q, sd_q] = stats("blk.1.attn_q.weight");
  EXPECT_NEAR(sd_q, 1.0 / 16.0, 0.002);  // 1/sqrt(256)
  auto [m_d, sd_d] = stats("blk.2.ffn_down.weight");
  EXPECT_NEAR(sd_d, 1.0 / std::sqrt(768.0), 0.002);
  auto [m_n, sd_n] = stats("blk.0.ffn_norm.weight");
  EXPECT_NEAR(m_n, 1.0, 0.02);
  EXPECT_NEAR(sd_n, 0.1, 0.02);
  std::remove(out.c_str());
}

TEST(SynthModel, PresetShapesAndPlans) {
  const SynthPreset& tiny = synth_preset("tiny1b");
  const auto descs = synth_tensor_descs(tiny, 32000);
  int64_t params = 0;
  for (const auto& d : descs) {
    int64_t n = 1;
    for (int64_t x : d.ne) n *= x;
    params += n;
  }
  EXPECT_EQ(params, 1100048384);  // TinyLlama-1.1B
  const auto plan = plan_tensor_types(descs, QuantModelInfo{"llama", 22, 32, 4}, parse_quant_target("q4_k_m"));
  std::map<TensorType, int> counts;
  for (const auto& p : plan) counts[p.type] += 1;
  // 22 layers: use_more_bits picks layers 0, 1, 4, 7, 10, 13, 16, 19, 20, 21 for attn_v and ffn_down.
  EXPECT_EQ(counts[TensorType::Q6_K], 1 + 10 + 10);
  EXPECT_EQ(counts[TensorType::F32], 22 * 2 + 1);

  const SynthPreset& qwen = synth_preset("qwen2.5-0.5b");
  const auto qd = synth_tensor_descs(qwen, qwen.n_vocab);
  int64_t qparams = 0;
  for (const auto& d : qd) {
    int64_t n = 1;
    for (int64_t x : d.ne) n *= x;
    qparams += n;
  }
  EXPECT_EQ(qparams, 494032768);  // Qwen2.5-0.5B
  const auto& l3 = synth_preset("llama3-1b");
  const auto ld = synth_tensor_descs(l3, l3.n_vocab);
  int64_t lparams = 0;
  for (const auto& d : ld) {
    int64_t n = 1;
    for (int64_t x : d.ne) n *= x;
    lparams += n;
  }
  EXPECT_EQ(lparams, 1235814432);  // Llama-3.2-1B (tied), + 32 rope factors
  EXPECT_THROW(synth_preset("gpt5"), Error);
}

TEST(SynthModel, Llama3RopeFactorsAsTheReferenceConverter) {
  // README: synth-llama3's rope_freqs (factor 8, theta 500000, head_dim 64).
  const std::vector<float> f = llama3_rope_factors(64, 500000.0f, 8.0f);
  ASSERT_EQ(f.size(), 32u);
  for (int i = 0; i <= 14; ++i) EXPECT_FLOAT_EQ(f[i], 1.0f) << i;
  EXPECT_NEAR(f[15], 1.5534146f, 1e-5);
  EXPECT_NEAR(f[16], 2.69453f, 1e-5);
  EXPECT_NEAR(f[17], 5.2573266f, 1e-5);
  for (int i = 18; i < 32; ++i) EXPECT_FLOAT_EQ(f[i], 8.0f) << i;
  // And equal to the tensor in the shared file.
  GgufFile g = GgufFile::open(data_file("models/synth-llama3-f32.gguf"));
  const GgufTensorInfo* t = g.find_tensor("rope_freqs.weight");
  ASSERT_NE(t, nullptr);
  const auto* v = reinterpret_cast<const float*>(t->data);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(f[i], v[i], 1e-6f * v[i]) << i;
}

TEST(SynthModel, StandInVocabularyTokenizes) {
  for (const char* arch : {"llama", "qwen2"}) {
    SCOPED_TRACE(arch);
    GgufWriter w;
    w.add_string("general.architecture", arch);
    add_standin_vocab(w, arch, 4000);
    const std::vector<uint8_t> bytes = w.write_to_memory();
    GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "standin.gguf");
    EXPECT_EQ(f.get("tokenizer.ggml.tokens").array_size(), 4000u);
    const Tokenizer tok = Tokenizer::from_gguf(f);
    EXPECT_EQ(tok.n_vocab(), 4000);
    const std::string text = "Hello world, \xc3\xa9t\xc3\xa9 42!\n";
    const std::vector<int32_t> ids = tok.encode(text, /*add_special=*/false);
    EXPECT_LT(ids.size(), text.size());  // the letter-pair merges apply
    EXPECT_EQ(tok.decode(ids), text);
  }
  // The full-size vocabularies put the family's special tokens at their real ids.
  GgufWriter w;
  add_standin_vocab(w, "qwen2", 151936);
  const std::vector<uint8_t> bytes = w.write_to_memory();
  GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "qwen-standin.gguf");
  const auto& toks = f.get("tokenizer.ggml.tokens").as_string_array();
  ASSERT_EQ(toks.size(), 151936u);
  EXPECT_EQ(toks[151644], "<|im_start|>");
  EXPECT_EQ(toks[151645], "<|im_end|>");
  EXPECT_EQ(f.get_int("tokenizer.ggml.eos_token_id"), 151645);
}

TEST(SynthModel, MissingVocabularyIsAnError) {
  ThreadPool pool(1);
  SynthOptions so;
  so.preset = "small";
  so.vocab_from = "/nonexistent/vocab.gguf";
  EXPECT_THROW(write_synth_model(temp_path("never.gguf"), so, pool), Error);
  so.vocab_from.clear();
  so.type = "q9_9";
  EXPECT_THROW(write_synth_model(temp_path("never.gguf"), so, pool), Error);
}

}  // namespace
}  // namespace edgeinfer::test
