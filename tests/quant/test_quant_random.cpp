// Every computable type on random data: quantize -> dequantize error budgets, reference dot
// products against the dot of the dequantized rows, hand-made blocks whose expected bytes
// follow from the published algorithms (rounding of ties, sign of the Q8_K scale), and the
// traits table itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "quant/blocks.h"
#include "quant/quant_rows.h"
#include "quant/type_traits.h"
#include "util/error.h"

namespace edgeinfer {
namespace {

using T = TensorType;

const T kAllTypes[] = {T::F32,  T::F16,  T::BF16, T::Q4_0, T::Q4_1, T::Q5_0, T::Q5_1, T::Q8_0,
                       T::Q8_1, T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K, T::Q8_K};

std::string name(T t) { return std::string(tensor_type_name(t)); }

// Relative RMS error budget of quantize -> dequantize on N(0,1) data with an outlier every 97
// elements and one offset block: 1.25x the measured values noted beside each.
double roundtrip_budget(T t) {
  switch (t) {
    case T::F32: return 0.0;
    case T::F16: return 2.6e-4;  // measured 2.08e-4
    case T::BF16: return 2.1e-3;  // 1.64e-3
    case T::Q8_0: case T::Q8_1: return 9.6e-3;  // 7.68e-3
    case T::Q8_K: return 2.0e-2;  // 1.62e-2 (one scale per 256: outliers cost more)
    case T::Q6_K: return 2.9e-2;  // 2.34e-2
    case T::Q5_1: return 5.4e-2;  // 4.35e-2
    case T::Q5_K: return 5.3e-2;  // 4.24e-2
    case T::Q5_0: return 7.6e-2;  // 6.11e-2
    case T::Q4_K: return 1.05e-1;  // 8.37e-2
    case T::Q4_1: return 1.12e-1;  // 8.97e-2
    case T::Q4_0: return 1.53e-1;  // 1.22e-1
    case T::Q3_K: return 2.3e-1;  // 1.86e-1
    case T::Q2_K: return 4.1e-1;  // 3.31e-1
    default: return 0.0;
  }
}

std::vector<float> random_rows(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = g(rng);
  // A few outliers and a block with an offset, as real weights/activations have.
  for (int64_t i = 0; i < n; i += 97) v[static_cast<size_t>(i)] *= 6.0f;
  for (int64_t i = 512; i < 768 && i < n; ++i) v[static_cast<size_t>(i)] += 1.5f;
  return v;
}

std::vector<uint8_t> quantize(T t, const std::vector<float>& x) {
  const TypeTraits& tr = type_traits(t);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> q(static_cast<size_t>(n / tr.block_size) * tr.type_size);
  tr.from_float_ref(x.data(), q.data(), n);
  return q;
}

std::vector<float> dequantize(T t, const std::vector<uint8_t>& q, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  type_traits(t).to_float(q.data(), y.data(), n);
  return y;
}

TEST(QuantTraits, TableIsConsistent) {
  for (T t : kAllTypes) {
    const TypeTraits* tr = find_type_traits(t);
    ASSERT_NE(tr, nullptr) << name(t);
    const TensorTypeInfo info = tensor_type_info(t);
    EXPECT_EQ(tr->type, t);
    EXPECT_EQ(tr->block_size, info.block_size) << name(t);
    EXPECT_EQ(tr->type_size, info.type_size) << name(t);
    EXPECT_EQ(tr->is_quantized, info.block_size > 1) << name(t);
    EXPECT_NE(tr->to_float, nullptr) << name(t);
    EXPECT_NE(tr->from_float_ref, nullptr) << name(t);
    EXPECT_NE(tr->vec_dot_ref, nullptr) << name(t);
  }
  auto dot_type = [](T t) { return type_traits(t).vec_dot_type; };
  EXPECT_EQ(dot_type(T::F32), T::F32);
  EXPECT_EQ(dot_type(T::F16), T::F16);
  EXPECT_EQ(dot_type(T::BF16), T::BF16);
  for (T t : {T::Q4_0, T::Q5_0, T::Q8_0}) EXPECT_EQ(dot_type(t), T::Q8_0) << name(t);
  for (T t : {T::Q4_1, T::Q5_1}) EXPECT_EQ(dot_type(t), T::Q8_1) << name(t);
  for (T t : {T::Q2_K, T::Q3_K, T::Q4_K, T::Q5_K, T::Q6_K}) EXPECT_EQ(dot_type(t), T::Q8_K) << name(t);

  for (T t : {T::IQ2_XXS, T::IQ4_NL, T::TQ1_0, T::I8, T::I32, T::F64}) {
    EXPECT_EQ(find_type_traits(t), nullptr) << name(t);
    EXPECT_THROW(type_traits(t), Error) << name(t);
  }
  try {
    type_traits(T::IQ2_XXS);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor type iq2_xxs is not supported");
  }
}

TEST(QuantRandom, RoundTripWithinBudget) {
  const int64_t n = 16 * 1024;
  const auto x = random_rows(n, 1234);
  double ref2 = 0;
  for (float v : x) ref2 += static_cast<double>(v) * v;
  for (T t : kAllTypes) {
    const auto y = dequantize(t, quantize(t, x), n);
    double err2 = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(y[static_cast<size_t>(i)]) - x[static_cast<size_t>(i)];
      err2 += d * d;
    }
    const double rel = std::sqrt(err2 / ref2);
    std::printf("  %-5s round-trip rel RMS %.3e (budget %.1e)\n", name(t).c_str(), rel, roundtrip_budget(t));
    EXPECT_LE(rel, roundtrip_budget(t)) << name(t);
    if (t != T::F32) {
      EXPECT_GT(rel, 0.0) << name(t);
    }
  }
}

TEST(QuantRandom, ZeroAndConstantBlocks) {
  // All-zero input must give all-zero output (no NaN from 0/0), and a constant block is
  // represented closely by every type.
  for (T t : kAllTypes) {
    for (float c : {0.0f, 0.75f, -3.0f}) {
      std::vector<float> x(512, c);
      const auto y = dequantize(t, quantize(t, x), 512);
      for (float v : y) {
        ASSERT_FALSE(std::isnan(v)) << name(t);
        ASSERT_NEAR(v, c, std::fabs(c) * 0.07 + 1e-6) << name(t) << " c=" << c;
      }
    }
  }
}

// Budget for |vec_dot_ref - dot(dequant x, dequant y)| / sum|x_i y_i| over the dequantized values.
// Both sides compute the same products; only the float summation order differs, except that
// Q8_1 carries s = d * sum(q) rounded to fp16, which the Q4_1/Q5_1 dots use for the min term.
double dot_budget(T t) {
  switch (t) {
    case T::Q4_1: case T::Q5_1: case T::Q8_1: return 5e-4;
    default: return 2e-5;
  }
}

TEST(QuantRandom, VecDotMatchesDequantizedDot) {
  const int64_t n = 4096;
  for (T t : kAllTypes) {
    const TypeTraits& tr = type_traits(t);
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      const auto xf = random_rows(n, seed);
      const auto yf = random_rows(n, 100 + seed);
      const auto xq = quantize(t, xf);
      const auto yq = quantize(tr.vec_dot_type, yf);
      const auto xd = dequantize(t, xq, n);
      const auto yd = dequantize(tr.vec_dot_type, yq, n);
      double want = 0, mag = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double p = static_cast<double>(xd[static_cast<size_t>(i)]) * yd[static_cast<size_t>(i)];
        want += p;
        mag += std::fabs(p);
      }
      float got = NAN;
      tr.vec_dot_ref(n, &got, xq.data(), yq.data());
      EXPECT_LE(std::fabs(got - want), dot_budget(t) * mag) << name(t) << " seed " << seed << " got " << got
                                                            << " want " << want;
    }
  }
}

