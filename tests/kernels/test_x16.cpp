// The x16 layout (quant/x16_layout.h) and the kernels that read it: packing is a lossless
// permutation (every row comes back, padding rows are zero); each path's x16 tile and GEMV give
// exactly the bits of the row tile over the same matrix, for any rows, columns, block counts
// and a first row past the first group; and matmul over a repacked matrix equals matmul over
// its rows on every path (the paths without x16 kernels read the rows), alone and batched.
// F16's x16 kernels have an arithmetic of their own (kernels.h kF16X16SumBlock): they are
// checked bit for bit against a scalar model of it, against a double reference within its
// written error bound, and through matmul (a token's bits do not depend on its batch).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// The types whose x16 kernels give the row tile's bits.
const TensorType kX16Types[] = {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K};

bool is_k_quant(TensorType t) { return t == TensorType::Q4_K || t == TensorType::Q6_K; }
// Elements of one block of t (the x16 layout's unit along K); F16 has none, any length packs:
// an odd one.
int64_t block_elems(TensorType t) { return t == TensorType::F16 ? 37 : is_k_quant(t) ? 256 : 32; }

TEST(X16Layout, PacksEveryRowLosslesslyAndPadsWithZeros) {
  std::mt19937 rng(5);
  for (TensorType t : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q6_K, TensorType::F16}) {
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
  EXPECT_FALSE(x16_supported(TensorType::F32));
  EXPECT_FALSE(x16_supported(TensorType::BF16));
  EXPECT_TRUE(x16_row_fits(TensorType::F16, 1));
  EXPECT_FALSE(x16_row_fits(TensorType::F16, 0));
  EXPECT_EQ(x16_group_bytes(TensorType::F16, 5), size_t{16 * 5 * 2});
  EXPECT_THROW(x16_group_bytes(TensorType::F16, 0), Error);
  // F16 element k of row r of a group sits at 32k + 2r (the layout's stated form), across the
  // packer's 64-element runs.
  {
    const int64_t n = 130, rows = 20;
    std::vector<uint8_t> w(static_cast<size_t>(n * rows) * 2);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < n; ++k) {
        const uint16_t v = static_cast<uint16_t>(r * 1000 + k);
        std::memcpy(&w[static_cast<size_t>(r * n + k) * 2], &v, 2);
      }
    }
    const auto p = packed(TensorType::F16, n, rows, w);
    for (int64_t r = 0; r < 32; ++r) {
      for (int64_t k = 0; k < n; ++k) {
        uint16_t v;
        std::memcpy(&v, &p[static_cast<size_t>(r / 16) * 16 * n * 2 + static_cast<size_t>(32 * k + 2 * (r % 16))], 2);
        ASSERT_EQ(v, r < rows ? r * 1000 + k : 0) << "row " << r << " element " << k;
      }
    }
  }
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

// --- F16: its own arithmetic ----------------------------------------------------------------

// kernels.h kF16X16SumBlock in scalar: each block's products accumulated one by one with a fused
// multiply-add from zero; the first block's partial is the result so far, each later one added.
float f16_x16_model(int64_t n, const uint16_t* w, const uint16_t* x) {
  float total = 0.0f;
  for (int64_t k0 = 0; k0 < n; k0 += kF16X16SumBlock) {
    float part = 0.0f;
    for (int64_t k = k0; k < std::min(n, k0 + kF16X16SumBlock); ++k) {
      part = std::fma(fp16_to_fp32(w[k]), fp16_to_fp32(x[k]), part);
    }
    total = k0 == 0 ? part : total + part;
  }
  return total;
}

// The written bound of that arithmetic (kernels.h), |kernel - exact| <= this, plus 1e-30.
double f16_x16_budget(int64_t n, const uint16_t* w, const uint16_t* x) {
  double m = 0.0;
  for (int64_t k = 0; k < n; ++k) m += std::fabs(static_cast<double>(fp16_to_fp32(w[k])) * fp16_to_fp32(x[k]));
  const int64_t blocks = (n + kF16X16SumBlock - 1) / kF16X16SumBlock;
  return static_cast<double>(kF16X16SumBlock + blocks) * 0x1p-24 * m + 1e-30;
}

double exact_dot(int64_t n, const uint16_t* w, const uint16_t* x) {
  double s = 0.0;
  for (int64_t k = 0; k < n; ++k) s += static_cast<double>(fp16_to_fp32(w[k])) * fp16_to_fp32(x[k]);
  return s;
}

