// matmul's per-row kernel choice: a row's output depends only on that row and the kernel named
// for it, never on the other rows of the call or the thread count, so that the engine's batched
// steps give every sequence the numbers it would get alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernel_test_data.h"
#include "kernels/matmul.h"
#include "quant/type_traits.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace edgeinfer::kernel_test {
namespace {

class Matmul : public ::testing::TestWithParam<Isa> {};

TEST_P(Matmul, RowsAreIndependentOfTheirBatchMates) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(5);
  ThreadPool pool2(2), pool1(1);
  int tested = 0;
  for (TensorType t : dot_types()) {
    if (!k.vec_dot[static_cast<size_t>(t)]) continue;
    const int64_t bs = type_traits(t).block_size;
    const int64_t n = bs == 1 ? 96 : (bs == 256 ? 512 : 4 * bs);
    // Enough rows that both threads get several 16-row chunks; enough MACs to use the pool.
    const int64_t n_out = 70;
    const size_t rb = row_bytes(t, n);
    std::vector<uint8_t> wdata(rb * static_cast<size_t>(n_out));
    for (int64_t r = 0; r < n_out; ++r) {
      const auto row = random_weight_row(t, n, rng);
      std::memcpy(&wdata[static_cast<size_t>(r) * rb], row.data(), rb);
    }
    const WeightMatrix w{t, n, n_out, wdata.data(), rb};
    // Mixed runs of both kinds; then 11 decode rows at once (vec_dot_cols takes 8 at a time).
    const std::vector<uint8_t> patterns[] = {{0, 1, 0, 0, 1, 1, 0}, std::vector<uint8_t>(11, 1)};
    for (const std::vector<uint8_t>& decode : patterns) {
      const int64_t n_tok = static_cast<int64_t>(decode.size());
      const auto x = random_floats(n * n_tok, 1.0f, rng);
      MatmulScratch scratch;
      std::vector<float> y(static_cast<size_t>(n_out * n_tok));
      matmul(k, pool2, w, x.data(), n_tok, y.data(), scratch, decode);
      for (int64_t tok = 0; tok < n_tok; ++tok) {
        std::vector<float> alone(static_cast<size_t>(n_out));
        const uint8_t d = decode[static_cast<size_t>(tok)];
        matmul(k, pool1, w, x.data() + tok * n, 1, alone.data(), scratch, std::span<const uint8_t>(&d, 1));
        ASSERT_EQ(std::memcmp(alone.data(), y.data() + tok * n_out, sizeof(float) * static_cast<size_t>(n_out)), 0)
            << isa_label(GetParam()) << " " << tensor_type_name(t) << " token " << tok << (d ? " (decode)" : " (prefill)");
        if (d) {
          // The decode kernel is vec_dot: with no choice given, a single row takes it too.
          std::vector<float> plain(static_cast<size_t>(n_out));
          matmul(k, pool1, w, x.data() + tok * n, 1, plain.data(), scratch);
          ASSERT_EQ(std::memcmp(alone.data(), plain.data(), sizeof(float) * static_cast<size_t>(n_out)), 0)
              << tensor_type_name(t);
        }
      }
    }
    ++tested;
  }
  EXPECT_GT(tested, 5);
  // A kernel choice per row or none at all.
  const std::vector<uint8_t> wrong = {1, 0};
  std::vector<uint8_t> wd(row_bytes(TensorType::F32, 16) * 4);
  const WeightMatrix wf{TensorType::F32, 16, 4, wd.data(), row_bytes(TensorType::F32, 16)};
  std::vector<float> xx(16 * 3), yy(4 * 3);
  MatmulScratch sc;
  EXPECT_THROW(matmul(k, pool1, wf, xx.data(), 3, yy.data(), sc, wrong), Error);
}

