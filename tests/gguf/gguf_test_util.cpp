#include "gguf_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "gguf/gguf_writer.h"
#include "util/error.h"

namespace edgeinfer::test {

namespace {

// Deterministic tensor contents: byte i of tensor k.
std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

}  // namespace

Bytes small_gguf() {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", "tiny test");
  w.add_uint32("llama.block_count", 2);
  w.add_int32("test.i32", -7);
  w.add_float32("test.f32", 1e-5f);
  w.add_bool("test.bool", true);
  w.add("test.u64", GgufValue::from_uint(GgufValueType::UINT64, 1ull << 40));
  w.add("test.f64", GgufValue::from_float(GgufValueType::FLOAT64, 0.25));
  w.add("test.u8s", GgufValue::from_uint_array(GgufValueType::UINT8, {1, 2, 3}));
  w.add("tokenizer.tokens", GgufValue::from_string_array({"<unk>", "<s>", "</s>", "a", "b", "hello"}));
  w.add("tokenizer.scores", GgufValue::from_float_array(GgufValueType::FLOAT32, {0, -1, -2, -3, -4, -5}));
  w.add("test.nested",
        GgufValue::from_nested_array(GgufValueType::ARRAY,
                                     {GgufValue::from_int_array(GgufValueType::INT16, {-1, 2}),
                                      GgufValue::from_string_array({"x"})}));
  static const std::vector<uint8_t> q4 = pattern(4 * 18, 1);   // q4_0 [32, 4]
  static const std::vector<uint8_t> f1 = pattern(16 * 4, 2);   // f32 [16]
  static const std::vector<uint8_t> q8 = pattern(2 * 2 * 34, 3);  // q8_0 [64, 2]
  static const std::vector<uint8_t> f2 = pattern(8 * 4, 4);    // f32 [8]: 32 bytes, no trailing pad
  w.add_tensor("blk.0.attn_q.weight", TensorType::Q4_0, {32, 4}, q4.data(), q4.size());
  w.add_tensor("norm.weight", TensorType::F32, {16}, f1.data(), f1.size());
  w.add_tensor("output.weight", TensorType::Q8_0, {64, 2}, q8.data(), q8.size());
  w.add_tensor("last.weight", TensorType::F32, {8}, f2.data(), f2.size());
  return w.write_to_memory();
}

OwnedGguf parse_copy(const Bytes& b, const std::string& name) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[b.size()]);
  if (!b.empty()) std::memcpy(copy.get(), b.data(), b.size());
  GgufFile f = GgufFile::parse(copy.get(), b.size(), name);
  return OwnedGguf{std::move(copy), std::move(f)};
}

std::string parse_error(const Bytes& b, const std::string& name) {
  try {
    parse_copy(b, name);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

size_t find_bytes(const Bytes& hay, std::string_view needle, size_t from) {
  auto it = std::search(hay.begin() + static_cast<std::ptrdiff_t>(from), hay.end(), needle.begin(), needle.end());
  EXPECT_NE(it, hay.end()) << "'" << needle << "' not found";
  return static_cast<size_t>(it - hay.begin());
}

void put_u32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}

void put_u64(Bytes& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get_u64(const Bytes& b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b.at(at + i)) << (8 * i);
  return v;
}

size_t after_string(const Bytes& b, std::string_view s) {
  // The string is preceded by its uint64 length; match both to avoid hitting a substring.
  Bytes needle(8);
  put_u64(needle, 0, s.size());
  needle.insert(needle.end(), s.begin(), s.end());
  auto it = std::search(b.begin(), b.end(), needle.begin(), needle.end());
  EXPECT_NE(it, b.end()) << "string '" << s << "' not found";
  return static_cast<size_t>(it - b.begin()) + needle.size();
}

}  // namespace edgeinfer::test
