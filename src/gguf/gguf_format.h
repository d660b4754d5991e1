#pragma once
// Facts about the GGUF byte layout shared by the reader and the writer: magic, limits, the
// smallest encoding of each value kind (used to bound counts before allocating), and
// little-endian loads/stores that do not depend on the host byte order or alignment.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gguf/gguf_value.h"

namespace edgeinfer {

inline constexpr char kGgufMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kGgufWriteVersion = 3;
inline constexpr uint64_t kGgufDefaultAlignment = 32;
inline constexpr std::string_view kGgufAlignmentKey = "general.alignment";
inline constexpr uint32_t kGgufMaxDims = 4;
// Arrays of arrays deeper than this are rejected: real files nest at most one level, and the
// reader recurses once per level.
inline constexpr int kGgufMaxArrayDepth = 8;
// Smallest metadata pair: key length (8) + value type (4) + a one-byte value.
inline constexpr uint64_t kGgufMinKvBytes = 13;
// Smallest tensor info: name length (8) + n_dims (4) + one dimension (8) + type (4) + offset (8).
inline constexpr uint64_t kGgufMinTensorInfoBytes = 32;

inline bool gguf_value_type_valid(uint32_t raw) { return raw <= static_cast<uint32_t>(GgufValueType::FLOAT64); }

inline bool gguf_value_type_is_signed(GgufValueType t) {
  return t == GgufValueType::INT8 || t == GgufValueType::INT16 || t == GgufValueType::INT32 ||
         t == GgufValueType::INT64;
}

inline bool gguf_value_type_is_unsigned(GgufValueType t) {
  return t == GgufValueType::UINT8 || t == GgufValueType::UINT16 || t == GgufValueType::UINT32 ||
         t == GgufValueType::UINT64;
}

// Bytes one element of type t takes at the least: its fixed size for scalars, the length field
// for a string, element type + count for an array.
inline uint64_t gguf_min_encoded_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::UINT8:
    case GgufValueType::INT8:
    case GgufValueType::BOOL: return 1;
    case GgufValueType::UINT16:
    case GgufValueType::INT16: return 2;
    case GgufValueType::UINT32:
    case GgufValueType::INT32:
    case GgufValueType::FLOAT32: return 4;
    case GgufValueType::UINT64:
    case GgufValueType::INT64:
    case GgufValueType::FLOAT64:
    case GgufValueType::STRING: return 8;
    case GgufValueType::ARRAY: return 12;
  }
  return 1;
}

template <typename T>
T gguf_load_le(const uint8_t* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  T v;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, sizeof(T));
  } else {
    uint8_t tmp[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) tmp[i] = p[sizeof(T) - 1 - i];
    std::memcpy(&v, tmp, sizeof(T));
  }
  return v;
}

template <typename T>
void gguf_store_le(T v, uint8_t* p) {
  static_assert(std::is_trivially_copyable_v<T>);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, sizeof(T));
  } else {
    uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &v, sizeof(T));
    for (size_t i = 0; i < sizeof(T); ++i) p[i] = tmp[sizeof(T) - 1 - i];
  }
}

// A name from the file, quoted for an error message: control bytes escaped, long names cut.
inline std::string gguf_printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  constexpr size_t kMax = 120;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (s.size() > kMax) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

// "4096 x 4096" for the first n dimensions of ne (all by default).
inline std::string gguf_shape_string(const std::vector<int64_t>& ne, size_t n = SIZE_MAX) {
  std::string s;
  for (size_t i = 0; i < ne.size() && i < n; ++i) {
    if (i) s += " x ";
    s += std::to_string(ne[i]);
  }
  return s;
}

}  // namespace edgeinfer