// matmul_many: several weights on one input in one pool run give each output the bits matmul
// gives it alone, whatever the mix of types (one conversion per activation type), the kernel
// choices and the thread count.
TEST_P(Matmul, ManyProductsEqualEachAlone) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(11);
  ThreadPool pool2(2), pool1(1);
  const int64_t n = 512;  // a whole number of blocks of every type
  // Mixed activation types: Q8_K for the K-quants, Q8_0/Q8_1 or f32/f16 for the others.
  const TensorType types[] = {TensorType::Q4_0, TensorType::Q4_K, TensorType::Q6_K,
                              TensorType::Q8_0, TensorType::F16,  TensorType::Q5_1};
  const int64_t n_outs[] = {70, 33, 16, 48, 17, 64};
  std::vector<std::vector<uint8_t>> data;
  std::vector<WeightMatrix> ws;
  for (size_t i = 0; i < std::size(types); ++i) {
    const TensorType t = types[i];
    if (!k.vec_dot[static_cast<size_t>(t)]) continue;
    const size_t rb = row_bytes(t, n);
    std::vector<uint8_t> d(rb * static_cast<size_t>(n_outs[i]));
    for (int64_t r = 0; r < n_outs[i]; ++r) {
      const auto row = random_weight_row(t, n, rng);
      std::memcpy(&d[static_cast<size_t>(r) * rb], row.data(), rb);
    }
    data.push_back(std::move(d));
    ws.push_back(WeightMatrix{t, n, n_outs[i], data.back().data(), rb});
  }
  ASSERT_GE(ws.size(), 4u);
  for (int64_t n_tok : {1, 3, 7}) {
    const auto x = random_floats(n * n_tok, 1.0f, rng);
    std::vector<uint8_t> decode(static_cast<size_t>(n_tok));
    for (int64_t t = 0; t < n_tok; ++t) decode[static_cast<size_t>(t)] = (t % 3 == 1) ? 1 : 0;
    for (ThreadPool* pool : {&pool2, &pool1}) {
      std::vector<std::vector<float>> ys;
      std::vector<MatmulOutput> outs;
      for (const WeightMatrix& w : ws) ys.emplace_back(static_cast<size_t>(w.n_out * n_tok), -1.0f);
      for (size_t i = 0; i < ws.size(); ++i) outs.push_back({&ws[i], ys[i].data()});
      MatmulScratch scratch;
      matmul_many(k, *pool, outs, x.data(), n_tok, scratch, decode);
      for (size_t i = 0; i < ws.size(); ++i) {
        std::vector<float> alone(ys[i].size());
        MatmulScratch s1;
        matmul(k, pool1, ws[i], x.data(), n_tok, alone.data(), s1, decode);
        ASSERT_EQ(std::memcmp(alone.data(), ys[i].data(), sizeof(float) * alone.size()), 0)
            << isa_label(GetParam()) << " " << tensor_type_name(ws[i].type) << " tokens " << n_tok << " threads "
            << pool->size();
      }
    }
  }
  // One input, one row length.
  std::vector<uint8_t> a(row_bytes(TensorType::F32, 32) * 2), b(row_bytes(TensorType::F32, 64) * 2);
  const WeightMatrix wa{TensorType::F32, 32, 2, a.data(), row_bytes(TensorType::F32, 32)};
  const WeightMatrix wb{TensorType::F32, 64, 2, b.data(), row_bytes(TensorType::F32, 64)};
  std::vector<float> xx(64), ya(2), yb(2);
  const MatmulOutput mixed[] = {{&wa, ya.data()}, {&wb, yb.data()}};
  MatmulScratch sc;
  EXPECT_THROW(matmul_many(k, pool1, mixed, xx.data(), 1, sc), Error);
}

// The pool's parts (guided: shrinking as the rows run out, never across two products) cover
// every output row exactly once, for decode (small parts) and prefill (larger ones), on 2 and 3
// threads, with row counts that are not whole chunks: each output equals the 1-thread one.
TEST_P(Matmul, PoolPartsCoverEveryRowOnce) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(5);
  ThreadPool pool1(1), pool2(2), pool3(3);
  const int64_t n = 256;
  const int64_t n_outs[] = {16 * 37 + 5, 16 * 61, 3};
  std::vector<std::vector<uint8_t>> data;
  std::vector<WeightMatrix> ws;
  const size_t rb = row_bytes(TensorType::Q8_0, n);
  for (int64_t rows : n_outs) {
    std::vector<uint8_t> d(rb * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      const auto row = random_weight_row(TensorType::Q8_0, n, rng);
      std::memcpy(&d[static_cast<size_t>(r) * rb], row.data(), rb);
    }
    data.push_back(std::move(d));
    ws.push_back(WeightMatrix{TensorType::Q8_0, n, rows, data.back().data(), rb});
  }
  for (int64_t n_tok : {1, 20}) {
    const auto x = random_floats(n * n_tok, 1.0f, rng);
    std::vector<std::vector<float>> want;
    for (const WeightMatrix& w : ws) {
      want.emplace_back(static_cast<size_t>(w.n_out * n_tok));
      MatmulScratch s;
      matmul(k, pool1, w, x.data(), n_tok, want.back().data(), s);
    }
    for (ThreadPool* pool : {&pool2, &pool3}) {
      std::vector<std::vector<float>> ys;
      std::vector<MatmulOutput> outs;
      for (const WeightMatrix& w : ws) ys.emplace_back(static_cast<size_t>(w.n_out * n_tok), std::nanf(""));
      for (size_t i = 0; i < ws.size(); ++i) outs.push_back({&ws[i], ys[i].data()});
      MatmulScratch scratch;
      matmul_many(k, *pool, outs, x.data(), n_tok, scratch);
      for (size_t i = 0; i < ws.size(); ++i) {
        ASSERT_EQ(std::memcmp(want[i].data(), ys[i].data(), sizeof(float) * want[i].size()), 0)
            << isa_label(GetParam()) << " product " << i << " tokens " << n_tok << " threads " << pool->size();
      }
      // One product alone in the pool as well.
      std::vector<float> y(want[1].size(), std::nanf(""));
      MatmulScratch s;
      matmul(k, *pool, ws[1], x.data(), n_tok, y.data(), s);
      ASSERT_EQ(std::memcmp(want[1].data(), y.data(), sizeof(float) * y.size()), 0) << "tokens " << n_tok;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, Matmul, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
