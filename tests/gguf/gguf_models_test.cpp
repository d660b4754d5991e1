// Every shared model and vocabulary GGUF loads, and agrees with what the reference data says
// about it (tensor count per type from ref/<stem>.json; known stories260K metadata).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "gguf/gguf_describe.h"
#include "gguf/gguf_file.h"
#include "util/data_path.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> gguf_files_in(const std::string& sub) {
  fs::path dir = fs::path(data_dir()) / sub;
  EXPECT_TRUE(fs::is_directory(dir)) << dir << " is missing: set EDGEINFER_DATA to the shared data folder";
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".gguf") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// Invariants every successfully parsed file must satisfy, whatever its content.
void check_invariants(const GgufFile& f) {
  EXPECT_TRUE(f.version() == 2 || f.version() == 3);
  EXPECT_NE(f.alignment(), 0u);
  EXPECT_EQ(f.alignment() & (f.alignment() - 1), 0u);
  EXPECT_EQ(f.data_offset() % f.alignment(), 0u);
  for (const auto& t : f.tensors()) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.offset % f.alignment(), 0u);
    EXPECT_GE(t.ne.size(), 1u);
    EXPECT_LE(t.ne.size(), 4u);
    EXPECT_EQ(*tensor_row_bytes(t.type, t.ne[0]) * static_cast<uint64_t>(t.n_rows()), t.n_bytes);
    EXPECT_LE(t.offset + f.data_offset() + t.n_bytes, f.file_size());
    EXPECT_EQ(f.find_tensor(t.name), &t);
  }
}

TEST(GgufModels, EveryModelLoadsAndMatchesItsReferenceTensorTypes) {
  auto files = gguf_files_in("models");
  ASSERT_GE(files.size(), 18u) << "expected the shared models in " << data_dir() << "/models";
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    GgufFile f = GgufFile::open(path.string());
    check_invariants(f);
    EXPECT_EQ(f.file_size(), fs::file_size(path));
    EXPECT_FALSE(f.tensors().empty());
    const std::string arch = f.get_string("general.architecture");
    EXPECT_TRUE(arch == "llama" || arch == "qwen2") << arch;
    EXPECT_GT(f.get_int(arch + ".block_count"), 0);
    EXPECT_EQ(f.find("tokenizer.ggml.tokens")->as_string_array().size(), 512u);

    fs::path ref = fs::path(data_dir()) / "ref" / (path.stem().string() + ".json");
    ASSERT_TRUE(fs::exists(ref)) << ref;
    std::ifstream in(ref);
    nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("model").get<std::string>(), "models/" + path.filename().string());
    std::map<std::string, int64_t> expected, actual;
    for (const auto& [type, count] : j.at("tensor_types").items()) expected[upper(type)] = count.get<int64_t>();
    for (const auto& t : f.tensors()) actual[upper(tensor_type_name(t.type))] += 1;
    EXPECT_EQ(actual, expected);
  }
}

TEST(GgufModels, EveryVocabularyLoads) {
  auto files = gguf_files_in("tokenizer");
  ASSERT_GE(files.size(), 9u) << "expected the vocab GGUFs in " << data_dir() << "/tokenizer";
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    GgufFile f = GgufFile::open(path.string());
    check_invariants(f);
    EXPECT_FALSE(f.get_string("tokenizer.ggml.model").empty());
    const auto& tokens = f.get("tokenizer.ggml.tokens").as_string_array();
    EXPECT_GT(tokens.size(), 1000u);
    if (const GgufValue* scores = f.find("tokenizer.ggml.scores")) {
      EXPECT_EQ(scores->array_size(), tokens.size());
    }
    if (const GgufValue* types = f.find("tokenizer.ggml.token_type")) {
      EXPECT_EQ(types->as_int_array().size(), tokens.size());
    }
  }
}

TEST(GgufModels, Stories260KMetadata) {
  GgufFile f = GgufFile::open(data_dir() + "/models/stories260K.gguf");
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("llama.embedding_length"), 64);
  EXPECT_EQ(f.get_int("llama.block_count"), 5);
  EXPECT_EQ(f.get_int("llama.attention.head_count"), 8);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv"), 4);
  EXPECT_EQ(f.get_int("llama.feed_forward_length"), 172);
  EXPECT_EQ(f.get_int("llama.context_length"), 2048);
  EXPECT_NEAR(f.get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-12);
  EXPECT_FALSE(f.get_float_opt("llama.rope.freq_base").has_value());
  EXPECT_EQ(f.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(f.get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(f.get_int("tokenizer.ggml.eos_token_id"), 2);
  const auto& tokens = f.get("tokenizer.ggml.tokens").as_string_array();
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(f.get("tokenizer.ggml.scores").as_float_array().size(), 512u);
  EXPECT_EQ(f.file_size(), 1185376u);
  EXPECT_EQ(f.tensors().size(), 48u);

  const GgufTensorInfo* emb = f.find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->type, TensorType::F32);
  EXPECT_EQ(emb->ne, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(emb->n_elements(), 64 * 512);
  EXPECT_EQ(emb->n_rows(), 512);
  EXPECT_EQ(emb->n_bytes, 64u * 512u * 4u);
  const GgufTensorInfo* wq = f.find_tensor("blk.4.attn_q.weight");
  ASSERT_NE(wq, nullptr);
  EXPECT_EQ(wq->ne, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(f.find_tensor("blk.5.attn_q.weight"), nullptr);
  // The first float of the norm weights of a trained model is a finite, sensible number.
  const GgufTensorInfo* norm = f.find_tensor("output_norm.weight");
  ASSERT_NE(norm, nullptr);
  float first = 0;
  std::memcpy(&first, norm->data, sizeof first);
  EXPECT_TRUE(first > 0.01f && first < 100.f) << first;

  // Typed getters name the file and key when the type is wrong.
  try {
    f.get_int("general.architecture");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stories260K.gguf: metadata key 'general.architecture': expected an "
                                         "integer, got string"),
              std::string::npos)
        << e.what();
  }
  try {
    f.get_string("llama.no_such_key");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing metadata key 'llama.no_such_key'"), std::string::npos) << e.what();
  }
}

TEST(GgufModels, DescribeStories260K) {
  GgufFile f = GgufFile::open(data_dir() + "/models/stories260K.gguf");
  std::string d = describe_gguf(f);
  EXPECT_NE(d.find("GGUF v3"), std::string::npos) << d;
  EXPECT_NE(d.find("alignment 32"), std::string::npos) << d;
  EXPECT_NE(d.find("general.architecture"), std::string::npos) << d;
  EXPECT_NE(d.find("\"llama\""), std::string::npos) << d;
  EXPECT_NE(d.find("[string \u00d7 512]"), std::string::npos) << d;
  EXPECT_NE(d.find("token_embd.weight"), std::string::npos) << d;
  EXPECT_NE(d.find("64 x 512"), std::string::npos) << d;
  EXPECT_NE(d.find("131,072"), std::string::npos) << d;  // bytes of token_embd
  EXPECT_NE(d.find("48 tensors"), std::string::npos) << d;
  EXPECT_LT(d.size(), 20000u);  // abbreviated, not the whole vocabulary
}

TEST(GgufModels, MissingFileIsAnError) {
  try {
    GgufFile::open("/nonexistent/dir/model.gguf");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace edgeinfer
