// The x16 layout (quant/x16_layout.h) and the kernels that read it: packing is a lossless
// permutation (every row comes back, padding rows are zero); each path's x16 tile and GEMV give
// exactly the bits of the row tile over the same matrix, for any rows, columns, block counts
// and a first row past the first group; and matmul over a repacked matrix equals matmul over
// its rows on every path (the paths without x16 kernels read the rows), alone and batched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "kernel_test_data.h"
#include "kernels/matmul.h"
#include "quant/type_traits.h"
#include "quant/x16_layout.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::kernel_test {
namespace {

std::vector<uint8_t> packed(TensorType t, int64_t n, int64_t rows, const std::vector<uint8_t>& w) {
  std::vector<uint8_t> p(x16_matrix_bytes(t, n, rows), 0xAB);
  x16_pack(t, n, rows, w.data(), row_bytes(t, n), p.data());
  return p;
}

const TensorType kX16Types[] = {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K};

bool is_k_quant(TensorType t) { return t == TensorType::Q4_K || t == TensorType::Q6_K; }
// Elements of one block of t (the x16 layout's unit along K).
int64_t block_elems(TensorType t) { return is_k_quant(t) ? 256 : 32; }

TEST(X16Layout, PacksEveryRowLosslesslyAndPadsWithZeros) {
  std::mt19937 rng(5);
  for (TensorType t : kX16Types) {
    ASSERT_TRUE(x16_supported(t));
    for (int64_t rows : {int64_t{1}, int64_t{16}, int64_t{21}}) {
      const int64_t n = 7 * block_elems(t);
      const size_t rb = row_bytes(t, n);
      const auto w = random_weight_rows(t, n, rows, rng);
      // The same bytes, moved (Q6_K: plus 32 bytes per super-block that keep it 64-byte aligned;
      // Q4_K's 16 blocks are already a multiple of 64 bytes).
      const size_t gb = t == TensorType::Q6_K ? 7 * kX16Q6KBytes : 16 * rb;
      EXPECT_EQ(x16_group_bytes(t, n), gb);
      EXPECT_TRUE(x16_row_fits(t, n));
      const auto p = packed(t, n, rows, w);
      ASSERT_EQ(p.size(), static_cast<size_t>((rows + 15) / 16) * gb);
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<uint8_t> back(rb, 0xCD);
        x16_unpack_row(t, n, p.data(), r, back.data());
        ASSERT_EQ(std::memcmp(back.data(), w.data() + static_cast<size_t>(r) * rb, rb), 0)
            << tensor_type_name(t) << " row " << r << " of " << rows;
      }
      for (int64_t r = rows; r < (rows + 15) / 16 * 16; ++r) {
        std::vector<uint8_t> back(rb, 0xCD);
        x16_unpack_row(t, n, p.data(), r, back.data());
        for (uint8_t b : back) ASSERT_EQ(b, 0) << tensor_type_name(t) << " padding row " << r;
      }
    }
  }
  EXPECT_EQ(x16_group_bytes(TensorType::Q4_K, 3 * 256), 3 * kX16Q4KBytes);
  EXPECT_EQ(kX16Q4KBytes, 16 * row_bytes(TensorType::Q4_K, 256));
  EXPECT_FALSE(x16_supported(TensorType::Q5_K));
  EXPECT_FALSE(x16_row_fits(TensorType::Q5_K, 256));
  EXPECT_FALSE(x16_row_fits(TensorType::Q6_K, 128));  // not a whole super-block
  EXPECT_FALSE(x16_row_fits(TensorType::Q4_K, 384));
  EXPECT_THROW(x16_group_bytes(TensorType::Q4_K, 128), Error);
  EXPECT_FALSE(x16_row_fits(TensorType::Q4_0, 48));
  EXPECT_THROW(x16_group_bytes(TensorType::Q6_K, 128), Error);
  EXPECT_FALSE(x16_supported(TensorType::F16));
  EXPECT_THROW(x16_group_bytes(TensorType::Q5_K, 256), Error);
  EXPECT_THROW(x16_group_bytes(TensorType::Q4_0, 48), Error);  // not a whole number of blocks
  EXPECT_THROW(x16_group_bytes(TensorType::Q8_0, 0), Error);
}