TEST(QuantRandom, VecDotApproximatesFloatDot) {
  // Against the unquantized dot: error relative to |x||y| stays at the level of the weight and
  // activation quantization noise.
  const int64_t n = 4096;
  for (T t : kAllTypes) {
    const TypeTraits& tr = type_traits(t);
    const auto xf = random_rows(n, 77);
    const auto yf = random_rows(n, 78);
    double want = 0, nx = 0, ny = 0;
    for (int64_t i = 0; i < n; ++i) {
      want += static_cast<double>(xf[static_cast<size_t>(i)]) * yf[static_cast<size_t>(i)];
      nx += static_cast<double>(xf[static_cast<size_t>(i)]) * xf[static_cast<size_t>(i)];
      ny += static_cast<double>(yf[static_cast<size_t>(i)]) * yf[static_cast<size_t>(i)];
    }
    float got = NAN;
    tr.vec_dot_ref(n, &got, quantize(t, xf).data(), quantize(tr.vec_dot_type, yf).data());
    const double budget = roundtrip_budget(t) + roundtrip_budget(tr.vec_dot_type) + 1e-6;
    EXPECT_LE(std::fabs(got - want) / std::sqrt(nx * ny), budget) << name(t);
  }
}

// ---- hand-made blocks: the rounding rules of the activation quantizers -----------------------

