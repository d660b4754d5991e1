// fp16 / bf16 scalar conversions: exhaustive over all 65536 half values, tricky floats against
// an independent nearest-value search, and (where the CPU has F16C) against the hardware.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "quant/type_traits.h"

#if defined(EDGEINFER_ARCH_X86)
#include <immintrin.h>
#endif

namespace edgeinfer {
namespace {

bool is_half_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

// Independent value of a half: sign * 2^(e-15) * (1 + m/1024), or subnormal m * 2^-24.
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 0x1f) return m ? std::numeric_limits<double>::quiet_NaN() : s * INFINITY;
  if (e == 0) return s * std::ldexp(m, -24);
  return s * std::ldexp(1024 + m, e - 25);
}

// Round-to-nearest-even by search over the finite halves (the ordering of positive half bit
// patterns is the ordering of their values); overflow follows IEEE: >= 65520 becomes Inf.
uint16_t half_by_search(float f) {
  const double v = std::fabs(static_cast<double>(f));
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (v >= 65520.0) return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff;  // largest finite half <= v
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (half_value(mid) <= v) lo = mid; else hi = static_cast<uint16_t>(mid - 1);
  }
  if (lo == 0x7bff) return sign | lo;  // between 65504 and 65520: rounds down
  const double below = half_value(lo), above = half_value(static_cast<uint16_t>(lo + 1));
  const double dl = v - below, du = above - v;
  uint16_t r = lo;
  if (du < dl || (du == dl && (lo & 1))) r = static_cast<uint16_t>(lo + 1);
  return sign | r;
}

TEST(Fp16, ExhaustiveHalfToFloatMatchesIndependentValue) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = fp16_to_fp32(static_cast<uint16_t>(h));
    if (is_half_nan(static_cast<uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      const uint32_t bits = std::bit_cast<uint32_t>(f);
      EXPECT_EQ(bits >> 31, h >> 15) << std::hex << h;                 // sign kept
      EXPECT_EQ((bits >> 13) & 0x1ffu, h & 0x1ffu) << std::hex << h;   // payload kept
      EXPECT_NE(bits & 0x00400000u, 0u) << std::hex << h;              // made quiet
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), half_value(static_cast<uint16_t>(h))) << std::hex << h;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
  }
}

TEST(Fp16, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t back = fp32_to_fp16(fp16_to_fp32(static_cast<uint16_t>(h)));
    if (is_half_nan(static_cast<uint16_t>(h))) {
      EXPECT_EQ(back, h | 0x200) << std::hex << h;  // quiet bit set, rest kept
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
    }
  }
}

std::vector<float> tricky_floats() {
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f,
                          INFINITY, -INFINITY, std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                          std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
                          std::nextafter(std::ldexp(1.0f, -25), 1.0f), std::ldexp(3.0f, -26),
                          std::ldexp(1.0f, -26), 0.1f, 0.2f, 1.0f / 3.0f, 2049.0f, 2051.0f, 4097.0f};
  // Every exact midpoint between consecutive finite halves, and its two float neighbours.
  for (uint32_t h = 0; h < 0x7bff; h += 7) {
    const double mid = (half_value(static_cast<uint16_t>(h)) + half_value(static_cast<uint16_t>(h + 1))) / 2;
    const float m = static_cast<float>(mid);
    v.push_back(m);
    v.push_back(std::nextafter(m, 0.0f));
    v.push_back(std::nextafter(m, INFINITY));
    v.push_back(-m);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const uint32_t bits = rng();
    const float f = std::bit_cast<float>(bits);
    if (!std::isnan(f)) v.push_back(f);
    v.push_back(std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng),
                           std::uniform_int_distribution<int>(-28, 17)(rng)));
  }
  return v;
}

TEST(Fp16, FloatToHalfOnTrickyValuesMatchesNearestEvenSearch) {
  for (float f : tricky_floats()) ASSERT_EQ(fp32_to_fp16(f), half_by_search(f)) << f;
}

TEST(Fp16, FloatToHalfNaNStaysNaN) {
  const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu, 0x7fffe000u, 0xff802000u};
  for (uint32_t bits : nans) {
    const uint16_t h = fp32_to_fp16(std::bit_cast<float>(bits));
    EXPECT_TRUE(is_half_nan(h)) << std::hex << bits;
    EXPECT_EQ(h >> 15, bits >> 31) << std::hex << bits;
    EXPECT_NE(h & 0x200, 0) << std::hex << bits;
  }
}

#if defined(EDGEINFER_ARCH_X86)
__attribute__((target("f16c"))) uint16_t hw_fp32_to_fp16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, 0));
}
__attribute__((target("f16c"))) float hw_fp16_to_fp32(uint16_t h) { return _cvtsh_ss(h); }

TEST(Fp16, MatchesF16CHardware) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this CPU";
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(std::bit_cast<uint32_t>(fp16_to_fp32(static_cast<uint16_t>(h))),
              std::bit_cast<uint32_t>(hw_fp16_to_fp32(static_cast<uint16_t>(h))))
        << std::hex << h;
  }
  std::vector<float> v = tricky_floats();
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));  // NaNs too
  for (float f : v) {
    ASSERT_EQ(fp32_to_fp16(f), hw_fp32_to_fp16(f)) << std::hex << std::bit_cast<uint32_t>(f);
  }
}
#endif

TEST(Bf16, ExhaustiveRoundTrip) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = bf16_to_fp32(static_cast<uint16_t>(h));
    ASSERT_EQ(std::bit_cast<uint32_t>(f), h << 16);
    const uint16_t back = fp32_to_bf16(f);
    if (std::isnan(f)) {
      EXPECT_EQ(back, h | 0x40) << std::hex << h;  // quiet
    } else {
      ASSERT_EQ(back, h) << std::hex << h;
    }
  }
}

TEST(Bf16, RoundsToNearestEven) {
  // 1 + 2^-8 is the midpoint between 1 and 1 + 2^-7: ties go to the even mantissa (1).
  EXPECT_EQ(fp32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3*2^-8 is the midpoint between 1+2^-7 (odd) and 1+2^-6 (even).
  EXPECT_EQ(fp32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(fp32_to_bf16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)), 0x3f81);
  EXPECT_EQ(fp32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to Inf
  EXPECT_EQ(fp32_to_bf16(-INFINITY), 0xff80);
  // Subnormals are rounded, not flushed.
  EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x00018000u)), 0x0002);
  EXPECT_EQ(fp32_to_bf16(std::bit_cast<float>(0x7f800001u)), 0x7fc0);  // sNaN -> quiet NaN
  std::mt19937 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    // Independent check: the result is one of the two truncation neighbours, the nearer one.
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    const uint16_t r = fp32_to_bf16(f);
    const uint16_t down = static_cast<uint16_t>(bits >> 16);
    ASSERT_TRUE(r == down || r == down + 1);
    const double e_down = std::fabs(static_cast<double>(bf16_to_fp32(down)) - f);
    const double e_r = std::fabs(static_cast<double>(bf16_to_fp32(r)) - f);
    if (!std::isinf(bf16_to_fp32(r))) {
      ASSERT_LE(e_r, e_down);
    }
  }
}

}  // namespace
}  // namespace edgeinfer
