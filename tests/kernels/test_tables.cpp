// The SIMD tables really specialize what they claim: a path that silently fell back to the
// scalar reference would pass every accuracy test and lose all its speed.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "kernel_test_data.h"
#include "kernels/ops.h"
#include "quant/type_traits.h"
#include "util/error.h"

namespace edgeinfer::kernel_test {
namespace {

TEST(KernelTables, SimdPathsSpecializeTheHotTypes) {
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels_for(isa);
    EXPECT_EQ(k.isa, isa);
    for (TensorType t : activation_types()) {
      EXPECT_NE(k.from_float[static_cast<size_t>(t)], type_traits(t).from_float_ref)
          << isa_name(isa) << " from_float " << tensor_type_name(t);
    }
    for (TensorType t : dot_types()) {
      EXPECT_NE(k.vec_dot[static_cast<size_t>(t)], type_traits(t).vec_dot_ref)
          << isa_name(isa) << " vec_dot " << tensor_type_name(t);
    }
    EXPECT_NE(k.silu_mul, &silu_mul) << isa_name(isa) << " silu_mul";
    EXPECT_NE(k.softmax_step, &softmax_step) << isa_name(isa) << " softmax_step";
  }
}

// Every SIMD path has a register-blocked prefill tile for every weight type (matmul would
// otherwise loop vec_dot over the prompt's rows).
TEST(KernelTables, SimdPathsHaveATileForEveryType) {
  for (Isa isa : simd_isas()) {
    const Kernels& k = kernels_for(isa);
    for (TensorType t : dot_types()) {
      EXPECT_NE(k.gemm_tile[static_cast<size_t>(t)], nullptr) << isa_name(isa) << " gemm_tile " << tensor_type_name(t);
    }
  }
}

// The AVX-512 path takes its BF16 kernels from AVX512_BF16 where the CPU has it, from AVX2 where
// it does not (the path itself runs on AVX-512 CPUs without BF16).
TEST(KernelTables, Avx512BF16KernelsFollowTheCpu) {
  if (!isa_supported(Isa::Avx512)) GTEST_SKIP() << "no AVX-512 here";
  const Kernels& k = kernels_for(Isa::Avx512);
  const Kernels& a = kernels_for(Isa::Avx2);
  const size_t bf16 = static_cast<size_t>(TensorType::BF16);
  EXPECT_EQ(k.vec_dot[bf16] == a.vec_dot[bf16], !avx512_has_bf16());
  EXPECT_EQ(k.gemm_tile[bf16] == a.gemm_tile[bf16], !avx512_has_bf16());
}

// The tables differ by CPU maker only where a variant was measured faster on one maker's cores:
// on Intel the AVX-512 one-column x16 GEMVs of Q4_0 and Q8_0 and F16 vec_dot (F16 decode) request
// their streams ahead, elsewhere they do not; Intel's Q4_K x16 GEMV requests every line ahead,
// the others every other line; and Intel's table reads F16 in the x16 layout (a tile and GEMV of
// their own arithmetic, kernels.h kF16X16SumBlock), the others from the rows.
// kernels_for builds this machine's maker's table; every other entry is the same for all makers.
TEST(KernelTables, MakersTablesDifferOnlyInTheirMeasuredVariants) {
  for (Isa isa : supported_isas()) {
    const Kernels intel = build_kernels(isa, CpuVendor::Intel), amd = build_kernels(isa, CpuVendor::Amd),
                  other = build_kernels(isa, CpuVendor::Other), here = build_kernels(isa, cpu_vendor());
    const Kernels& k = kernels_for(isa);
    for (size_t t = 0; t < kTensorTypeCount; ++t) {
      const bool avx512 = isa == Isa::Avx512;
      const bool f16 = t == static_cast<size_t>(TensorType::F16);
      const bool streamed = t == static_cast<size_t>(TensorType::Q4_0) || t == static_cast<size_t>(TensorType::Q8_0) ||
                            t == static_cast<size_t>(TensorType::Q4_K);
      EXPECT_EQ(intel.gemv_x16[t] != amd.gemv_x16[t], avx512 && (streamed || f16))
          << isa_name(isa) << " gemv_x16 type " << t;
      EXPECT_EQ(intel.gemm_tile_x16[t] != amd.gemm_tile_x16[t], avx512 && f16) << isa_name(isa) << " type " << t;
      EXPECT_EQ(amd.gemm_tile_x16[t], other.gemm_tile_x16[t]) << isa_name(isa) << " type " << t;
      EXPECT_EQ(k.gemm_tile_x16[t], here.gemm_tile_x16[t]) << isa_name(isa) << " type " << t;
      EXPECT_EQ(intel.vec_dot[t] != amd.vec_dot[t], avx512 && t == static_cast<size_t>(TensorType::F16))
          << isa_name(isa) << " vec_dot type " << t;
      EXPECT_EQ(amd.gemv_x16[t], other.gemv_x16[t]) << isa_name(isa) << " type " << t;
      EXPECT_EQ(amd.vec_dot[t], other.vec_dot[t]) << isa_name(isa) << " type " << t;
      EXPECT_EQ(k.gemv_x16[t], here.gemv_x16[t]) << isa_name(isa) << " type " << t;
      EXPECT_EQ(k.vec_dot[t], here.vec_dot[t]) << isa_name(isa) << " type " << t;
      EXPECT_EQ(intel.gemv[t], amd.gemv[t]);
      EXPECT_EQ(intel.gemm_tile[t], amd.gemm_tile[t]);
      EXPECT_EQ(intel.vec_mad[t], amd.vec_mad[t]);
      EXPECT_EQ(intel.dot_rows[t], amd.dot_rows[t]);
    }
  }
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
    if (!isa_supported(isa)) {
      EXPECT_THROW(build_kernels(isa, CpuVendor::Other), Error) << isa_name(isa);
    }
  }
}

