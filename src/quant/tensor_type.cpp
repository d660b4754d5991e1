#include "quant/tensor_type.h"

#include <array>
#include <cctype>
#include <limits>

namespace edgeinfer {

namespace {

constexpr std::array<std::optional<TensorTypeInfo>, kTensorTypeCount> make_table() {
  std::array<std::optional<TensorTypeInfo>, kTensorTypeCount> t{};
  auto set = [&](TensorType ty, std::string_view name, int64_t bs, size_t ts) {
    t[static_cast<uint32_t>(ty)] = TensorTypeInfo{name, bs, ts};
  };
  set(TensorType::F32, "f32", 1, 4);
  set(TensorType::F16, "f16", 1, 2);
  set(TensorType::Q4_0, "q4_0", 32, 18);
  set(TensorType::Q4_1, "q4_1", 32, 20);
  set(TensorType::Q5_0, "q5_0", 32, 22);
  set(TensorType::Q5_1, "q5_1", 32, 24);
  set(TensorType::Q8_0, "q8_0", 32, 34);
  set(TensorType::Q8_1, "q8_1", 32, 36);
  set(TensorType::Q2_K, "q2_K", 256, 84);
  set(TensorType::Q3_K, "q3_K", 256, 110);
  set(TensorType::Q4_K, "q4_K", 256, 144);
  set(TensorType::Q5_K, "q5_K", 256, 176);
  set(TensorType::Q6_K, "q6_K", 256, 210);
  set(TensorType::Q8_K, "q8_K", 256, 292);
  set(TensorType::IQ2_XXS, "iq2_xxs", 256, 66);
  set(TensorType::IQ2_XS, "iq2_xs", 256, 74);
  set(TensorType::IQ3_XXS, "iq3_xxs", 256, 98);
  set(TensorType::IQ1_S, "iq1_s", 256, 50);
  set(TensorType::IQ4_NL, "iq4_nl", 32, 18);
  set(TensorType::IQ3_S, "iq3_s", 256, 110);
  set(TensorType::IQ2_S, "iq2_s", 256, 82);
  set(TensorType::IQ4_XS, "iq4_xs", 256, 136);
  set(TensorType::I8, "i8", 1, 1);
  set(TensorType::I16, "i16", 1, 2);
  set(TensorType::I32, "i32", 1, 4);
  set(TensorType::I64, "i64", 1, 8);
  set(TensorType::F64, "f64", 1, 8);
  set(TensorType::IQ1_M, "iq1_m", 256, 56);
  set(TensorType::BF16, "bf16", 1, 2);
  set(TensorType::TQ1_0, "tq1_0", 256, 54);
  set(TensorType::TQ2_0, "tq2_0", 256, 66);
  return t;
}

constexpr auto kTable = make_table();

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

std::optional<TensorTypeInfo> tensor_type_info(uint32_t id) {
  if (id >= kTensorTypeCount) return std::nullopt;
  return kTable[id];
}

TensorTypeInfo tensor_type_info(TensorType t) { return *kTable[static_cast<uint32_t>(t)]; }

std::string_view tensor_type_name(TensorType t) { return tensor_type_info(t).name; }

std::optional<TensorType> tensor_type_from_name(std::string_view name) {
  for (uint32_t id = 0; id < kTensorTypeCount; ++id) {
    if (kTable[id] && iequals(kTable[id]->name, name)) return static_cast<TensorType>(id);
  }
  return std::nullopt;
}

std::optional<uint64_t> tensor_row_bytes(TensorType t, int64_t n) {
  auto info = tensor_type_info(t);
  if (n < 0 || n % info.block_size != 0) return std::nullopt;
  uint64_t blocks = static_cast<uint64_t>(n / info.block_size);
  if (blocks > std::numeric_limits<uint64_t>::max() / info.type_size) return std::nullopt;
  return blocks * info.type_size;
}

}  // namespace edgeinfer
