// Model validation: a file that lacks a key or tensor, has a wrong shape or an unsupported
// architecture is refused with an error naming the problem.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "model/model.h"
#include "ref_data.h"
#include "util/error.h"

namespace edgeinfer::test {
namespace {

struct Edit {
  std::function<bool(const std::string& key)> drop_key = [](const std::string&) { return false; };
  std::function<bool(const std::string& name)> drop_tensor = [](const std::string&) { return false; };
  std::function<void(GgufWriter&)> extra = [](GgufWriter&) {};
  std::string override_arch;
  std::string reshape_tensor;  // swap its two dims
};

// Rewrites stories260K with an edit applied and tries to load the result.
std::string load_error(const Edit& e) {
  GgufFile src = GgufFile::open(data_path("models/stories260K.gguf"));
  GgufWriter w;
  for (const auto& [k, v] : src.metadata()) {
    if (e.drop_key(k)) continue;
    if (k == "general.architecture" && !e.override_arch.empty()) {
      w.add(k, GgufValue::from_string(e.override_arch));
      continue;
    }
    w.add(k, v);
  }
  e.extra(w);
  for (const auto& t : src.tensors()) {
    if (e.drop_tensor(t.name)) continue;
    auto ne = t.ne;
    if (t.name == e.reshape_tensor && ne.size() == 2) std::swap(ne[0], ne[1]);
    w.add_tensor(t.name, t.type, ne, t.data, t.n_bytes);
  }
  std::vector<uint8_t> bytes = w.write_to_memory();
  try {
    GgufFile f = GgufFile::parse(bytes.data(), bytes.size(), "edited.gguf");
    auto m = Model::from_gguf(std::move(f));
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

TEST(ModelLoad, AllSharedModelsLoadWithExpectedConfig) {
  auto m = Model::load(data_path("models/stories260K.gguf"));
  const ModelConfig& c = m->config();
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.n_embd, 64);
  EXPECT_EQ(c.n_layer, 5);
  EXPECT_EQ(c.n_head, 8);
  EXPECT_EQ(c.n_head_kv, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.n_ff, 172);
  EXPECT_EQ(c.n_vocab, 512);
  EXPECT_FLOAT_EQ(c.rope_freq_base, 10000.0f);

  auto q = Model::load(data_path("models/synth-qwen2-f32.gguf"));
  EXPECT_EQ(q->config().arch, "qwen2");
  EXPECT_EQ(q->config().rope_style, RopeStyle::Neox);
  EXPECT_TRUE(q->weights().output_tied);
  EXPECT_TRUE(q->weights().layers[0].bq);

  auto l3 = Model::load(data_path("models/synth-llama3-f32.gguf"));
  EXPECT_EQ(l3->config().n_head_kv, 1);
  EXPECT_TRUE(l3->weights().rope_freqs);
  EXPECT_FALSE(l3->weights().output_tied);
}

TEST(ModelLoad, UnmodifiedCopyLoads) { EXPECT_EQ(load_error(Edit{}), ""); }

TEST(ModelLoad, MissingTensorIsNamed) {
  Edit e;
  e.drop_tensor = [](const std::string& n) { return n == "blk.3.ffn_up.weight"; };
  EXPECT_NE(load_error(e).find("missing tensor 'blk.3.ffn_up.weight'"), std::string::npos);
}

TEST(ModelLoad, WrongShapeIsNamed) {
  Edit e;
  e.reshape_tensor = "blk.0.ffn_down.weight";
  const std::string msg = load_error(e);
  EXPECT_NE(msg.find("blk.0.ffn_down.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find("shape"), std::string::npos) << msg;
}

TEST(ModelLoad, MissingKeyIsNamed) {
  Edit e;
  e.drop_key = [](const std::string& k) { return k == "llama.block_count"; };
  EXPECT_NE(load_error(e).find("llama.block_count"), std::string::npos);
}

TEST(ModelLoad, UnsupportedArchitectureIsNamed) {
  Edit e;
  e.override_arch = "mamba";
  const std::string msg = load_error(e);
  EXPECT_NE(msg.find("'mamba' is not supported"), std::string::npos) << msg;
}

TEST(ModelLoad, InconsistentHeadCountsAreRefused) {
  Edit e;
  e.drop_key = [](const std::string& k) { return k == "llama.attention.head_count_kv"; };
  e.extra = [](GgufWriter& w) { w.add_uint32("llama.attention.head_count_kv", 3); };
  EXPECT_NE(load_error(e).find("head_count_kv"), std::string::npos);
}

TEST(ModelLoad, MissingFileGivesPath) {
  try {
    Model::load("/nonexistent/model.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos);
  }
}

}  // namespace
}  // namespace edgeinfer::test
