// from_float of every SIMD path must be bit-identical to the reference quantizer, on random
// data at many magnitudes, all-zero rows, exact rounding ties, signed magnitude ties and (for
// F16/BF16) special values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernel_test_data.h"
#include "quant/type_traits.h"

namespace edgeinfer::kernel_test {
namespace {

class FromFloat : public ::testing::TestWithParam<Isa> {};

// Row lengths to try for an activation type: many short ones (tails) and a few long ones.
std::vector<int64_t> lengths(TensorType t) {
  const int64_t bs = type_traits(t).block_size;
  std::vector<int64_t> v;
  if (bs == 1) {
    for (int64_t n = 1; n <= 70; ++n) v.push_back(n);
    v.push_back(1000);
    v.push_back(4099);
  } else {
    for (int64_t k = 1; k <= (bs == 256 ? 4 : 9); ++k) v.push_back(k * bs);
    v.push_back(bs == 256 ? 16 * bs : 64 * bs);
  }
  return v;
}

// Rows of length n that stress the quantizers.
std::vector<std::pair<std::string, std::vector<float>>> datasets(int64_t n, std::mt19937& rng) {
  std::vector<std::pair<std::string, std::vector<float>>> out;
  for (float scale : {1.0f, 1e-30f, 1e-10f, 1e10f, 1e30f}) {
    out.emplace_back("normal*" + std::to_string(scale), random_floats(n, scale, rng));
  }
  out.emplace_back("zeros", std::vector<float>(static_cast<size_t>(n), 0.0f));
  {
    std::vector<float> v(static_cast<size_t>(n), 0.0f);
    for (size_t i = 0; i < v.size(); i += 3) v[i] = -0.0f;
    out.emplace_back("signed zeros", v);
  }
  // Exact ties: each 32-block holds -127 or +127 first (amax 127, so d = 1 and 1/d = 1; for
  // Q8_K the first element is -127 so the scale is exactly 1), the rest k + 0.5.
  for (float first : {-127.0f, 127.0f}) {
    std::uniform_int_distribution<int> k(-126, 125);
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = i % 32 == 0 ? (i % 64 == 0 ? first : -first) : static_cast<float>(k(rng)) + 0.5f;
    }
    out.emplace_back("ties first=" + std::to_string(first), v);
  }
  {
    // Largest magnitude reached by both signs: the reference keeps the first one.
    std::vector<float> v = random_floats(n, 1.0f, rng);
    for (size_t i = 0; i < v.size(); ++i) {
      if (i % 32 == 5) v[i] = 40.0f;
      if (i % 32 == 9) v[i] = -40.0f;
    }
    out.emplace_back("magnitude ties", v);
  }
  {
    // A single non-zero per block, and constant blocks.
    std::vector<float> v(static_cast<size_t>(n), 0.0f);
    for (size_t i = 7; i < v.size(); i += 32) v[i] = -3.25f;
    out.emplace_back("sparse", v);
    out.emplace_back("constant", std::vector<float>(static_cast<size_t>(n), 0.7f));
  }
  return out;
}

// Special values for the float conversions (F16/BF16 only: the quantizers' behaviour on
// infinities and NaN is undefined in the C reference).
std::vector<float> specials(int64_t n, std::mt19937& rng) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float pool[] = {inf, -inf, nan, -nan, 1e-40f, -1e-45f, 65504.0f, 65519.0f, 65520.0f, 1e6f,
                        6e-5f, 3e-8f, 2.98e-8f, 5.96e-8f, 1e-7f, -0.0f, 1.0f + 1.0f / 256.0f,
                        1.0f + 3.0f / 512.0f, std::numeric_limits<float>::max(),
                        std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min()};
  std::uniform_int_distribution<size_t> pick(0, std::size(pool) - 1);
  auto v = random_floats(n, 1.0f, rng);
  for (size_t i = 0; i < v.size(); i += 2) v[i] = pool[pick(rng)];
  // bf16 ties: low 16 bits exactly 0x8000 with both parities of bit 16.
  for (size_t i = 1; i < v.size(); i += 4) {
    uint32_t b = 0x3f808000u + (static_cast<uint32_t>(i) & 1u) * 0x10000u + ((rng() & 0x7fu) << 17);
    std::memcpy(&v[i], &b, 4);
  }
  return v;
}

void expect_same(Isa isa, TensorType t, const std::string& what, const std::vector<float>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const FromFloatFn ref = type_traits(t).from_float_ref;
  const FromFloatFn got = kernels_for(isa).from_float[static_cast<size_t>(t)];
  ASSERT_NE(got, nullptr);
  const size_t bytes = row_bytes(t, n);
  std::vector<uint8_t> want(bytes + 64, 0xA5), have(bytes + 64, 0xA5);
  ref(x.data(), want.data(), n);
  got(x.data(), have.data(), n);
  size_t first = bytes + 64;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != have[i]) {
      first = i;
      break;
    }
  }
  EXPECT_EQ(first, bytes + 64) << isa_name(isa) << " " << tensor_type_name(t) << " n=" << n << " " << what
                               << ": first differing byte " << first << " of " << bytes << " (want "
                               << int(want[first < want.size() ? first : 0]) << ", got "
                               << int(have[first < have.size() ? first : 0]) << ")";
}

TEST_P(FromFloat, BitExactWithReference) {
  const Isa isa = GetParam();
  std::mt19937 rng(1234);
  for (TensorType t : activation_types()) {
    for (int64_t n : lengths(t)) {
      for (const auto& [what, x] : datasets(n, rng)) expect_same(isa, t, what, x);
      if (type_traits(t).block_size == 1) expect_same(isa, t, "specials", specials(n, rng));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, FromFloat, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
