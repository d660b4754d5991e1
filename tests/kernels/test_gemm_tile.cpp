// gemm_tile of every SIMD path: each y[c][r] of a tile must match the scalar reference dot of
// weight row r and activation row c within dot_budget; entries outside the tile stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernel_test_data.h"
#include "quant/type_traits.h"

namespace edgeinfer::kernel_test {
namespace {

class GemmTile : public ::testing::TestWithParam<Isa> {};

struct Shape {
  int64_t n, rows, cols;
};

std::vector<Shape> shapes(TensorType t) {
  const int64_t bs = type_traits(t).block_size;
  const int64_t unit = bs == 1 ? 16 : bs;
  std::vector<Shape> v = {{unit, 1, 1}, {unit, 16, 8}, {3 * unit, 17, 3}, {bs == 256 ? 2 * unit : 9 * unit, 5, 13},
                          {bs == 1 ? 37 : (bs == 256 ? 3 * unit : 19 * unit), 33, 9},
                          {bs == 256 ? 4 * unit : 40 * unit, 48, 70}};
  // Float types: K over several of a tile's K chunks with a tail, rows over several row
  // blocks, columns over two panels with a partial column group.
  if (bs == 1) v.push_back({1037, 70, 55});
  // Float types: K long enough that AVX-512's F16 tile narrows its panels of converted
  // activations (384 KiB of F32 in L2: 36 columns here), over two panels.
  if (bs == 1) v.push_back({2600, 13, 41});
  return v;
}

TEST_P(GemmTile, MatchesReferenceDotsWithinBudget) {
  const Isa isa = GetParam();
  const Kernels& k = kernels_for(isa);
  std::mt19937 rng(7);
  int tested = 0;
  for (TensorType t : dot_types()) {
    const GemmTileFn tile = k.gemm_tile[static_cast<size_t>(t)];
    if (!tile) continue;
    ++tested;
    const TypeTraits& tr = type_traits(t);
    for (const Shape& s : shapes(t)) {
      // Strides with padding so that a kernel assuming packed rows fails.
      const size_t wb = row_bytes(t, s.n), xb = row_bytes(tr.vec_dot_type, s.n);
      const size_t w_stride = wb + 64, x_stride = xb + 32;
      const size_t y_stride = static_cast<size_t>(s.rows) + 3;
      std::vector<uint8_t> w(w_stride * static_cast<size_t>(s.rows)), x(x_stride * static_cast<size_t>(s.cols));
      std::vector<std::vector<double>> wmag, amag;
      for (int64_t r = 0; r < s.rows; ++r) {
        const auto row = random_weight_row(t, s.n, rng);
        std::memcpy(&w[static_cast<size_t>(r) * w_stride], row.data(), wb);
        wmag.push_back(weight_magnitudes(t, s.n, row.data()));
      }
      for (int64_t c = 0; c < s.cols; ++c) {
        const auto row = activation_row(tr.vec_dot_type, random_floats(s.n, 1.0f, rng));
        std::memcpy(&x[static_cast<size_t>(c) * x_stride], row.data(), xb);
        amag.push_back(activation_magnitudes(t, s.n, row.data()));
      }
      const float canary = -12345.0f;
      std::vector<float> y(y_stride * static_cast<size_t>(s.cols) + 16, canary);
      tile(s.n, s.rows, s.cols, w.data(), w_stride, x.data(), x_stride, y.data(), y_stride);
      for (int64_t c = 0; c < s.cols; ++c) {
        for (size_t r = 0; r < y_stride; ++r) {
          const float have = y[static_cast<size_t>(c) * y_stride + r];
          if (r >= static_cast<size_t>(s.rows)) {
            ASSERT_EQ(have, canary) << "wrote outside the tile at col " << c << " row " << r;
            continue;
          }
          const uint8_t* wr = &w[r * w_stride];
          const uint8_t* xr = &x[static_cast<size_t>(c) * x_stride];
          float want = 0.0f;
          tr.vec_dot_ref(s.n, &want, wr, xr);
          const double err = std::fabs(static_cast<double>(want) - static_cast<double>(have));
          ASSERT_LE(err, dot_budget(t, s.n, wmag[r], amag[static_cast<size_t>(c)]))
              << isa_name(isa) << " " << tensor_type_name(t) << " n=" << s.n << " tile " << s.rows << "x"
              << s.cols << " at row " << r << " col " << c << ": reference " << want << ", tile " << have;
        }
      }
      for (size_t i = y_stride * static_cast<size_t>(s.cols); i < y.size(); ++i) ASSERT_EQ(y[i], canary);
    }
  }
  RecordProperty("types_with_tiles", tested);
}

// Batched decoding gives every sequence the tokens it would get alone only if an output element
// does not depend on which other rows and columns share its tile call: the engine batches
// tokens of different requests into one matmul. So a tile's y[c][r] must be bit-identical to
// that of a 1x1 call of the same kernel, whatever the tile's shape.
TEST_P(GemmTile, EachElementIsIndependentOfTheTileShape) {
  const Isa isa = GetParam();
  const Kernels& k = kernels_for(isa);
  std::mt19937 rng(11);
  for (TensorType t : dot_types()) {
    const GemmTileFn tile = k.gemm_tile[static_cast<size_t>(t)];
    if (!tile) continue;
    const TypeTraits& tr = type_traits(t);
    for (const Shape& s : shapes(t)) {
      const size_t w_stride = row_bytes(t, s.n), x_stride = row_bytes(tr.vec_dot_type, s.n);
      std::vector<uint8_t> w(w_stride * static_cast<size_t>(s.rows)), x(x_stride * static_cast<size_t>(s.cols));
      for (int64_t r = 0; r < s.rows; ++r) {
        const auto row = random_weight_row(t, s.n, rng);
        std::memcpy(&w[static_cast<size_t>(r) * w_stride], row.data(), w_stride);
      }
      for (int64_t c = 0; c < s.cols; ++c) {
        const auto row = activation_row(tr.vec_dot_type, random_floats(s.n, 1.0f, rng));
        std::memcpy(&x[static_cast<size_t>(c) * x_stride], row.data(), x_stride);
      }
      const size_t ys = static_cast<size_t>(s.rows);
      std::vector<float> whole(ys * static_cast<size_t>(s.cols));
      tile(s.n, s.rows, s.cols, w.data(), w_stride, x.data(), x_stride, whole.data(), ys);
      for (int64_t c = 0; c < s.cols; ++c) {
        // One column over all rows (a decode step of one sequence) ...
        std::vector<float> col(ys);
        tile(s.n, s.rows, 1, w.data(), w_stride, &x[static_cast<size_t>(c) * x_stride], x_stride, col.data(), ys);
        for (int64_t r = 0; r < s.rows; ++r) {
          float one = 0.0f;
          // ... and one element alone.
          tile(s.n, 1, 1, &w[static_cast<size_t>(r) * w_stride], w_stride, &x[static_cast<size_t>(c) * x_stride],
               x_stride, &one, 1);
          const float have = whole[static_cast<size_t>(c) * ys + static_cast<size_t>(r)];
          ASSERT_EQ(std::memcmp(&have, &one, sizeof(float)), 0)
              << isa_name(isa) << " " << tensor_type_name(t) << " n=" << s.n << " tile " << s.rows << "x" << s.cols
              << " row " << r << " col " << c << ": " << have << " vs 1x1 " << one;
          ASSERT_EQ(std::memcmp(&col[static_cast<size_t>(r)], &one, sizeof(float)), 0)
              << isa_name(isa) << " " << tensor_type_name(t) << " n=" << s.n << " rows " << s.rows << " x 1 col, row "
              << r << ": " << col[static_cast<size_t>(r)] << " vs 1x1 " << one;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, GemmTile, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
