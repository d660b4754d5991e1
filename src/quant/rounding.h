#pragma once
// Rounding helpers shared by the quantizers. They must round exactly as GGML does, since the
// quantizers are bit-exact with GGML's reference code.
#include <bit>
#include <cmath>
#include <cstdint>

namespace edgeinfer::quant_detail {

// Round to nearest, ties to even, for |v| < 2^22, independent of the FP environment:
// adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits.
inline int nearest_int(float v) {
  const float biased = v + 12582912.0f;
  return static_cast<int>(std::bit_cast<uint32_t>(biased) & 0x007fffffu) - 0x00400000;
}

// C's roundf: ties away from zero.
inline float round_away(float v) { return std::round(v); }

}  // namespace edgeinfer::quant_detail
