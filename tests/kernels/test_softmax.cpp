// Attention's softmax of every SIMD path against the scalar reference (exp in f32 within a few
// ulp, the denominator summed in f32 lanes rather than double: over 4097 scores on 8 NEON
// lanes that alone reaches ~1e-6): each probability within 2^-18 relative (+1e-37 absolute,
// for values near the smallest normal) of the reference; with
// f16 rounding, every result is an f16 value within one f16 step of the reference's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_data.h"
#include "quant/type_traits.h"

namespace edgeinfer::kernel_test {
namespace {

class Softmax : public ::testing::TestWithParam<Isa> {};

std::vector<float> scores(int64_t n, float spread, std::mt19937& rng) {
  std::normal_distribution<float> g(0.0f, spread);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = g(rng);
  return v;
}

TEST_P(Softmax, MatchesScalarReference) {
  const Kernels& k = kernels_for(GetParam());
  const Kernels& ref = kernels_for(Isa::Scalar);
  ASSERT_NE(k.softmax, nullptr);
  std::mt19937 rng(21);
  for (int64_t n : {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 100, 1000, 4097}) {
    // Spread 30: many probabilities underflow towards zero, some below the smallest normal.
    for (float spread : {0.1f, 1.0f, 5.0f, 30.0f}) {
      const auto x = scores(n, spread, rng);
      for (bool round : {false, true}) {
        std::vector<float> a = x, b = x;
        k.softmax(a.data(), n, round);
        ref.softmax(b.data(), n, round);
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          const float got = a[static_cast<size_t>(i)], want = b[static_cast<size_t>(i)];
          sum += got;
          ASSERT_TRUE(std::isfinite(got) && got >= 0.0f) << isa_label(GetParam()) << " n=" << n << " i=" << i;
          if (round) {
            const float as_f16 = fp16_to_fp32(fp32_to_fp16(got));
            ASSERT_EQ(as_f16, got) << "not an f16 value: " << got;
            const float step = std::max(std::ldexp(1.0f, -24), std::fabs(want) * std::ldexp(1.0f, -10));
            ASSERT_LE(std::fabs(got - want), step) << isa_label(GetParam()) << " n=" << n << " spread=" << spread
                                                   << " i=" << i << " got " << got << " want " << want;
          } else {
            ASSERT_LE(std::fabs(static_cast<double>(got) - want), std::ldexp(std::fabs(want), -18) + 1e-37)
                << isa_label(GetParam()) << " n=" << n << " spread=" << spread << " i=" << i << " got " << got
                << " want " << want;
          }
        }
        if (!round) {
          EXPECT_NEAR(sum, 1.0, 1e-5) << isa_label(GetParam()) << " n=" << n;
        }
      }
    }
  }
}

// Ties and a single dominant score: exact 1 and 0 where the reference gives them.
TEST_P(Softmax, DominantAndEqualScores) {
  const Kernels& k = kernels_for(GetParam());
  std::vector<float> x(40, 0.0f);
  k.softmax(x.data(), 40, false);
  for (float v : x) EXPECT_NEAR(v, 1.0f / 40, 1e-8f);
  std::vector<float> y(33, -1000.0f);
  y[17] = 50.0f;
  k.softmax(y.data(), 33, true);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], i == 17 ? 1.0f : 0.0f) << i;
}

INSTANTIATE_TEST_SUITE_P(Isas, Softmax, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