TEST(QuantActivations, Q8_0RefRoundsHalfAwayFromZero) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;  // d = 1 exactly, multiplier 1
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 3.5f;
  x[4] = 0.49999997f;
  BlockQ8_0 b{};
  q8_0_from_float_ref(x.data(), &b, 32);
  EXPECT_EQ(b.d, 0x3c00);  // 1.0
  EXPECT_EQ(b.qs[0], 127);
  EXPECT_EQ(b.qs[1], 3);
  EXPECT_EQ(b.qs[2], -3);
  EXPECT_EQ(b.qs[3], 4);
  EXPECT_EQ(b.qs[4], 0);
  // llama.cpp's x86 activation path rounds ties to even instead.
  BlockQ8_0 c{};
  q8_0_from_float_x86(x.data(), &c, 32);
  EXPECT_EQ(c.d, 0x3c00);
  EXPECT_EQ(c.qs[1], 2);
  EXPECT_EQ(c.qs[2], -2);
  EXPECT_EQ(c.qs[3], 4);
}

TEST(QuantActivations, Q8_0RefUsesReciprocalOfRoundedScale) {
  // ref: q = round(x * (1 / (amax / 127))); x86 path: q = round(x * (127 / amax)). With amax = 3
  // the two multipliers differ in the last bit, and x = 1.5 * d sits right on a rounding edge.
  // Find a block maximum where the two multipliers differ in the last bit.
  float amax = 3.0f;
  while (1.0f / (amax / 127.0f) == 127.0f / amax) amax = std::nextafter(amax, 10.0f);
  std::vector<float> x(32, 0.0f);
  x[0] = amax;
  const float d = amax / 127.0f;
  const float m_ref = 1.0f / d, m_x86 = 127.0f / amax;
  ASSERT_NE(m_ref, m_x86);
  int found = 0;
  for (int k = 1; k < 31 && found < 4; ++k) {
    // search for an x where the two multipliers round differently
    for (float v = (k + 0.5f) * d * 0.999f; v < (k + 0.5f) * d * 1.001f; v = std::nextafter(v, 10.0f)) {
      if (std::round(v * m_ref) != std::nearbyint(v * m_x86)) {
        x[1 + found++] = v;
        break;
      }
    }
  }
  ASSERT_GT(found, 0);
  BlockQ8_0 a{}, b{};
  q8_0_from_float_ref(x.data(), &a, 32);
  q8_0_from_float_x86(x.data(), &b, 32);
  for (int j = 1; j <= found; ++j) {
    EXPECT_EQ(a.qs[j], static_cast<int8_t>(std::round(x[j] * m_ref))) << j;
    EXPECT_EQ(b.qs[j], static_cast<int8_t>(std::nearbyint(x[j] * m_x86))) << j;
    EXPECT_NE(a.qs[j], b.qs[j]) << j;
  }
}

TEST(QuantActivations, Q8_1CarriesScaledSum) {
  std::vector<float> x(32);
  for (int j = 0; j < 32; ++j) x[j] = 0.25f * static_cast<float>(j - 10);
  BlockQ8_1 b{};
  q8_1_from_float_ref(x.data(), &b, 32);
  int sum = 0;
  for (int j = 0; j < 32; ++j) sum += b.qs[j];
  const float d = (0.25f * 21) / 127.0f;
  EXPECT_EQ(b.d, fp32_to_fp16(d));
  EXPECT_EQ(b.s, fp32_to_fp16(static_cast<float>(sum) * d));
  EXPECT_EQ(b.qs[31], 127);
}

