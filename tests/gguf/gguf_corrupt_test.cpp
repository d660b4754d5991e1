// Malformed files: every truncation of a valid file, and targeted corruptions of each field the
// reader checks, are rejected with an Error naming the file and the problem.
#include <gtest/gtest.h>

#include <chrono>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "gguf_test_util.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

using namespace edgeinfer::test;
using VT = GgufValueType;

// Parses b, expecting an Error that starts with the file name and mentions `part`.
void expect_rejected(const Bytes& b, const std::string& part) {
  std::string msg = parse_error(b, "bad.gguf");
  ASSERT_FALSE(msg.empty()) << "accepted, expected an error mentioning '" << part << "'";
  EXPECT_EQ(msg.rfind("bad.gguf: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
}

// Offsets of the fields of the tensor info named `name`.
struct TensorInfoAt {
  size_t n_dims, ne0, type, offset;
};
TensorInfoAt tensor_info_at(const Bytes& b, std::string_view name, uint32_t n_dims) {
  size_t p = after_string(b, name);
  return {p, p + 4, p + 4 + 8 * n_dims, p + 4 + 8 * n_dims + 4};
}

TEST(GgufCorrupt, EveryTruncationIsRejected) {
  const Bytes full = small_gguf();
  ASSERT_TRUE(parse_error(full).empty()) << parse_error(full);
  for (size_t n = 0; n < full.size(); ++n) {
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    std::string msg = parse_error(cut, "cut.gguf");
    EXPECT_FALSE(msg.empty()) << "truncated at " << n << " of " << full.size() << " was accepted";
    EXPECT_EQ(msg.rfind("cut.gguf: ", 0), 0u) << msg;
  }
}

TEST(GgufCorrupt, TruncationMessages) {
  const Bytes full = small_gguf();
  expect_rejected(Bytes(full.begin(), full.begin() + 2), "not a GGUF file");
  expect_rejected(Bytes(full.begin(), full.begin() + 6), "truncated file: version at offset 4");
  // Cut inside the tensor data: the tensor that no longer fits is named.
  expect_rejected(Bytes(full.begin(), full.end() - 1),
                  "tensor 'last.weight' (f32, 8) extends past end of file");
}

TEST(GgufCorrupt, HeaderFields) {
  const Bytes good = small_gguf();
  Bytes b = good;
  b[0] = 'X';
  expect_rejected(b, "not a GGUF file (bad magic 0x58475546");
  b = good;
  put_u32(b, 4, 1);
  expect_rejected(b, "GGUF version 1 is not supported");
  put_u32(b, 4, 4);
  expect_rejected(b, "unsupported GGUF version 4");
  put_u32(b, 4, 0x03000000);
  expect_rejected(b, "big-endian");
  b = good;
  put_u32(b, 4, 2);  // v2 has the same layout as v3
  EXPECT_EQ(parse_copy(b).file.version(), 2u);

  b = good;
  put_u64(b, 16, 1ull << 60);
  expect_rejected(b, "metadata count 1152921504606846976 exceeds");
  b = good;
  put_u64(b, 8, 1ull << 60);
  expect_rejected(b, "tensor count 1152921504606846976 exceeds");
  b = good;
  put_u64(b, 8, 5);  // one tensor info more than the file holds
  expect_rejected(b, "bad.gguf: ");
}

TEST(GgufCorrupt, StringsAndArrays) {
  const Bytes good = small_gguf();
  // Length of the first key.
  Bytes b = good;
  put_u64(b, 24, 1ull << 60);
  expect_rejected(b, "metadata key #0: string length 1152921504606846976 exceeds the remaining");
  // Length of a string value.
  b = good;
  size_t p = after_string(b, "general.name") + 4;
  put_u64(b, p, ~0ull);
  expect_rejected(b, "metadata key 'general.name': string length 18446744073709551615 exceeds");
  // Count of a string array and of a byte array: must fail fast, before allocating.
  b = good;
  p = after_string(b, "tokenizer.tokens") + 4 + 4;
  put_u64(b, p, 1ull << 60);
  auto t0 = std::chrono::steady_clock::now();
  expect_rejected(b, "metadata key 'tokenizer.tokens': array count 1152921504606846976 (string) exceeds");
  b = good;
  p = after_string(b, "test.u8s") + 4 + 4;
  put_u64(b, p, (1ull << 60) + 3);
  expect_rejected(b, "metadata key 'test.u8s': array count");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  // A string inside an array with a huge length.
  b = good;
  p = after_string(b, "<unk>") - 5 - 8;
  put_u64(b, p, 1ull << 62);
  expect_rejected(b, "metadata key 'tokenizer.tokens': string length 4611686018427387904");
}

TEST(GgufCorrupt, ValueTypes) {
  const Bytes good = small_gguf();
  Bytes b = good;
  put_u32(b, after_string(b, "llama.block_count"), 13);
  expect_rejected(b, "metadata key 'llama.block_count': invalid value type 13");
  b = good;
  put_u32(b, after_string(b, "llama.block_count"), 0xffffffffu);
  expect_rejected(b, "invalid value type 4294967295");
  b = good;
  put_u32(b, after_string(b, "tokenizer.scores") + 4, 99);
  expect_rejected(b, "metadata key 'tokenizer.scores': invalid array element type 99");
  b = good;
  b[after_string(b, "test.bool") + 4] = 2;
  expect_rejected(b, "metadata key 'test.bool': invalid bool value 2");
  // A value type that changes the size of what follows is caught one way or another.
  b = good;
  put_u32(b, after_string(b, "llama.block_count"), static_cast<uint32_t>(VT::STRING));
  expect_rejected(b, "bad.gguf: ");
}

TEST(GgufCorrupt, DuplicateNames) {
  GgufWriter w;
  w.add_string("test.aaa", "x");
  w.add_string("test.aab", "y");
  float x[8] = {};
  w.add_tensor("t.a", TensorType::F32, {8}, x, sizeof x);
  w.add_tensor("t.b", TensorType::F32, {8}, x, sizeof x);
  const Bytes good = w.write_to_memory();
  Bytes b = good;
  b[find_bytes(b, "test.aab") + 7] = 'a';
  expect_rejected(b, "duplicate metadata key 'test.aaa'");
  b = good;
  b[find_bytes(b, "t.b") + 2] = 'a';
  expect_rejected(b, "duplicate tensor 't.a'");
}

TEST(GgufCorrupt, TensorInfoFields) {
  const Bytes good = small_gguf();
  const TensorInfoAt q = tensor_info_at(good, "blk.0.attn_q.weight", 2);
  const TensorInfoAt norm = tensor_info_at(good, "norm.weight", 1);
  const TensorInfoAt out = tensor_info_at(good, "output.weight", 2);

  Bytes b = good;
  put_u32(b, q.n_dims, 0);
  expect_rejected(b, "tensor 'blk.0.attn_q.weight': n_dims 0 out of range (1..4)");
  put_u32(b, q.n_dims, 5);
  expect_rejected(b, "n_dims 5 out of range");
  b = good;
  put_u64(b, q.ne0 + 8, 0);
  expect_rejected(b, "tensor 'blk.0.attn_q.weight': dimension 1 is 0");
  b = good;
  put_u64(b, q.ne0, 1ull << 63);
  expect_rejected(b, "dimension 0 (9223372036854775808) is too large");
  b = good;
  put_u64(b, q.ne0, 1ull << 32);
  put_u64(b, q.ne0 + 8, 1ull << 32);
  expect_rejected(b, "tensor 'blk.0.attn_q.weight': element count overflows");
  b = good;
  put_u64(b, q.ne0, 48);
  expect_rejected(b, "tensor 'blk.0.attn_q.weight' (q4_0, 48 x 4): first dimension 48 is not a multiple of the "
                     "block size 32");
  b = good;
  put_u64(b, q.ne0, 1ull << 40);  // element count fits int64, bytes far beyond the file
  expect_rejected(b, "extends past end of file");

  b = good;
  put_u32(b, q.type, 4);
  expect_rejected(b, "tensor 'blk.0.attn_q.weight': unknown tensor type id 4");
  put_u32(b, q.type, 36);
  expect_rejected(b, "unknown tensor type id 36");
  put_u32(b, q.type, 0x80000000u);
  expect_rejected(b, "unknown tensor type id 2147483648");

  b = good;
  put_u64(b, norm.offset, get_u64(b, norm.offset) + 4);
  expect_rejected(b, "tensor 'norm.weight' (f32, 16): offset 100 is not a multiple of the alignment 32");
  b = good;
  put_u64(b, out.offset, get_u64(b, norm.offset));
  expect_rejected(b, "overlaps tensor 'norm.weight'");
  b = good;
  put_u64(b, norm.offset, 0);  // onto the q4_0 tensor (72 bytes from 0)
  expect_rejected(b, "overlaps");
  b = good;
  put_u64(b, out.offset, 1ull << 20);
  expect_rejected(b, "tensor 'output.weight' (q8_0, 64 x 2) extends past end of file (offset ");
  b = good;
  put_u64(b, out.offset, ~0ull - 31);  // aligned, and wraps around when added to the data offset
  expect_rejected(b, "tensor 'output.weight' (q8_0, 64 x 2) extends past end of file");
}

TEST(GgufCorrupt, Alignment) {
  GgufWriter w;
  w.set_alignment(64);
  float x[16] = {};
  w.add_tensor("t", TensorType::F32, {16}, x, sizeof x);
  const Bytes good = w.write_to_memory();
  ASSERT_EQ(parse_copy(good).file.alignment(), 64u);
  const size_t value_at = after_string(good, "general.alignment") + 4;
  for (uint32_t bad : {0u, 3u, 48u, 0x80000001u}) {
    Bytes b = good;
    put_u32(b, value_at, bad);
    expect_rejected(b, "general.alignment " + std::to_string(bad) + " is not a nonzero power of two");
  }
  Bytes b = good;
  put_u32(b, value_at - 4, static_cast<uint32_t>(VT::FLOAT32));
  expect_rejected(b, "general.alignment must be an unsigned integer, got float32");
  b = good;
  put_u32(b, value_at - 4, static_cast<uint32_t>(VT::INT32));
  put_u32(b, value_at, static_cast<uint32_t>(-64));
  expect_rejected(b, "general.alignment -64 is not a nonzero power of two");
  // Alignment 16 is legal; the tensor at offset 0 is still aligned.
  b = good;
  put_u32(b, value_at, 16);
  EXPECT_EQ(parse_copy(b).file.alignment(), 16u);
}

// Builds a file by hand: one metadata key "x" holding arrays nested `levels` deep.
Bytes nested_arrays(int levels) {
  Bytes b;
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  b.insert(b.end(), {'G', 'G', 'U', 'F'});
  u32(3);
  u64(0);  // tensors
  u64(1);  // metadata
  u64(1);
  b.push_back('x');
  u32(static_cast<uint32_t>(VT::ARRAY));
  for (int i = 1; i < levels; ++i) {
    u32(static_cast<uint32_t>(VT::ARRAY));
    u64(1);
  }
  u32(static_cast<uint32_t>(VT::UINT8));
  u64(0);
  return b;
}

TEST(GgufCorrupt, NestingDepth) {
  auto ok = parse_copy(nested_arrays(8));
  EXPECT_EQ(ok.file.get("x").as_nested_array().size(), 1u);
  expect_rejected(nested_arrays(9), "metadata key 'x': arrays nested deeper than 8 levels");
  // Far deeper than any stack would allow to recurse: rejected at the limit, no crash.
  expect_rejected(nested_arrays(200000), "nested deeper than 8 levels");
}

TEST(GgufCorrupt, EmptyNames) {
  GgufWriter w;
  w.add_string("k", "v");
  float x[8] = {};
  w.add_tensor("t", TensorType::F32, {8}, x, sizeof x);
  const Bytes good = w.write_to_memory();
  // Turn the one-letter names into empty ones by removing the letter and fixing the length.
  Bytes b = good;
  size_t key_at = after_string(b, "k") - 1;
  b.erase(b.begin() + static_cast<std::ptrdiff_t>(key_at));
  put_u64(b, key_at - 8, 0);
  expect_rejected(b, "metadata key #0 is empty");
  b = good;
  size_t name_at = after_string(b, "t") - 1;
  b.erase(b.begin() + static_cast<std::ptrdiff_t>(name_at));
  put_u64(b, name_at - 8, 0);
  expect_rejected(b, "tensor #0 has an empty name");
}

TEST(GgufCorrupt, EmptyAndTinyInputs) {
  expect_rejected(Bytes{}, "not a GGUF file");
  EXPECT_THROW(GgufFile::parse(nullptr, 0, "null.gguf"), Error);
  expect_rejected(Bytes{'G', 'G', 'U', 'F'}, "truncated file: version");
}

}  // namespace
}  // namespace edgeinfer
