// GgufWriter: writing to disk atomically, and clear errors for calls it cannot honour.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

namespace fs = std::filesystem;
using VT = GgufValueType;

// Runs f, expecting an Error whose message contains `part`.
template <typename F>
void expect_error(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "expected an Error mentioning '" << part << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("gguf-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(GgufWriter, WritesFileAtomically) {
  TempDir dir;
  const std::string path = (dir.path() / "model.gguf").string();
  {
    std::ofstream old(path);
    old << "previous contents";
  }
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  w.add_tensor("x", TensorType::F32, {10, 100}, x.data(), x.size() * 4);
  w.write(path);
  // Replaced in place, no temporary file left behind.
  size_t n_files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    (void)e;
    ++n_files;
  }
  EXPECT_EQ(n_files, 1u);
  GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  ASSERT_EQ(f.tensors().size(), 1u);
  EXPECT_EQ(std::memcmp(f.tensors()[0].data, x.data(), x.size() * 4), 0);
  EXPECT_EQ(f.file_size(), w.file_size());
  EXPECT_EQ(fs::file_size(path), w.write_to_memory().size());
}

TEST(GgufWriter, FailedWriteLeavesNothingBehind) {
  TempDir dir;
  const std::string path = (dir.path() / "out.gguf").string();
  GgufWriter w;
  w.add_tensor("t", TensorType::F32, {8}, [](const GgufByteSink& sink) {
    float v[4] = {};
    sink(v, sizeof v);  // half of what the shape needs
  });
  expect_error([&] { w.write(path); }, path + ": tensor 't': producer wrote 16 bytes, expected 32");
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(dir.path()));
  expect_error([&] { w.write_to_memory(); }, "producer wrote 16 bytes, expected 32");

  GgufWriter w2;
  w2.add_tensor("t", TensorType::F32, {2}, [](const GgufByteSink& sink) {
    float v[4] = {};
    sink(v, sizeof v);
  });
  expect_error([&] { w2.write_to_memory(); }, "producer wrote more than its 8 bytes");

  GgufWriter w3;
  w3.add_string("k", "v");
  const std::string bad = (dir.path() / "no" / "such" / "dir" / "x.gguf").string();
  expect_error([&] { w3.write(bad); }, bad + ": cannot create temporary file");
}

TEST(GgufWriter, RejectsBadMetadata) {
  GgufWriter w;
  w.add_string("a", "x");
  expect_error([&] { w.add_string("a", "y"); }, "duplicate metadata key 'a'");
  expect_error([&] { w.add_string("", "y"); }, "empty metadata key");
  expect_error([&] { w.add("general.alignment", GgufValue::from_uint(VT::UINT32, 48)); },
               "general.alignment 48 is not a nonzero power of two");
  expect_error([&] { w.add("general.alignment", GgufValue::from_uint(VT::UINT32, 0)); },
               "is not a nonzero power of two");
  expect_error([&] { w.add("general.alignment", GgufValue::from_string("32")); }, "expected an integer");
  expect_error([&] { w.set_alignment(3); }, "alignment 3 is not a nonzero power of two");
  // Values built by hand with storage that does not fit their type.
  expect_error([&] { w.add("bad1", GgufValue(VT::UINT8, VT::UINT8, uint64_t{300})); }, "out of range for uint8");
  expect_error([&] { w.add("bad2", GgufValue(VT::UINT32, VT::UINT8, std::string("x"))); },
               "metadata key 'bad2': uint32 value does not hold the storage its type needs");
  expect_error([&] { w.add("bad3", GgufValue(VT::ARRAY, VT::STRING, std::vector<uint64_t>{1})); },
               "array of string does not hold");
  expect_error([&] { w.add("bad4", GgufValue(static_cast<VT>(13), VT::UINT8, uint64_t{1})); },
               "invalid value type 13");
  expect_error(
      [&] { w.add("bad5", GgufValue(VT::ARRAY, VT::ARRAY, GgufValue::Array{GgufValue::from_bool(true)})); },
      "element of an array of arrays is not an array");
  GgufValue deep = GgufValue::from_uint_array(VT::UINT8, {});
  for (int i = 0; i < 8; ++i) deep = GgufValue::from_nested_array(VT::ARRAY, {deep});
  expect_error([&] { w.add("deep", deep); }, "nested deeper than 8");
  EXPECT_EQ(w.metadata_count(), 1u);  // failed calls add nothing
  // set() replaces in place.
  w.set("a", GgufValue::from_uint(VT::UINT8, 1));
  EXPECT_EQ(w.metadata_count(), 1u);
  EXPECT_EQ(w.metadata()[0].second.as_int(), 1);
}

TEST(GgufWriter, RejectsBadTensors) {
  GgufWriter w;
  float x[64] = {};
  w.add_tensor("t", TensorType::F32, {4}, x, 16);
  expect_error([&] { w.add_tensor("t", TensorType::F32, {4}, x, 16); }, "duplicate tensor name 't'");
  expect_error([&] { w.add_tensor("", TensorType::F32, {4}, x, 16); }, "empty tensor name");
  expect_error([&] { w.add_tensor("u", TensorType::F32, {4}, x, 12); },
               "tensor 'u' (f32, 4) needs 16 bytes, got 12");
  expect_error([&] { w.add_tensor("u", TensorType::F32, {}, x, 4); }, "0 dimensions (must be 1..4)");
  expect_error([&] { w.add_tensor("u", TensorType::F32, {1, 1, 1, 1, 1}, x, 4); }, "5 dimensions");
  expect_error([&] { w.add_tensor("u", TensorType::F32, {4, 0}, x, 0); }, "dimension 1 is 0");
  expect_error([&] { w.add_tensor("u", TensorType::F32, {-4}, x, 16); }, "dimension 0 is -4");
  expect_error([&] { w.add_tensor("u", TensorType::Q4_0, {16}, x, 9); },
               "first dimension 16 is not a multiple of the block size 32");
  expect_error([&] { w.add_tensor("u", TensorType::F32, {1ll << 40, 1ll << 40}, x, 16); },
               "element count overflows");
  expect_error([&] { w.add_tensor("u", static_cast<TensorType>(4), {4}, x, 16); }, "unknown tensor type id 4");
  expect_error([&] { w.add_tensor("u", TensorType::F32, {4}, GgufTensorProducer{}); }, "empty producer");
  EXPECT_EQ(w.tensor_count(), 1u);
}

}  // namespace
}  // namespace edgeinfer
