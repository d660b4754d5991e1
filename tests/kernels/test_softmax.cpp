// Attention's online-softmax step (Kernels::softmax_step) of every SIMD path:
//  - step by step against the scalar reference (ops.h softmax_step), over chains of blocks whose
//    maxima rise, fall and repeat: the maximum bit for bit, each exponential within 2^-18
//    relative (+1e-37 absolute, near the smallest normal), the rescale factor and the running
//    denominator within 2^-18 relative (the reference sums a block in double, the SIMD paths in
//    f32 lanes);
//  - a chain folded back (each block's values times the later factors, over the final
//    denominator) equals a double-precision softmax of the whole row within 1e-5 relative;
//  - the contract's exact values: factor 0 for the first block, exactly 1 when the maximum
//    stays, ties and a dominant score.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_data.h"

namespace edgeinfer::kernel_test {
namespace {

class SoftmaxStep : public ::testing::TestWithParam<Isa> {};

std::vector<float> scores(int64_t n, float mean, float spread, std::mt19937& rng) {
  std::normal_distribution<float> g(mean, spread);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = g(rng);
  return v;
}

double rel_err(double got, double want) { return std::fabs(got - want) / std::max(std::fabs(want), 1e-30); }

TEST_P(SoftmaxStep, MatchesScalarReferenceStepByStep) {
  const Kernels& k = kernels_for(GetParam());
  const Kernels& ref = kernels_for(Isa::Scalar);
  ASSERT_NE(k.softmax_step, nullptr);
  std::mt19937 rng(21);
  for (int64_t n : {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 1024}) {
    // Spread 30: many values underflow towards zero, some below the smallest normal.
    for (float spread : {0.1f, 1.0f, 5.0f, 30.0f}) {
      for (float scale : {1.0f, 0.125f}) {
        float m_a = -INFINITY, s_a = 0, m_b = -INFINITY, s_b = 0;
        // Block means: rising (the maximum moves), falling (it stays), rising again.
        for (float mean : {-3.0f, 0.0f, -2.0f, -5.0f, 4.0f}) {
          const auto x = scores(n, mean, spread, rng);
          std::vector<float> a = x, b = x;
          const float ca = k.softmax_step(a.data(), n, scale, &m_a, &s_a);
          const float cb = ref.softmax_step(b.data(), n, scale, &m_b, &s_b);
          ASSERT_EQ(m_a, m_b) << isa_label(GetParam()) << " n=" << n;
          ASSERT_TRUE(ca == cb || rel_err(ca, cb) <= std::ldexp(1.0, -18))
              << isa_label(GetParam()) << " n=" << n << " factor " << ca << " want " << cb;
          ASSERT_LE(rel_err(s_a, s_b), std::ldexp(1.0, -18)) << isa_label(GetParam()) << " n=" << n << " spread=" << spread;
          for (int64_t i = 0; i < n; ++i) {
            const float got = a[static_cast<size_t>(i)], want = b[static_cast<size_t>(i)];
            ASSERT_TRUE(std::isfinite(got) && got >= 0.0f && got <= 1.0f) << isa_label(GetParam()) << " n=" << n << " i=" << i;
            ASSERT_LE(std::fabs(static_cast<double>(got) - want), std::ldexp(std::fabs(want), -18) + 1e-37)
                << isa_label(GetParam()) << " n=" << n << " spread=" << spread << " i=" << i << " got " << got << " want "
                << want;
          }
        }
      }
    }
  }
}

TEST_P(SoftmaxStep, ChainEqualsWholeRowSoftmax) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(22);
  for (int64_t block : {1, 5, 16, 64}) {
    for (int64_t n : {1, 16, 63, 64, 65, 300}) {
      const float scale = 0.3f;
      const auto x = scores(n, 0.0f, 4.0f, rng);
      std::vector<float> p = x;
      std::vector<int64_t> first;  // first index of each block
      std::vector<float> factor;   // each block's returned factor
      float m = -INFINITY, sum = 0;
      for (int64_t b0 = 0; b0 < n; b0 += block) {
        first.push_back(b0);
        factor.push_back(k.softmax_step(p.data() + b0, std::min(block, n - b0), scale, &m, &sum));
      }
      EXPECT_EQ(factor[0], 0.0f);
      double mx = -1e300, z = 0;
      for (float v : x) mx = std::max(mx, static_cast<double>(v) * scale);
      for (float v : x) z += std::exp(static_cast<double>(v) * scale - mx);
      for (size_t b = 0; b < first.size(); ++b) {
        double later = 1.0;
        for (size_t c = b + 1; c < first.size(); ++c) later *= factor[c];
        const int64_t end = b + 1 < first.size() ? first[b + 1] : n;
        for (int64_t i = first[b]; i < end; ++i) {
          const double want = std::exp(static_cast<double>(x[static_cast<size_t>(i)]) * scale - mx) / z;
          const double got = p[static_cast<size_t>(i)] * later / sum;
          ASSERT_NEAR(got, want, 1e-5 * want + 1e-30) << isa_label(GetParam()) << " block " << block << " n=" << n << " i=" << i;
        }
      }
    }
  }
}

// The contract's exact values.
TEST_P(SoftmaxStep, FirstBlockStayingMaximumTiesAndDominantScore) {
  const Kernels& k = kernels_for(GetParam());
  float m = -INFINITY, sum = 0;
  std::vector<float> x(40, 2.0f);
  EXPECT_EQ(k.softmax_step(x.data(), 40, 0.5f, &m, &sum), 0.0f);  // first block
  EXPECT_EQ(m, 1.0f);
  for (float v : x) EXPECT_EQ(v, 1.0f);  // ties at the maximum: e^0
  EXPECT_EQ(sum, 40.0f);
  std::vector<float> y(33, -1000.0f);
  y[17] = 2.0f;  // reaches the maximum, does not raise it
  EXPECT_EQ(k.softmax_step(y.data(), 33, 0.5f, &m, &sum), 1.0f);
  EXPECT_EQ(m, 1.0f);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], i == 17 ? 1.0f : 0.0f) << i;
  EXPECT_EQ(sum, 41.0f);
  std::vector<float> z(3, 2000.0f);  // a new maximum far above: the old sum vanishes
  const float c = k.softmax_step(z.data(), 3, 0.5f, &m, &sum);
  EXPECT_EQ(m, 1000.0f);
  EXPECT_EQ(c, 0.0f);
  EXPECT_EQ(sum, 3.0f);
}

INSTANTIATE_TEST_SUITE_P(Isas, SoftmaxStep, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
