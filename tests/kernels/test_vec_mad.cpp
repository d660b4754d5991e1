// vec_mad (attention's y += w * x over V rows) of every SIMD path against the scalar reference:
// each element may differ by the rounding of one product (fused or not), so
// |simd - ref| <= 2^-22 * (|y| + |w * x|) + 1e-30. The KV cache types: F32, F16, Q8_0 (rows of
// whole 32-element blocks, so only sizes that are multiples of 32 for it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernel_test_data.h"
#include "quant/type_traits.h"

namespace edgeinfer::kernel_test {
namespace {

class VecMad : public ::testing::TestWithParam<Isa> {};

constexpr TensorType kKvTypes[] = {TensorType::F32, TensorType::F16, TensorType::Q8_0};

// Whether a row of n elements is whole blocks of t.
bool whole_blocks(TensorType t, int64_t n) { return n % type_traits(t).block_size == 0; }

TEST_P(VecMad, MatchesScalarWithinOneRounding) {
  const Kernels& k = kernels_for(GetParam());
  const Kernels& ref = kernels_for(Isa::Scalar);
  std::mt19937 rng(9);
  for (TensorType t : kKvTypes) {
    const VecMadFn mad = k.vec_mad[static_cast<size_t>(t)];
    const VecMadFn mad_ref = ref.vec_mad[static_cast<size_t>(t)];
    ASSERT_NE(mad_ref, nullptr) << tensor_type_name(t);
    ASSERT_NE(mad, nullptr) << isa_label(GetParam()) << " " << tensor_type_name(t);
    for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 32, 64, 80, 96, 128, 133, 160, 256}) {
      if (!whole_blocks(t, n)) continue;
      const auto xf = random_floats(n, 1.0f, rng);
      const auto x = activation_row(t, xf);  // the row in t's encoding
      std::vector<float> xd(static_cast<size_t>(n));
      type_traits(t).to_float(x.data(), xd.data(), n);
      const auto y0 = random_floats(n, 2.0f, rng);
      for (float w : {0.0f, 1.0f, -0.37f, 3.5e-3f}) {
        std::vector<float> a = y0, b = y0;
        mad(n, a.data(), x.data(), w);
        mad_ref(n, b.data(), x.data(), w);
        for (int64_t i = 0; i < n; ++i) {
          const double budget =
              std::ldexp(1.0, -22) * (std::fabs(y0[static_cast<size_t>(i)]) + std::fabs(w * xd[static_cast<size_t>(i)])) +
              1e-30;
          ASSERT_LE(std::fabs(static_cast<double>(a[static_cast<size_t>(i)]) - b[static_cast<size_t>(i)]), budget)
              << isa_label(GetParam()) << " " << tensor_type_name(t) << " n=" << n << " w=" << w << " i=" << i;
        }
      }
    }
  }
}

// Every SIMD path has the row kernels of the F16 and Q8_0 caches (attention takes its GQA group
// path only where dot_rows_group and mad_rows_group are both set), so the tests below run them.
TEST_P(VecMad, SimdPathsHaveTheRowKernels) {
  if (GetParam() == Isa::Scalar) GTEST_SKIP() << "the scalar path loops vec_dot / vec_mad";
  const Kernels& k = kernels_for(GetParam());
  for (TensorType t : {TensorType::F16, TensorType::Q8_0}) {
    const size_t i = static_cast<size_t>(t);
    EXPECT_NE(k.dot_rows[i], nullptr) << isa_label(GetParam()) << " " << tensor_type_name(t);
    EXPECT_NE(k.mad_rows[i], nullptr) << isa_label(GetParam()) << " " << tensor_type_name(t);
    EXPECT_NE(k.dot_rows_group[i], nullptr) << isa_label(GetParam()) << " " << tensor_type_name(t);
    EXPECT_NE(k.mad_rows_group[i], nullptr) << isa_label(GetParam()) << " " << tensor_type_name(t);
  }
}

