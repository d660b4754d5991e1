// Writes small valid GGUF files into the folder given on the command line: a seed corpus for
// fuzz_gguf covering every value type, nested arrays, several tensor types and alignments.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "gguf/gguf_writer.h"
#include "util/error.h"

namespace {

using namespace edgeinfer;
using VT = GgufValueType;

std::vector<uint8_t> bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + 13 * i);
  return v;
}

void save(const std::filesystem::path& dir, const std::string& name, const GgufWriter& w) {
  auto data = w.write_to_memory();
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!out) throw Error((dir / name).string() + ": cannot write");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gguf_fuzz_seeds OUTPUT_DIR\n";
    return 2;
  }
  try {
    std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    static const auto q4 = bytes(2 * 18, 1), f32 = bytes(8 * 4, 2), q6 = bytes(210, 3), f16 = bytes(4 * 2, 4);

    GgufWriter empty;
    save(dir, "empty.gguf", empty);

    GgufWriter values;
    values.add("u8", GgufValue::from_uint(VT::UINT8, 200));
    values.add("i8", GgufValue::from_int(VT::INT8, -5));
    values.add("u16", GgufValue::from_uint(VT::UINT16, 60000));
    values.add("i16", GgufValue::from_int(VT::INT16, -300));
    values.add("u32", GgufValue::from_uint(VT::UINT32, 70000));
    values.add("i32", GgufValue::from_int(VT::INT32, -70000));
    values.add("f32", GgufValue::from_float(VT::FLOAT32, 0.5));
    values.add("bool", GgufValue::from_bool(true));
    values.add("str", GgufValue::from_string("hello"));
    values.add("u64", GgufValue::from_uint(VT::UINT64, 1ull << 40));
    values.add("i64", GgufValue::from_int(VT::INT64, -(1ll << 40)));
    values.add("f64", GgufValue::from_float(VT::FLOAT64, 1e-3));
    values.add("a.str", GgufValue::from_string_array({"a", "", "ccc"}));
    values.add("a.i32", GgufValue::from_int_array(VT::INT32, {1, -2, 3}));
    values.add("a.f32", GgufValue::from_float_array(VT::FLOAT32, {1.5, 2.5}));
    values.add("a.bool", GgufValue::from_bool_array({0, 1}));
    values.add("a.empty", GgufValue::from_uint_array(VT::UINT64, {}));
    values.add("a.nested", GgufValue::from_nested_array(
                               VT::ARRAY, {GgufValue::from_uint_array(VT::UINT8, {1}),
                                           GgufValue::from_nested_array(VT::ARRAY, {}),
                                           GgufValue::from_string_array({"x"})}));
    save(dir, "values.gguf", values);

    GgufWriter model;
    model.add_string("general.architecture", "llama");
    model.add_uint32("llama.block_count", 1);
    model.add("tokenizer.ggml.tokens", GgufValue::from_string_array({"<unk>", "<s>", "</s>"}));
    model.add_tensor("blk.0.attn_q.weight", TensorType::Q4_0, {32, 2}, q4.data(), q4.size());
    model.add_tensor("output_norm.weight", TensorType::F32, {8}, f32.data(), f32.size());
    model.add_tensor("output.weight", TensorType::Q6_K, {256, 1, 1}, q6.data(), q6.size());
    model.add_tensor("x", TensorType::F16, {2, 1, 2, 1}, f16.data(), f16.size());
    save(dir, "model.gguf", model);

    GgufWriter aligned;
    aligned.set_alignment(64);
    aligned.add_tensor("a", TensorType::F32, {8}, f32.data(), f32.size());
    aligned.add_tensor("b", TensorType::Q4_0, {64}, q4.data(), q4.size());
    save(dir, "aligned64.gguf", aligned);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
