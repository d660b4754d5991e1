#pragma once
// GGML tensor element types as numbered in the GGUF format, with their block geometry.
// This table is the only place that knows block sizes; readers use it to size tensors, the
// traits table (quant/type_traits.h) adds the arithmetic for the types we compute with.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace edgeinfer {

enum class TensorType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
};

// One past the largest type id; arrays indexed by type id use this size.
inline constexpr uint32_t kTensorTypeCount = 36;

struct TensorTypeInfo {
  std::string_view name;  // GGML's name: "f32", "q4_0", "q4_K", "bf16", ...
  int64_t block_size;     // elements per block (1 for plain types)
  size_t type_size;       // bytes per block
};

// nullopt for ids that are not (or no longer) GGML types, e.g. 4, 5, 31..33.
std::optional<TensorTypeInfo> tensor_type_info(uint32_t id);
// Same, for a valid enumerator (never nullopt for the values above).
TensorTypeInfo tensor_type_info(TensorType t);
std::string_view tensor_type_name(TensorType t);
// Parses a name case-insensitively ("Q4_K", "q4_k", "F16", "bf16"); nullopt if unknown.
std::optional<TensorType> tensor_type_from_name(std::string_view name);

// Bytes of one row of n elements; nullopt when n is not a multiple of the block size or overflows.
std::optional<uint64_t> tensor_row_bytes(TensorType t, int64_t n);

}  // namespace edgeinfer