// Every maker's F16 vec_dot gives the same bits (the variants differ only in prefetch requests;
// the path's own table is checked against the reference by the VecDot tests): rows shorter than
// a vector, with tails, and the model's longest. (Requests past a buffer's end do not fault.)
TEST(KernelTables, MakersF16VecDotsGiveTheSameBits) {
  std::mt19937 rng(7);
  for (Isa isa : supported_isas()) {
    const size_t f16 = static_cast<size_t>(TensorType::F16);
    const VecDotFn a = build_kernels(isa, CpuVendor::Intel).vec_dot[f16];
    const VecDotFn b = build_kernels(isa, CpuVendor::Amd).vec_dot[f16];
    for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{63}, int64_t{64}, int64_t{100}, int64_t{2048},
                      int64_t{5632}}) {
      const auto w = random_weight_rows(TensorType::F16, n, 3, rng);
      const auto x = activation_row(TensorType::F16, random_floats(n, 1.0f, rng));
      for (int64_t r = 0; r < 3; ++r) {
        const uint8_t* row = w.data() + static_cast<size_t>(r) * row_bytes(TensorType::F16, n);
        float sa = -1.0f, sb = -2.0f;
        a(n, &sa, row, x.data());
        b(n, &sb, row, x.data());
        EXPECT_EQ(std::memcmp(&sa, &sb, sizeof sa), 0) << isa_name(isa) << " n=" << n << " row " << r << ": " << sa
                                                         << " vs " << sb;
      }
    }
  }
}

#if defined(EDGEINFER_ARCH_X86)
// cpu_vendor reads CPUID's maker string as the kernel reports it in /proc/cpuinfo.
TEST(KernelTables, CpuVendorIsTheMakerTheKernelReports) {
  std::ifstream in("/proc/cpuinfo");
  if (!in) GTEST_SKIP() << "no /proc/cpuinfo";
  std::string line, id;
  while (std::getline(in, line)) {
    if (line.rfind("vendor_id", 0) == 0) {
      id = line.substr(line.find(':') + 2);
      break;
    }
  }
  if (id.empty()) GTEST_SKIP() << "no vendor_id in /proc/cpuinfo";
  const CpuVendor want = id == "GenuineIntel"   ? CpuVendor::Intel
                         : id == "AuthenticAMD" ? CpuVendor::Amd
                                                : CpuVendor::Other;
  EXPECT_EQ(cpu_vendor(), want) << id << " read as " << cpu_vendor_name(cpu_vendor());
}
#endif

TEST(KernelTables, ScalarPathIsTheReference) {
  const Kernels& k = kernels_for(Isa::Scalar);
  for (TensorType t : dot_types()) {
    EXPECT_EQ(k.vec_dot[static_cast<size_t>(t)], type_traits(t).vec_dot_ref);
    EXPECT_EQ(k.gemm_tile[static_cast<size_t>(t)], nullptr);
  }
  EXPECT_EQ(k.silu_mul, &silu_mul);
}

}  // namespace
}  // namespace edgeinfer::kernel_test