// dot_rows (attention scores over one block's K rows): every row within the dot budget of the
// scalar reference dot, whatever the number of rows in the call.
TEST_P(VecMad, DotRowsMatchReferenceDots) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(13);
  int tested = 0;
  for (TensorType t : kKvTypes) {
    const DotRowsFn rows = k.dot_rows[static_cast<size_t>(t)];
    if (!rows) continue;
    ++tested;
    const TypeTraits& tr = type_traits(t);
    for (int64_t n : {16, 32, 64, 128, 256, 40, 8, 320}) {
      if (!whole_blocks(t, n)) continue;
      for (int64_t nr : {1, 3, 4, 5, 16}) {
        const size_t rb = row_bytes(t, n), stride = rb + 24;
        std::vector<uint8_t> kr(stride * static_cast<size_t>(nr));
        for (int64_t r = 0; r < nr; ++r) {
          const auto row = activation_row(t, random_floats(n, 1.0f, rng));
          std::memcpy(&kr[static_cast<size_t>(r) * stride], row.data(), rb);
        }
        const auto q = activation_row(tr.vec_dot_type, random_floats(n, 1.0f, rng));
        std::vector<float> out(static_cast<size_t>(nr) + 1, -7.0f);
        rows(n, nr, kr.data(), stride, q.data(), out.data());
        EXPECT_EQ(out[static_cast<size_t>(nr)], -7.0f) << "wrote past the rows";
        for (int64_t r = 0; r < nr; ++r) {
          const uint8_t* kp = &kr[static_cast<size_t>(r) * stride];
          float want = 0;
          tr.vec_dot_ref(n, &want, kp, q.data());
          ASSERT_LE(std::fabs(static_cast<double>(want) - out[static_cast<size_t>(r)]), dot_budget(t, n, kp, q.data()))
              << isa_label(GetParam()) << " " << tensor_type_name(t) << " n=" << n << " rows=" << nr << " row " << r;
        }
      }
    }
  }
  RecordProperty("types_with_dot_rows", tested);
}

// mad_rows: bit-identical to the same path's vec_mad called row by row.
TEST_P(VecMad, MadRowsEqualsVecMadRowByRow) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(17);
  for (TensorType t : kKvTypes) {
    const MadRowsFn rows = k.mad_rows[static_cast<size_t>(t)];
    if (!rows) continue;
    for (int64_t n : {16, 32, 64, 96, 128, 8, 40, 256}) {
      if (!whole_blocks(t, n)) continue;
      for (int64_t nr : {1, 2, 5, 16}) {
        const size_t rb = row_bytes(t, n), stride = rb + 8;
        std::vector<uint8_t> vr(stride * static_cast<size_t>(nr));
        for (int64_t r = 0; r < nr; ++r) {
          const auto row = activation_row(t, random_floats(n, 1.0f, rng));
          std::memcpy(&vr[static_cast<size_t>(r) * stride], row.data(), rb);
        }
        const auto w = random_floats(nr, 0.3f, rng);
        const auto y0 = random_floats(n, 1.0f, rng);
        std::vector<float> a = y0, b = y0;
        rows(n, nr, vr.data(), stride, w.data(), a.data());
        for (int64_t r = 0; r < nr; ++r) {
          k.vec_mad[static_cast<size_t>(t)](n, b.data(), &vr[static_cast<size_t>(r) * stride], w[static_cast<size_t>(r)]);
        }
        ASSERT_EQ(std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<size_t>(n)), 0)
            << isa_label(GetParam()) << " " << tensor_type_name(t) << " n=" << n << " rows=" << nr;
      }
    }
  }
}

// dot_rows_group: every head's scores bit-identical to dot_rows with that head's query, for
// whole 16-row blocks (the transposed reduction; from 16 queries on (Q8_0: 4), AVX-512's
// transposed block, in runs of 4 queries and single ones) and the rows after them.
TEST_P(VecMad, DotRowsGroupEqualsDotRowsPerHead) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(19);
  for (TensorType t : kKvTypes) {
    const DotRowsGroupFn group = k.dot_rows_group[static_cast<size_t>(t)];
    if (!group) continue;
    const DotRowsFn rows = k.dot_rows[static_cast<size_t>(t)];
    ASSERT_NE(rows, nullptr) << "group kernel without dot_rows for " << tensor_type_name(t);
    const TypeTraits& tr = type_traits(t);
    for (int64_t n : {64, 16, 128, 32, 40, 256}) {
      if (!whole_blocks(t, n)) continue;
      for (int64_t nr : {16, 1, 5, 17, 32, 37}) {
        for (int64_t nx : {1, 2, 3, 5, 8, 16, 23, 37}) {
          const size_t rb = row_bytes(t, n), stride = rb + 24;
          std::vector<uint8_t> kr(stride * static_cast<size_t>(nr));
          for (int64_t r = 0; r < nr; ++r) {
            const auto row = activation_row(t, random_floats(n, 1.0f, rng));
            std::memcpy(&kr[static_cast<size_t>(r) * stride], row.data(), rb);
          }
          const size_t qb = row_bytes(tr.vec_dot_type, n), x_stride = qb + 16;
          std::vector<uint8_t> qs(x_stride * static_cast<size_t>(nx));
          for (int64_t h = 0; h < nx; ++h) {
            const auto q = activation_row(tr.vec_dot_type, random_floats(n, 1.0f, rng));
            std::memcpy(&qs[static_cast<size_t>(h) * x_stride], q.data(), qb);
          }
          const size_t out_stride = static_cast<size_t>(nr) + 3;
          std::vector<float> got(out_stride * static_cast<size_t>(nx), -7.0f);
          group(n, nr, kr.data(), stride, nx, qs.data(), x_stride, got.data(), out_stride);
          for (int64_t h = 0; h < nx; ++h) {
            std::vector<float> want(static_cast<size_t>(nr));
            rows(n, nr, kr.data(), stride, &qs[static_cast<size_t>(h) * x_stride], want.data());
            const float* g = &got[static_cast<size_t>(h) * out_stride];
            ASSERT_EQ(std::memcmp(g, want.data(), sizeof(float) * static_cast<size_t>(nr)), 0)
                << isa_label(GetParam()) << " " << tensor_type_name(t) << " n=" << n << " rows=" << nr << " heads=" << nx
                << " head " << h;
            for (size_t i = static_cast<size_t>(nr); i < out_stride; ++i) ASSERT_EQ(g[i], -7.0f) << "wrote past the rows";
          }
        }
      }
    }
  }
}