class X16 : public ::testing::TestWithParam<Isa> {};

TEST_P(X16, TileAndGemvGiveTheRowTilesBits) {
  const Kernels& k = kernels_for(GetParam());
  const Kernels intel = build_kernels(GetParam(), CpuVendor::Intel), amd = build_kernels(GetParam(), CpuVendor::Amd);
  std::mt19937 rng(41);
  int tested = 0;
  for (TensorType t : kX16Types) {
    const size_t id = static_cast<size_t>(t);
    const GemmTileFn tile16 = k.gemm_tile_x16[id];
    const GemvFn gemv16 = k.gemv_x16[id];
    ASSERT_EQ(tile16 == nullptr, gemv16 == nullptr) << "x16 tile and GEMV come in pairs";
    // Every maker's GEMV variant (kernels.h build_kernels): the same bits by contract.
    std::vector<GemvFn> gemvs;
    for (const Kernels* m : {&intel, &amd}) {
      if (std::find(gemvs.begin(), gemvs.end(), m->gemv_x16[id]) == gemvs.end()) gemvs.push_back(m->gemv_x16[id]);
    }
    if (!tile16) continue;
    const GemmTileFn tile = k.gemm_tile[id];
    ASSERT_NE(tile, nullptr);
    const TensorType vdt = type_traits(t).vec_dot_type;
    // Whole 8-block chunks, a chunk plus a tail, tails alone, the longest rows of the model, and
    // rows past the 128 chunks the GEMV holds activation terms for at once
    // (K-quants: super-blocks, up to the longest rows of the model.)
    const std::vector<int64_t> nblks = is_k_quant(t) ? std::vector<int64_t>{1, 2, 3, 8, 22}
                                                     : std::vector<int64_t>{1, 5, 8, 9, 64, 176, 1031};
    for (int64_t nblk : nblks) {
      const int64_t n = nblk * block_elems(t);
      const size_t rb = row_bytes(t, n), xb = row_bytes(vdt, n);
      for (int64_t rows : {int64_t{1}, int64_t{13}, int64_t{16}, int64_t{45}}) {
        const auto w = random_weight_rows(t, n, rows, rng);
        const auto p = packed(t, n, rows, w);
        const size_t gb = x16_group_bytes(t, n);
        for (int64_t cols : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{9}, int64_t{16}, int64_t{70}}) {
          std::vector<uint8_t> x;
          for (int64_t c = 0; c < cols; ++c) {
            const auto a = activation_row(vdt, random_floats(n, 1.0f, rng));
            x.insert(x.end(), a.begin(), a.end());
          }
          const size_t ny = static_cast<size_t>(rows * cols);
          std::vector<float> y_rows(ny, -1.0f), y16(ny, -2.0f);
          tile(n, rows, cols, w.data(), rb, x.data(), xb, y_rows.data(), static_cast<size_t>(rows));
          tile16(n, rows, cols, p.data(), gb, x.data(), xb, y16.data(), static_cast<size_t>(rows));
          ASSERT_EQ(std::memcmp(y_rows.data(), y16.data(), ny * sizeof(float)), 0)
              << isa_label(GetParam()) << " " << tensor_type_name(t) << " n=" << n << " rows=" << rows
              << " cols=" << cols;
          if (cols > 3) continue;
          for (int64_t c = 0; c < cols; ++c) {
            for (size_t v = 0; v < gemvs.size(); ++v) {
              std::vector<float> g(static_cast<size_t>(rows), -3.0f);
              gemvs[v](n, rows, p.data(), gb, x.data() + static_cast<size_t>(c) * xb, g.data());
              ASSERT_EQ(std::memcmp(g.data(), y_rows.data() + c * rows, static_cast<size_t>(rows) * sizeof(float)), 0)
                  << isa_label(GetParam()) << " " << tensor_type_name(t) << " gemv variant " << v << " n=" << n
                  << " rows=" << rows << " col " << c;
            }
          }
        }
        // A call that starts at the second group (the way matmul hands out row chunks).
        if (rows > 16) {
          const auto a = activation_row(vdt, random_floats(n, 1.0f, rng));
          std::vector<float> y_rows(static_cast<size_t>(rows - 16)), y16(y_rows.size()), g(y_rows.size());
          tile(n, rows - 16, 1, w.data() + 16 * rb, rb, a.data(), xb, y_rows.data(), y_rows.size());
          tile16(n, rows - 16, 1, p.data() + gb, gb, a.data(), xb, y16.data(), y16.size());
          ASSERT_EQ(std::memcmp(y_rows.data(), y16.data(), y16.size() * sizeof(float)), 0) << tensor_type_name(t);
          for (GemvFn gemv : gemvs) {
            std::fill(g.begin(), g.end(), -3.0f);
            gemv(n, rows - 16, p.data() + gb, gb, a.data(), g.data());
            ASSERT_EQ(std::memcmp(y_rows.data(), g.data(), g.size() * sizeof(float)), 0) << tensor_type_name(t);
          }
        }
      }
    }
    ++tested;
  }
  if (GetParam() == Isa::Avx512) {
    EXPECT_EQ(tested, 4);  // Q4_0, Q8_0, Q4_K and Q6_K
  }
  if (tested == 0) GTEST_SKIP() << "no x16 kernels on " << isa_label(GetParam());
}