TEST(QuantActivations, Q8_KMapsLargestMagnitudeToMinus127) {
  std::vector<float> x(256, 0.0f);
  x[5] = 127.0f;  // first element of largest magnitude: iscale = -1, d = -1
  x[6] = -127.0f;  // same magnitude, later: maps to +127
  x[7] = 2.5f;     // tie: nearest even of -2.5 is -2
  x[8] = 3.5f;     // -3.5 -> -4
  x[17] = -0.5f;   // 0.5 -> 0
  BlockQ8_K b{};
  q8_k_from_float_ref(x.data(), &b, 256);
  EXPECT_EQ(b.d, -1.0f);
  EXPECT_EQ(b.qs[5], -127);
  EXPECT_EQ(b.qs[6], 127);
  EXPECT_EQ(b.qs[7], -2);
  EXPECT_EQ(b.qs[8], -4);
  EXPECT_EQ(b.qs[17], 0);
  EXPECT_EQ(b.bsums[0], -127 + 127 - 2 - 4);
  EXPECT_EQ(b.bsums[1], 0);
  // Negative extreme: scale positive.
  std::vector<float> y(256, 0.0f);
  y[0] = -2.0f;
  y[1] = 1.0f;
  BlockQ8_K c{};
  q8_k_from_float_ref(y.data(), &c, 256);
  EXPECT_EQ(c.qs[0], -127);
  EXPECT_EQ(c.qs[1], 64);  // 63.5 -> 64 (even)
  EXPECT_FLOAT_EQ(c.d, 2.0f / 127.0f);
  // All zero: zero block.
  std::vector<float> z(256, 0.0f);
  BlockQ8_K e;
  std::memset(&e, 0x5a, sizeof e);
  q8_k_from_float_ref(z.data(), &e, 256);
  EXPECT_EQ(e.d, 0.0f);
  for (int j = 0; j < 256; ++j) ASSERT_EQ(e.qs[j], 0);
  for (int j = 0; j < 16; ++j) ASSERT_EQ(e.bsums[j], 0);
}

TEST(QuantActivations, Q4_0AndQ5_0PutExtremeOnLowestLevel) {
  std::vector<float> x(32, 0.0f);
  x[3] = -4.0f;  // largest magnitude, negative: d = 0.5, quant 0 after +8 offset -> 16 clamps
  x[4] = 2.0f;
  BlockQ4_0 b{};
  q4_0_from_float_ref(x.data(), &b, 32);
  EXPECT_EQ(b.d, fp32_to_fp16(0.5f));
  EXPECT_EQ(b.qs[3] & 0x0f, 0);  // -4 / 0.5 = -8 -> level 0
  EXPECT_EQ(b.qs[4] & 0x0f, 12); // 4 + 8
  x[3] = 4.0f;  // positive extreme: d = -0.5, 4 -> -8 -> level 0, 2 -> -4 -> 4
  q4_0_from_float_ref(x.data(), &b, 32);
  EXPECT_EQ(b.d, fp32_to_fp16(-0.5f));
  EXPECT_EQ(b.qs[3] & 0x0f, 0);
  EXPECT_EQ(b.qs[4] & 0x0f, 4);
  BlockQ5_0 c{};
  q5_0_from_float_ref(x.data(), &c, 32);
  EXPECT_EQ(c.d, fp32_to_fp16(-0.25f));
  EXPECT_EQ(c.qs[3] & 0x0f, 0);
  EXPECT_EQ(c.qs[4] & 0x0f, 8);  // 2 / -0.25 = -8 -> 8 (+16 offset), fifth bit 0
  uint32_t qh;
  std::memcpy(&qh, c.qh, 4);
  EXPECT_EQ((qh >> 3) & 1u, 0u);
  EXPECT_EQ((qh >> 0) & 1u, 1u);  // zeros -> level 16 -> fifth bit set
}

// ---- the scalar kernel table -----------------------------------------------------------------

TEST(ScalarKernels, TableUsesTheReferences) {
  const Kernels& k = kernels_for(Isa::Scalar);
  for (T t : kAllTypes) {
    const TypeTraits& tr = type_traits(t);
    EXPECT_EQ(k.vec_dot[static_cast<uint32_t>(t)], tr.vec_dot_ref) << name(t);
    EXPECT_EQ(k.from_float[static_cast<uint32_t>(t)], tr.from_float_ref) << name(t);
  }
  EXPECT_EQ(k.vec_dot[static_cast<uint32_t>(T::IQ2_XXS)], nullptr);
}

}  // namespace
}  // namespace edgeinfer