// mad_rows_group: every head's sum bit-identical to mad_rows with that head's weights.
TEST_P(VecMad, MadRowsGroupEqualsMadRowsPerHead) {
  const Kernels& k = kernels_for(GetParam());
  std::mt19937 rng(23);
  for (TensorType t : kKvTypes) {
    const MadRowsGroupFn group = k.mad_rows_group[static_cast<size_t>(t)];
    if (!group) continue;
    const MadRowsFn rows = k.mad_rows[static_cast<size_t>(t)];
    ASSERT_NE(rows, nullptr) << "group kernel without mad_rows for " << tensor_type_name(t);
    // Every head_dim 16..128 (the AVX-512 kernel's passes of 8, 4 or 2 heads), odd sizes and a
    // head count that leaves a partial pass for each of them; from 16 heads on, AVX-512 stages
    // the f16 rows as f32 16 at a time (17 and 37 rows: more than one staging).
    for (int64_t n : {64, 16, 32, 48, 80, 96, 112, 128, 40, 256}) {
      if (!whole_blocks(t, n)) continue;
      for (int64_t nr : {16, 1, 5, 17, 37}) {
        for (int64_t ny : {1, 3, 6, 8, 11, 15, 16, 29}) {
          const size_t rb = row_bytes(t, n), stride = rb + 8;
          std::vector<uint8_t> vr(stride * static_cast<size_t>(nr));
          for (int64_t r = 0; r < nr; ++r) {
            const auto row = activation_row(t, random_floats(n, 1.0f, rng));
            std::memcpy(&vr[static_cast<size_t>(r) * stride], row.data(), rb);
          }
          const size_t w_stride = static_cast<size_t>(nr) + 5, y_stride = static_cast<size_t>(n) + 16;
          const auto w = random_floats(static_cast<int64_t>(w_stride) * ny, 0.3f, rng);
          const auto y0 = random_floats(static_cast<int64_t>(y_stride) * ny, 1.0f, rng);
          std::vector<float> got = y0;
          group(n, nr, vr.data(), stride, ny, w.data(), w_stride, got.data(), y_stride);
          for (int64_t h = 0; h < ny; ++h) {
            std::vector<float> want(y0.begin() + static_cast<std::ptrdiff_t>(h * y_stride),
                                    y0.begin() + static_cast<std::ptrdiff_t>(h * y_stride + n));
            rows(n, nr, vr.data(), stride, &w[static_cast<size_t>(h) * w_stride], want.data());
            const float* g = &got[static_cast<size_t>(h) * y_stride];
            ASSERT_EQ(std::memcmp(g, want.data(), sizeof(float) * static_cast<size_t>(n)), 0)
                << isa_label(GetParam()) << " " << tensor_type_name(t) << " n=" << n << " rows=" << nr << " heads=" << ny
                << " head " << h;
            for (size_t i = static_cast<size_t>(n); i < y_stride; ++i) {
              ASSERT_EQ(g[i], y0[static_cast<size_t>(h) * y_stride + i]) << "wrote past the head";
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, VecMad, ::testing::ValuesIn(supported_isas()),
                         [](const ::testing::TestParamInfo<Isa>& p) { return isa_label(p.param); });

}  // namespace
}  // namespace edgeinfer::kernel_test