// The F16 x16 pairs of this path's tables (every maker's, kernels_for's among them), each once.
std::vector<std::pair<GemmTileFn, GemvFn>> f16_x16_pairs(Isa isa) {
  const size_t id = static_cast<size_t>(TensorType::F16);
  std::vector<std::pair<GemmTileFn, GemvFn>> pairs;
  for (CpuVendor v : {CpuVendor::Intel, CpuVendor::Amd, CpuVendor::Other}) {
    const Kernels k = build_kernels(isa, v);
    EXPECT_EQ(k.gemm_tile_x16[id] == nullptr, k.gemv_x16[id] == nullptr) << "x16 tile and GEMV come in pairs";
    const std::pair<GemmTileFn, GemvFn> pr{k.gemm_tile_x16[id], k.gemv_x16[id]};
    if (pr.first && std::find(pairs.begin(), pairs.end(), pr) == pairs.end()) pairs.push_back(pr);
  }
  return pairs;
}

const uint16_t* halves(const std::vector<uint8_t>& v, size_t byte_offset) {
  return reinterpret_cast<const uint16_t*>(v.data() + byte_offset);
}

TEST_P(X16, F16TileAndGemvFollowTheirOwnArithmetic) {
  const auto pairs = f16_x16_pairs(GetParam());
  if (GetParam() == Isa::Avx512) {
    ASSERT_FALSE(pairs.empty());  // Intel's table reads F16 in the x16 layout
  }
  if (pairs.empty()) GTEST_SKIP() << "no F16 x16 kernels on " << isa_label(GetParam());
  const TensorType t = TensorType::F16;
  std::mt19937 rng(47);
  for (const auto& [tile16, gemv16] : pairs) {
    // Within a block, one block, a block and a tail, several blocks, the model's longest rows
    // and more, and a length no block size divides.
    for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{127}, int64_t{128}, int64_t{129}, int64_t{300},
                      int64_t{2048}, int64_t{5635}}) {
      const size_t rb = row_bytes(t, n);
      for (int64_t rows : {int64_t{1}, int64_t{13}, int64_t{16}, int64_t{45}}) {
        const auto w = random_weight_rows(t, n, rows, rng);
        const auto p = packed(t, n, rows, w);
        const size_t gb = x16_group_bytes(t, n);
        // One column, a few, one register tile, one more (the later tiles of a span read the
        // weights the first converted), two and a bit, the engine's 64, and past the 72
        // converted at once.
        const std::vector<int64_t> col_counts =
            n >= 2048 ? std::vector<int64_t>{1, 25, 64} : std::vector<int64_t>{1, 3, 24, 25, 50, 80};
        for (int64_t cols : col_counts) {
          std::vector<uint8_t> x;
          for (int64_t c = 0; c < cols; ++c) {
            const auto a = activation_row(t, random_floats(n, 1.0f, rng));
            x.insert(x.end(), a.begin(), a.end());
          }
          // Three floats of padding after each column's rows: the kernels must not touch them.
          const size_t ys = static_cast<size_t>(rows) + 3;
          std::vector<float> y(ys * static_cast<size_t>(cols), -7.0f);
          tile16(n, rows, cols, p.data(), gb, x.data(), rb, y.data(), ys);
          for (int64_t c = 0; c < cols; ++c) {
            const uint16_t* xc = halves(x, static_cast<size_t>(c) * rb);
            for (int64_t r = 0; r < rows; ++r) {
              const uint16_t* wr = halves(w, static_cast<size_t>(r) * rb);
              const float got = y[static_cast<size_t>(c) * ys + static_cast<size_t>(r)], want = f16_x16_model(n, wr, xc);
              ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
                  << isa_label(GetParam()) << " n=" << n << " rows=" << rows << " cols=" << cols << " r=" << r
                  << " c=" << c << ": " << got << " vs " << want;
              ASSERT_LE(std::fabs(got - exact_dot(n, wr, xc)), f16_x16_budget(n, wr, xc)) << "n=" << n;
            }
            for (size_t pad = static_cast<size_t>(rows); pad < ys; ++pad) {
              ASSERT_EQ(y[static_cast<size_t>(c) * ys + pad], -7.0f) << "tile wrote past its rows";
            }
            if (c >= 3) continue;
            std::vector<float> g(static_cast<size_t>(rows) + 3, -8.0f);
            gemv16(n, rows, p.data(), gb, xc, g.data());
            ASSERT_EQ(std::memcmp(g.data(), &y[static_cast<size_t>(c) * ys], static_cast<size_t>(rows) * sizeof(float)), 0)
                << isa_label(GetParam()) << " gemv n=" << n << " rows=" << rows << " col " << c;
            for (size_t pad = static_cast<size_t>(rows); pad < g.size(); ++pad) ASSERT_EQ(g[pad], -8.0f) << "GEMV wrote past its rows";
          }
          // A call that starts at the second group (the way matmul hands out row chunks).
          if (rows > 16) {
            std::vector<float> y2(static_cast<size_t>(rows - 16) * static_cast<size_t>(cols), -9.0f);
            tile16(n, rows - 16, cols, p.data() + gb, gb, x.data(), rb, y2.data(), static_cast<size_t>(rows - 16));
            std::vector<float> g(static_cast<size_t>(rows - 16), -9.0f);
            gemv16(n, rows - 16, p.data() + gb, gb, x.data(), g.data());
            for (int64_t c = 0; c < cols; ++c) {
              ASSERT_EQ(std::memcmp(&y2[static_cast<size_t>(c * (rows - 16))], &y[static_cast<size_t>(c) * ys + 16],
                                    static_cast<size_t>(rows - 16) * sizeof(float)),
                        0)
                  << "n=" << n << " second group, col " << c;
            }
            ASSERT_EQ(std::memcmp(g.data(), &y[16], g.size() * sizeof(float)), 0) << "n=" << n << " second group GEMV";
          }
        }
      }
    }
  }
}