// matmul over a matrix that carries an x16 copy equals matmul over its rows alone, for single
// tokens, few and many, with per-row kernel choices, on 1 and 2 threads, on every path.
TEST_P(X16, MatmulOverTheRepackedMatrixEqualsTheRows) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(43);
  ThreadPool pool1(1), pool2(2);
  for (TensorType t : kX16Types) {
    const int64_t n = 2048, n_out = 16 * 37 + 5;
    const auto wdata = random_weight_rows(t, n, n_out, rng);
    const auto p = packed(t, n, n_out, wdata);
    const WeightMatrix rows_only{t, n, n_out, wdata.data(), row_bytes(t, n)};
    WeightMatrix both = rows_only;
    both.x16 = p.data();
    both.x16_group_bytes = x16_group_bytes(t, n);
    for (int64_t n_tok : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{70}}) {
      const auto x = random_floats(n * n_tok, 1.0f, rng);
      std::vector<uint8_t> decode(static_cast<size_t>(n_tok)), all_tile(decode.size(), 0);
      for (size_t i = 0; i < decode.size(); ++i) decode[i] = i % 3 == 0;
      for (ThreadPool* pool : {&pool1, &pool2}) {
        for (bool choose : {false, true}) {
          const std::span<const uint8_t> d = choose ? std::span<const uint8_t>(decode) : std::span<const uint8_t>();
          // Without a tile-exact row GEMV (Q4_K, Q6_K), the rows path runs decode rows (a lone
          // token, or the ones the choices name) through vec_dot / vec_dot_cols, while the x16
          // path has its GEMV and gives every row the tile's bits: its reference is then the
          // rows path told to tile every row.
          const bool x16_tiles_all = k.gemm_tile_x16[static_cast<size_t>(t)] && !k.gemv[static_cast<size_t>(t)];
          const std::span<const uint8_t> d_rows =
              x16_tiles_all && (choose || n_tok == 1) ? std::span<const uint8_t>(all_tile) : d;
          MatmulScratch s;
          std::vector<float> a(static_cast<size_t>(n_out * n_tok), -1.0f), b(a.size(), -2.0f);
          matmul(k, *pool, rows_only, x.data(), n_tok, a.data(), s, d_rows);
          matmul(k, *pool, both, x.data(), n_tok, b.data(), s, d);
          ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0)
              << isa_label(GetParam()) << " " << tensor_type_name(t) << " tokens " << n_tok << " threads "
              << pool->size() << (choose ? " with kernel choices" : "");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, X16, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
