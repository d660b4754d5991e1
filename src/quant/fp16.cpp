// IEEE binary16 and bfloat16 scalar conversions. Round-to-nearest-even everywhere; results are
// bit-identical to x86 F16C (vcvtps2ph with imm 0 / vcvtph2ps) including subnormals, infinities
// and NaN payloads (NaNs come out quiet, keeping the top payload bits).
#include <bit>
#include <cstdint>

#include "quant/type_traits.h"

namespace edgeinfer {

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    // Inf keeps a zero mantissa; NaN keeps its payload and is made quiet.
    bits = sign | 0x7f800000u | (mant << 13) | (mant ? 0x00400000u : 0u);
  } else if (exp != 0) {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal half: mant * 2^-24, exactly representable as a normal float. Normalize so
    // the leading one becomes the hidden bit.
    int shift = std::countl_zero(mant) - 21;  // leading zeros within the 10-bit field, +1
    uint32_t m = (mant << shift) & 0x3ffu;
    uint32_t e = static_cast<uint32_t>(127 - 15 + 1 - shift);
    bits = sign | (e << 23) | (m << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) {  // NaN: quiet, top 9 payload bits kept
    return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  }
  if (ax >= 0x477ff000u) {  // >= 65520 (half of the step above 65504) rounds to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (ax >= 0x38800000u) {  // result is a normal half (>= 2^-14)
    // Rebias the exponent (127 -> 15) in place, then drop 13 mantissa bits rounding to even;
    // a carry out of the mantissa correctly bumps the exponent.
    uint32_t h = (ax - (112u << 23)) >> 13;
    const uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal half (or zero): value / 2^-24 rounded to even.
  const uint32_t e = ax >> 23;
  if (e < 102) return sign;  // below 2^-25: rounds to zero (float subnormals included)
  const uint32_t m = (ax & 0x7fffffu) | 0x800000u;  // value = m * 2^(e - 150)
  const uint32_t s = 126 - e;                        // value / 2^-24 = m >> s, s in [14, 24]
  uint32_t q = m >> s;
  const uint32_t rem = m & ((1u << s) - 1);
  const uint32_t half = 1u << (s - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

float bf16_to_fp32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t fp32_to_bf16(float f) {
  // GGML's rule: NaN is truncated and forced quiet; everything else (subnormals included)
  // rounds to nearest even on the dropped 16 bits.
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace edgeinfer
