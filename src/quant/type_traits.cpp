// The traits table: one immutable entry per type we compute with, indexed by type id.
#include "quant/type_traits.h"

#include <array>
#include <string>

#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "util/error.h"

namespace edgeinfer {

namespace {

using Table = std::array<TypeTraits, kTensorTypeCount>;

constexpr Table make_table() {
  Table t{};
  for (auto& e : t) e.block_size = 0;  // block_size 0 marks "no traits"
  auto set = [&](TensorType ty, int64_t bs, size_t ts, bool quantized, ToFloatFn to, FromFloatFn from,
                 TensorType dot_type, VecDotFn dot) {
    t[static_cast<uint32_t>(ty)] = TypeTraits{ty, bs, ts, quantized, to, from, dot_type, dot};
  };
  using T = TensorType;
  set(T::F32, 1, 4, false, f32_to_float, f32_from_float_ref, T::F32, f32_vec_dot_ref);
  set(T::F16, 1, 2, false, f16_to_float, f16_from_float_ref, T::F16, f16_vec_dot_ref);
  set(T::BF16, 1, 2, false, bf16_to_float, bf16_from_float_ref, T::BF16, bf16_vec_dot_ref);
  set(T::Q4_0, kQK, sizeof(BlockQ4_0), true, q4_0_to_float, q4_0_from_float_ref, T::Q8_0, q4_0_vec_dot_ref);
  set(T::Q4_1, kQK, sizeof(BlockQ4_1), true, q4_1_to_float, q4_1_from_float_ref, T::Q8_1, q4_1_vec_dot_ref);
  set(T::Q5_0, kQK, sizeof(BlockQ5_0), true, q5_0_to_float, q5_0_from_float_ref, T::Q8_0, q5_0_vec_dot_ref);
  set(T::Q5_1, kQK, sizeof(BlockQ5_1), true, q5_1_to_float, q5_1_from_float_ref, T::Q8_1, q5_1_vec_dot_ref);
  set(T::Q8_0, kQK, sizeof(BlockQ8_0), true, q8_0_to_float, q8_0_from_float_ref, T::Q8_0, q8_0_vec_dot_ref);
  set(T::Q8_1, kQK, sizeof(BlockQ8_1), true, q8_1_to_float, q8_1_from_float_ref, T::Q8_1, q8_1_vec_dot_ref);
  set(T::Q8_K, kQK_K, sizeof(BlockQ8_K), true, q8_k_to_float, q8_k_from_float_ref, T::Q8_K, q8_k_vec_dot_ref);
  set(T::Q2_K, kQK_K, sizeof(BlockQ2_K), true, q2_k_to_float, q2_k_from_float_ref, T::Q8_K, q2_k_vec_dot_ref);
  set(T::Q3_K, kQK_K, sizeof(BlockQ3_K), true, q3_k_to_float, q3_k_from_float_ref, T::Q8_K, q3_k_vec_dot_ref);
  set(T::Q4_K, kQK_K, sizeof(BlockQ4_K), true, q4_k_to_float, q4_k_from_float_ref, T::Q8_K, q4_k_vec_dot_ref);
  set(T::Q5_K, kQK_K, sizeof(BlockQ5_K), true, q5_k_to_float, q5_k_from_float_ref, T::Q8_K, q5_k_vec_dot_ref);
  set(T::Q6_K, kQK_K, sizeof(BlockQ6_K), true, q6_k_to_float, q6_k_from_float_ref, T::Q8_K, q6_k_vec_dot_ref);
  return t;
}

constexpr Table kTraits = make_table();

}  // namespace

const TypeTraits* find_type_traits(TensorType t) {
  const uint32_t id = static_cast<uint32_t>(t);
  if (id >= kTensorTypeCount || kTraits[id].block_size == 0) return nullptr;
  return &kTraits[id];
}

const TypeTraits& type_traits(TensorType t) {
  if (const TypeTraits* tr = find_type_traits(t)) return *tr;
  const auto info = tensor_type_info(static_cast<uint32_t>(t));
  // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive in char_traits.h) on
  // "#" + std::to_string(...).
  std::string msg = "tensor type ";
  if (info) {
    msg += info->name;
  } else {
    msg += '#';
    msg += std::to_string(static_cast<uint32_t>(t));
  }
  msg += " is not supported";
  throw Error(msg);
}

}  // namespace edgeinfer
