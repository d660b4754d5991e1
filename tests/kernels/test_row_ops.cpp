// The forward pass's row operations of kernels/ops.h that have no SIMD twin: RMSNorm (its sum of
// squares in eight partial sums) against the reference engine's single running sum, and RoPE's
// two steps (the angles of a position once, the rotation of every head with them) against the
// rotation written out in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/ops.h"

namespace edgeinfer {
namespace {

// The reference engine's order: one double sum of the f32 squares, element by element.
std::vector<float> rms_norm_reference(const std::vector<float>& x, const float* w, float eps) {
  double sum = 0.0;
  for (float v : x) sum += static_cast<double>(v * v);
  const float mean = static_cast<float>(sum / static_cast<double>(x.size()));
  const float scale = 1.0f / std::sqrt(mean + eps);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = w ? (x[i] * scale) * w[i] : x[i] * scale;
  return y;
}

TEST(RmsNorm, MatchesTheSequentialSumForEveryLengthAndTail) {
  std::mt19937 rng(5);
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 40; ++n) lengths.push_back(n);
  for (int64_t n : {896, 2048, 2051, 5632}) lengths.push_back(n);
  for (int64_t n : lengths) {
    for (float spread : {1e-3f, 1.0f, 300.0f}) {
      std::normal_distribution<float> dist(0.0f, spread);
      std::vector<float> x(static_cast<size_t>(n)), w(static_cast<size_t>(n));
      for (auto& v : x) v = dist(rng);
      for (auto& v : w) v = 1.0f + 0.1f * dist(rng) / spread;
      for (const float* wp : {static_cast<const float*>(w.data()), static_cast<const float*>(nullptr)}) {
        const std::vector<float> want = rms_norm_reference(x, wp, 1e-5f);
        std::vector<float> got(x.size());
        rms_norm(x.data(), wp, got.data(), n, 1e-5f);
        // The partial sums round differently in double (1e-16 relative); the f32 mean can move
        // by one ulp at most, the outputs by a few.
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_NEAR(got[i], want[i], 4e-7f * std::fabs(want[i]) + 1e-30f) << "n " << n << " i " << i;
        }
        // In place (y aliasing x) gives the same bits.
        std::vector<float> inplace = x;
        rms_norm(inplace.data(), wp, inplace.data(), n, 1e-5f);
        ASSERT_EQ(inplace, got) << "n " << n;
      }
    }
  }
}

TEST(RmsNorm, EveryElementCountsInTheSum) {
  // One large element at each position in turn: a sum that skipped the tail or a lane would
  // leave the output near 1 instead of near 1/sqrt(1 + 100^2 / n) for the small ones.
  for (int64_t n : {7, 8, 9, 17, 64, 71}) {
    for (int64_t big = 0; big < n; ++big) {
      std::vector<float> x(static_cast<size_t>(n), 1.0f), y(static_cast<size_t>(n));
      x[static_cast<size_t>(big)] = 100.0f;
      rms_norm(x.data(), nullptr, y.data(), n, 0.0f);
      const double mean = (static_cast<double>(n - 1) + 1e4) / static_cast<double>(n);
      ASSERT_NEAR(y[big == 0 ? 1 : 0], 1.0 / std::sqrt(mean), 1e-6) << "n " << n << " big " << big;
    }
  }
}

struct RopeCase {
  int64_t head_dim, n_rot;
  bool neox;
  bool factors;
};

TEST(Rope, AnglesAndRotationMatchTheFormula) {
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (const RopeCase rc : {RopeCase{64, 64, false, false}, RopeCase{64, 64, true, false}, RopeCase{128, 64, true, true},
                            RopeCase{80, 32, false, true}}) {
    std::vector<float> factors(static_cast<size_t>(rc.n_rot / 2));
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + static_cast<float>(i % 5);
    const RopeParams p{rc.head_dim, rc.n_rot, 10000.0f, 0.5f, rc.factors ? factors.data() : nullptr, rc.neox};
    for (int64_t pos : {0, 1, 7, 300, 4095}) {
      std::vector<float> cs(static_cast<size_t>(rc.n_rot));
      rope_angles(pos, p, cs.data());
      const int64_t half = rc.n_rot / 2;
      for (int64_t i = 0; i < half; ++i) {
        const double theta = static_cast<double>(pos) * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(rc.n_rot)) *
                             0.5 / (rc.factors ? factors[static_cast<size_t>(i)] : 1.0);
        // The angle advances by repeated f32 multiplication (as the reference engine does): its
        // error grows with the position and the pair.
        const double tol = 1e-6 + std::fabs(theta) * 6e-8 * static_cast<double>(i + 2);
        ASSERT_NEAR(cs[static_cast<size_t>(2 * i)], std::cos(theta), tol) << "pos " << pos << " i " << i;
        ASSERT_NEAR(cs[static_cast<size_t>(2 * i + 1)], std::sin(theta), tol) << "pos " << pos << " i " << i;
      }
      const int64_t n_heads = 3;
      std::vector<float> x(static_cast<size_t>(n_heads * rc.head_dim));
      for (auto& v : x) v = dist(rng);
      std::vector<float> y = x;
      rope_rotate(y.data(), n_heads, cs.data(), p);
      for (int64_t h = 0; h < n_heads; ++h) {
        const float* xh = x.data() + h * rc.head_dim;
        const float* yh = y.data() + h * rc.head_dim;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t a = rc.neox ? i : 2 * i, b = rc.neox ? i + half : 2 * i + 1;
          const double c = cs[static_cast<size_t>(2 * i)], s = cs[static_cast<size_t>(2 * i + 1)];
          ASSERT_NEAR(yh[a], xh[a] * c - xh[b] * s, 1e-6) << "head " << h << " pair " << i;
          ASSERT_NEAR(yh[b], xh[a] * s + xh[b] * c, 1e-6) << "head " << h << " pair " << i;
        }
        // Dimensions past n_rot do not rotate.
        for (int64_t d = rc.n_rot; d < rc.head_dim; ++d) ASSERT_EQ(yh[d], xh[d]) << "head " << h << " dim " << d;
      }
      if (pos == 0) {
        EXPECT_EQ(y, x) << "position 0 is the identity";
      }
    }
  }
}

}  // namespace
}  // namespace edgeinfer
