// Kernels::gemv (decode GEMV with the tile's arithmetic) of every path that has one: each output
// has exactly the bits gemm_tile gives that element — alone or as one column of several — over
// whole 16-block chunks, block tails, row tails and rows of random bytes; and the tile-exact
// route through matmul makes a token alone equal the same token in a batch whatever the caller's
// per-row choice says.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kernel_test_data.h"
#include "kernels/matmul.h"
#include "quant/type_traits.h"
#include "util/thread_pool.h"

namespace edgeinfer::kernel_test {
namespace {

class Gemv : public ::testing::TestWithParam<Isa> {};

TEST_P(Gemv, EqualsTheTileBitForBit) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(31);
  int tested = 0;
  for (TensorType t : dot_types()) {
    const GemvFn gemv = k.gemv[static_cast<size_t>(t)];
    if (!gemv) continue;
    const GemmTileFn tile = k.gemm_tile[static_cast<size_t>(t)];
    ASSERT_NE(tile, nullptr) << "a tile-exact GEMV without a tile: " << tensor_type_name(t);
    const TypeTraits& tr = type_traits(t);
    const int64_t bs = tr.block_size;
    // Whole 16-block chunks, chunks plus a tail, tails alone; 300 blocks: more than the AVX2
    // kernel prepares activations for at once (its chain goes on through y).
    for (int64_t nblk : {int64_t{1}, int64_t{5}, int64_t{16}, int64_t{17}, int64_t{64}, int64_t{79}, int64_t{300}}) {
      const int64_t n = nblk * bs;
      const size_t rb = row_bytes(t, n), xb = row_bytes(tr.vec_dot_type, n);
      for (int64_t rows : {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{17}, int64_t{45}}) {
        const auto w = random_weight_rows(t, n, rows, rng);
        constexpr int64_t kCols = 5;
        std::vector<uint8_t> x;
        for (int64_t c = 0; c < kCols; ++c) {
          const auto a = activation_row(tr.vec_dot_type, random_floats(n, 1.0f, rng));
          x.insert(x.end(), a.begin(), a.end());
        }
        std::vector<float> y_tile(static_cast<size_t>(rows * kCols));
        tile(n, rows, kCols, w.data(), rb, x.data(), xb, y_tile.data(), static_cast<size_t>(rows));
        for (int64_t c = 0; c < kCols; ++c) {
          std::vector<float> y(static_cast<size_t>(rows), -1.0f), y1(static_cast<size_t>(rows));
          gemv(n, rows, w.data(), rb, x.data() + static_cast<size_t>(c) * xb, y.data());
          tile(n, rows, 1, w.data(), rb, x.data() + static_cast<size_t>(c) * xb, xb, y1.data(), static_cast<size_t>(rows));
          for (int64_t r = 0; r < rows; ++r) {
            const float g = y[static_cast<size_t>(r)];
            ASSERT_EQ(std::memcmp(&g, &y_tile[static_cast<size_t>(c * rows + r)], sizeof g), 0)
                << isa_label(GetParam()) << " " << tensor_type_name(t) << " n=" << n << " rows=" << rows << " col "
                << c << " row " << r << ": gemv " << g << " tile " << y_tile[static_cast<size_t>(c * rows + r)];
            ASSERT_EQ(std::memcmp(&g, &y1[static_cast<size_t>(r)], sizeof g), 0) << tensor_type_name(t);
            // And both within the dot budget of the scalar reference.
            float ref;
            tr.vec_dot_ref(n, &ref, w.data() + static_cast<size_t>(r) * rb, x.data() + static_cast<size_t>(c) * xb);
            ASSERT_LE(std::fabs(static_cast<double>(g) - ref),
                      dot_budget(t, n, w.data() + static_cast<size_t>(r) * rb, x.data() + static_cast<size_t>(c) * xb))
                << tensor_type_name(t) << " n=" << n << " row " << r;
          }
        }
      }
    }
    ++tested;
  }
  if (GetParam() == Isa::Avx512) {
    EXPECT_GE(tested, 2);  // Q4_0 and Q8_0
  }
  if (GetParam() == Isa::Avx2) {
    EXPECT_GE(tested, 1);  // Q4_0
  }
  if (tested == 0) GTEST_SKIP() << "no tile-exact GEMV on " << isa_label(GetParam());
}

// Through matmul, a single row (GEMV) equals that row batched with others (tile), also where the
// caller asks for vec_dot, on 1 and 2 threads.
TEST_P(Gemv, MatmulRowAloneEqualsRowInBatch) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(37);
  ThreadPool pool2(2), pool1(1);
  int tested = 0;
  for (TensorType t : dot_types()) {
    if (!k.gemv[static_cast<size_t>(t)]) continue;
    const int64_t n = 2048 + 3 * type_traits(t).block_size, n_out = 77, n_tok = 6;
    const size_t rb = row_bytes(t, n);
    const auto wdata = random_weight_rows(t, n, n_out, rng);
    const WeightMatrix w{t, n, n_out, wdata.data(), rb};
    const auto x = random_floats(n * n_tok, 1.0f, rng);
    const std::vector<uint8_t> decode = {1, 0, 1, 1, 0, 0};
    MatmulScratch scratch;
    std::vector<float> batch(static_cast<size_t>(n_out * n_tok));
    matmul(k, pool2, w, x.data(), n_tok, batch.data(), scratch, decode);
    for (int64_t tok = 0; tok < n_tok; ++tok) {
      for (ThreadPool* pool : {&pool1, &pool2}) {
        std::vector<float> alone(static_cast<size_t>(n_out));
        matmul(k, *pool, w, x.data() + tok * n, 1, alone.data(), scratch);
        ASSERT_EQ(std::memcmp(alone.data(), batch.data() + tok * n_out, sizeof(float) * static_cast<size_t>(n_out)), 0)
            << isa_label(GetParam()) << " " << tensor_type_name(t) << " token " << tok << " threads " << pool->size();
      }
    }
    ++tested;
  }
  if (tested == 0) GTEST_SKIP() << "no tile-exact GEMV on " << isa_label(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Isas, Gemv, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
