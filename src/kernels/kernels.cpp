#include "kernels/kernels.h"

#include <string>

#include "util/error.h"

namespace edgeinfer {

namespace {

Kernels build(Isa isa, CpuVendor vendor) {
  (void)vendor;  // only the AVX-512 table has variants by maker
  Kernels k;
  fill_scalar_kernels(k);  // every path starts from the references and overrides what it has
  switch (isa) {
    case Isa::Scalar: break;
#if defined(EDGEINFER_ARCH_X86)
    case Isa::Avx2: fill_avx2_kernels(k); break;
    case Isa::Avx512:
      fill_avx2_kernels(k);  // AVX-512 falls back to AVX2 for what it does not specialize
      fill_avx512_kernels(k, vendor);
      break;
#elif defined(EDGEINFER_ARCH_ARM64)
    case Isa::Neon: fill_neon_kernels(k); break;
#endif
    default: break;
  }
  k.isa = isa;
  return k;
}

void check_supported(Isa isa) {
  if (!isa_supported(isa)) {
    throw Error("kernel path '" + std::string(isa_name(isa)) + "' is not supported on this machine");
  }
}

}  // namespace

Kernels build_kernels(Isa isa, CpuVendor vendor) {
  check_supported(isa);
  return build(isa, vendor);
}

const Kernels& kernels_for(Isa isa) {
  check_supported(isa);
  // Built once on first use, immutable afterwards.
  static const Kernels scalar = build(Isa::Scalar, cpu_vendor());
  switch (isa) {
    case Isa::Scalar: return scalar;
    case Isa::Avx2: {
      static const Kernels t = build(Isa::Avx2, cpu_vendor());
      return t;
    }
    case Isa::Avx512: {
      static const Kernels t = build(Isa::Avx512, cpu_vendor());
      return t;
    }
    case Isa::Neon: {
      static const Kernels t = build(Isa::Neon, cpu_vendor());
      return t;
    }
  }
  return scalar;
}

}  // namespace edgeinfer
