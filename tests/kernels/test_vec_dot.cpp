// vec_dot of every SIMD path against the scalar reference, per type, within dot_budget
// (kernel_test_data.h), over many row lengths (including every tail case of the float types)
// and random rows.
#include <gtest/gtest.h>

#include <cmath>
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

INSTANTIATE_TEST_SUITE_P(Isas, VecDot, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
