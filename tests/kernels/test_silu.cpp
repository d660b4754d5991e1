// The feed-forward SiLU·mul of every SIMD path against the scalar reference (kernels/ops.h):
// the SIMD exp is within 2 ulp of expf and the rest is the reference's operations in its order,
// so each result is within 2^-20 relative of the reference (a few ulp), plus 1e-36 * max(1, |up|)
// absolute for far negative gates: the SIMD exp clamps its argument at 88.38 (e^88.38 = 2.4e38),
// where expf goes on to overflow to infinity, so below gate -88.4 the kernel gives
// gate / 2.4e38 * up (under 1e-36 * |up| for any gate the model produces) where the reference
// gives zero. Every length from 1 to 70 runs each tail; in place (out = gate) gives the same
// bits as out of place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernel_test_data.h"
#include "kernels/ops.h"

namespace edgeinfer::kernel_test {
namespace {

class SiluMul : public ::testing::TestWithParam<Isa> {};

TEST_P(SiluMul, MatchesScalarReference) {
  const Kernels& k = kernels_for(GetParam());
  ASSERT_NE(k.silu_mul, nullptr);
  std::mt19937 rng(31);
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 70; ++n) lengths.push_back(n);
  for (int64_t n : {1000, 5632}) lengths.push_back(n);
  for (int64_t n : lengths) {
    for (float spread : {0.5f, 3.0f, 40.0f}) {
      std::normal_distribution<float> dist(0.0f, spread);
      std::vector<float> g(static_cast<size_t>(n)), u(static_cast<size_t>(n));
      for (auto& v : g) v = dist(rng);
      for (auto& v : u) v = dist(rng);
      if (n > 8) {  // the edges of exp's range and of the clamp
        g[0] = -87.5f;
        g[1] = 87.5f;
        g[2] = -89.0f;
        g[3] = -100.0f;
        g[4] = 0.0f;
        g[5] = -0.0f;
        g[6] = 1e-30f;
      }
      std::vector<float> want(static_cast<size_t>(n)), have(static_cast<size_t>(n), NAN);
      silu_mul(g.data(), u.data(), want.data(), n);
      k.silu_mul(g.data(), u.data(), have.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double w = want[static_cast<size_t>(i)], h = have[static_cast<size_t>(i)];
        const double up = std::fabs(static_cast<double>(u[static_cast<size_t>(i)]));
        const double budget = std::ldexp(std::fabs(w), -20) + 1e-36 * std::max(1.0, up);
        ASSERT_LE(std::fabs(w - h), budget) << isa_name(GetParam()) << " n=" << n << " i=" << i << " gate "
                                           << g[static_cast<size_t>(i)] << " up " << u[static_cast<size_t>(i)]
                                           << ": reference " << w << ", kernel " << h;
      }
      std::vector<float> inplace = g;
      k.silu_mul(inplace.data(), u.data(), inplace.data(), n);
      ASSERT_EQ(std::memcmp(inplace.data(), have.data(), sizeof(float) * static_cast<size_t>(n)), 0)
          << isa_name(GetParam()) << " n=" << n << ": in place differs";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, SiluMul, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