// matmul over an F16 matrix with an x16 copy: with a table that reads it, every output has the
// bits of the F16 x16 arithmetic whatever the batch, the kernel choices and the threads (so a
// token decoded alone equals the same token batched); with a table that does not, the rows'
// results.
TEST_P(X16, F16MatmulGivesEveryTokenTheSameBitsWhateverTheBatch) {
  const TensorType t = TensorType::F16;
  const size_t id = static_cast<size_t>(t);
  std::mt19937 rng(53);
  ThreadPool pool1(1), pool2(2);
  const int64_t n = 1000, n_out = 16 * 37 + 5;  // n: 7 blocks and a tail
  const size_t rb = row_bytes(t, n);
  const auto wdata = random_weight_rows(t, n, n_out, rng);
  const auto p = packed(t, n, n_out, wdata);
  const WeightMatrix rows_only{t, n, n_out, wdata.data(), rb};
  WeightMatrix both = rows_only;
  both.x16 = p.data();
  both.x16_group_bytes = x16_group_bytes(t, n);
  int reading = 0;
  for (CpuVendor v : {CpuVendor::Intel, CpuVendor::Amd}) {
    const Kernels k = build_kernels(GetParam(), v);
    const bool reads_x16 = k.gemm_tile_x16[id] != nullptr;
    reading += reads_x16;
    for (int64_t n_tok : {int64_t{1}, int64_t{3}, int64_t{70}}) {
      const auto x = random_floats(n * n_tok, 1.0f, rng);
      std::vector<float> model(static_cast<size_t>(n_out * n_tok));
      if (reads_x16) {
        for (int64_t tk = 0; tk < n_tok; ++tk) {
          const auto a = activation_row(t, std::vector<float>(x.begin() + tk * n, x.begin() + (tk + 1) * n));
          for (int64_t r = 0; r < n_out; ++r) {
            model[static_cast<size_t>(tk * n_out + r)] = f16_x16_model(n, halves(wdata, static_cast<size_t>(r) * rb), halves(a, 0));
          }
        }
      }
      std::vector<uint8_t> decode(static_cast<size_t>(n_tok));
      for (size_t i = 0; i < decode.size(); ++i) decode[i] = i % 3 == 0;
      for (ThreadPool* pool : {&pool1, &pool2}) {
        for (bool choose : {false, true}) {
          const std::span<const uint8_t> d = choose ? std::span<const uint8_t>(decode) : std::span<const uint8_t>();
          MatmulScratch s;
          std::vector<float> a(model.size(), -1.0f), b(model.size(), -2.0f);
          matmul(k, *pool, both, x.data(), n_tok, b.data(), s, d);
          if (!reads_x16) matmul(k, *pool, rows_only, x.data(), n_tok, a.data(), s, d);
          const std::vector<float>& want = reads_x16 ? model : a;
          ASSERT_EQ(std::memcmp(want.data(), b.data(), b.size() * sizeof(float)), 0)
              << isa_label(GetParam()) << " vendor " << static_cast<int>(v) << " tokens " << n_tok << " threads "
              << pool->size() << (choose ? " with kernel choices" : "");
        }
      }
    }
  }
  if (GetParam() == Isa::Avx512) {
    EXPECT_EQ(reading, 1);  // Intel's table
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, X16, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
