// vec_dot of every SIMD path against the scalar reference, per type, within dot_budget
// (kernel_test_data.h), over many row lengths (including every tail case of the float types)
// and random rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernel_test_data.h"
#include "quant/type_traits.h"

namespace edgeinfer::kernel_test {
namespace {

class VecDot : public ::testing::TestWithParam<Isa> {};

std::vector<int64_t> dot_lengths(TensorType t) {
  const int64_t bs = type_traits(t).block_size;
  std::vector<int64_t> v;
  if (bs == 1) {
    for (int64_t n = 1; n <= 80; ++n) v.push_back(n);
    for (int64_t n : {127, 128, 129, 1000, 2048, 4099}) v.push_back(n);
  } else if (bs == 32) {
    for (int64_t k = 1; k <= 9; ++k) v.push_back(k * bs);
    for (int64_t k : {31, 64, 173}) v.push_back(k * bs);
  } else {
    for (int64_t k : {1, 2, 3, 5, 8, 22}) v.push_back(k * bs);
  }
  return v;
}

TEST_P(VecDot, MatchesReferenceWithinBudget) {
  const Isa isa = GetParam();
  const Kernels& k = kernels_for(isa);
  std::mt19937 rng(42);
  for (TensorType t : dot_types()) {
    const TypeTraits& tr = type_traits(t);
    const VecDotFn got = k.vec_dot[static_cast<size_t>(t)];
    ASSERT_NE(got, nullptr) << tensor_type_name(t);
    int worst_ppm = 0;  // largest error as a fraction of the budget, for the failure message
    for (int64_t n : dot_lengths(t)) {
      for (int trial = 0; trial < 3; ++trial) {
        const auto w = random_weight_row(t, n, rng);
        const auto a = activation_row(tr.vec_dot_type, random_floats(n, 1.0f, rng));
        float want = 0.0f, have = 0.0f;
        tr.vec_dot_ref(n, &want, w.data(), a.data());
        got(n, &have, w.data(), a.data());
        const double err = std::fabs(static_cast<double>(want) - static_cast<double>(have));
        const double budget = dot_budget(t, n, w.data(), a.data());
        worst_ppm = std::max(worst_ppm, static_cast<int>(1e6 * err / budget));
        ASSERT_LE(err, budget) << isa_name(isa) << " " << tensor_type_name(t) << " n=" << n << " trial "
                               << trial << ": reference " << want << ", kernel " << have;
      }
    }
    RecordProperty(std::string(tensor_type_name(t)) + "_worst_budget_ppm", worst_ppm);
  }
}

// vec_dot_cols, where a path has it: each column's result has vec_dot's bits for that row, for
// every group size and tail (columns are taken 8 at a time) and with a y stride.
TEST_P(VecDot, ColsEqualVecDotBitForBit) {
  const Isa isa = GetParam();
  const Kernels& k = kernels_for(isa);
  std::mt19937 rng(43);
  int tested = 0;
  for (TensorType t : dot_types()) {
    const VecDotColsFn cols = k.vec_dot_cols[static_cast<size_t>(t)];
    if (!cols) continue;
    const TypeTraits& tr = type_traits(t);
    for (int64_t n : dot_lengths(t)) {
      const auto w = random_weight_row(t, n, rng);
      const size_t xb = row_bytes(tr.vec_dot_type, n);
      for (int64_t n_x : {1, 2, 3, 5, 7, 8, 9, 13, 16, 17}) {
        std::vector<uint8_t> x(xb * static_cast<size_t>(n_x));
        for (int64_t c = 0; c < n_x; ++c) {
          const auto a = activation_row(tr.vec_dot_type, random_floats(n, 1.0f, rng));
          std::memcpy(x.data() + xb * static_cast<size_t>(c), a.data(), xb);
        }
        constexpr size_t kStride = 3;
        std::vector<float> y(kStride * static_cast<size_t>(n_x), -1.0f);
        cols(n, w.data(), n_x, x.data(), xb, y.data(), kStride);
        for (int64_t c = 0; c < n_x; ++c) {
          float want = 0.0f;
          k.vec_dot[static_cast<size_t>(t)](n, &want, w.data(), x.data() + xb * static_cast<size_t>(c));
          const float have = y[kStride * static_cast<size_t>(c)];
          ASSERT_EQ(std::memcmp(&want, &have, sizeof(float)), 0)
              << isa_name(isa) << " " << tensor_type_name(t) << " n=" << n << " n_x=" << n_x << " column " << c
              << ": vec_dot " << want << ", cols " << have;
          ASSERT_EQ(y[kStride * static_cast<size_t>(c) + 1], -1.0f) << "wrote between columns";
        }
      }
    }
    ++tested;
  }
  if (tested == 0) GTEST_SKIP() << isa_name(isa) << " has no vec_dot_cols";
}

INSTANTIATE_TEST_SUITE_P(Isas, VecDot, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
