#include "kernels/isa.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "util/error.h"

#if defined(EDGEINFER_ARCH_X86)
#include <cpuid.h>
#elif defined(EDGEINFER_ARCH_ARM64) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace edgeinfer {

namespace {

#if defined(EDGEINFER_ARCH_X86)
struct X86Features {
  bool avx2 = false;
  bool avx512 = false;
  bool avx512_bf16 = false;
};

uint64_t read_xcr0() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

X86Features detect_x86() {
  X86Features f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27), avx = c & (1u << 28), fma = c & (1u << 12),
             f16c = c & (1u << 29);
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;          // SSE + AVX state saved by the OS
  const bool os_zmm = (xcr0 & 0xE6) == 0xE6;        // + opmask, ZMM_Hi256, Hi16_ZMM
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool avx2 = b & (1u << 5), bmi2 = b & (1u << 8);
  const bool avx512f = b & (1u << 16), avx512dq = b & (1u << 17), avx512bw = b & (1u << 30),
             avx512vl = b & (1u << 31), vnni = c & (1u << 11);
  bool bf16 = false;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) bf16 = a & (1u << 5);
  f.avx2 = os_ymm && avx2 && fma && f16c && bmi2;
  f.avx512 = f.avx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl && vnni;
  f.avx512_bf16 = f.avx512 && bf16;
  return f;
}
#endif

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Neon: return "neon";
  }
  return "?";
}

std::optional<Isa> isa_from_name(std::string_view name) {
  for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
    if (isa_name(i) == name) return i;
  }
  return std::nullopt;
}

bool isa_supported(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return true;
#if defined(EDGEINFER_ARCH_X86)
    case Isa::Avx2: {
      static const X86Features f = detect_x86();
      return f.avx2;
    }
    case Isa::Avx512: {
      static const X86Features f = detect_x86();
      return f.avx512;
    }
#elif defined(EDGEINFER_ARCH_ARM64)
    case Isa::Neon: {
#if defined(__linux__)
      // The NEON path uses the dot-product extension (sdot/udot).
      return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
      return true;
#endif
    }
#endif
    default: return false;
  }
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa i : {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Neon}) {
    if (isa_supported(i)) out.push_back(i);
  }
  return out;
}

Isa best_isa() { return supported_isas().back(); }

bool avx512_has_bf16() {
#if defined(EDGEINFER_ARCH_X86)
  static const X86Features f = detect_x86();
  return f.avx512_bf16;
#else
  return false;
#endif
}

std::string_view cpu_vendor_name(CpuVendor v) {
  switch (v) {
    case CpuVendor::Intel: return "Intel";
    case CpuVendor::Amd: return "AMD";
    case CpuVendor::Other: return "other";
  }
  return "?";
}

CpuVendor cpu_vendor() {
#if defined(EDGEINFER_ARCH_X86)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return CpuVendor::Other;
  char id[12];
  std::memcpy(id, &b, 4);  // the 12-character maker string is in EBX, EDX, ECX
  std::memcpy(id + 4, &d, 4);
  std::memcpy(id + 8, &c, 4);
  const std::string_view s(id, sizeof id);
  if (s == "GenuineIntel") return CpuVendor::Intel;
  if (s == "AuthenticAMD") return CpuVendor::Amd;
#endif
  return CpuVendor::Other;
}

Isa select_isa() {
  const char* env = std::getenv("EDGEINFER_ISA");
  if (!env || !*env) return best_isa();
  auto isa = isa_from_name(env);
  if (!isa) {
    throw Error(std::string("EDGEINFER_ISA='") + env + "': unknown path (expected scalar, avx2, avx512 or neon)");
  }
  if (!isa_supported(*isa)) {
    throw Error(std::string("EDGEINFER_ISA='") + env + "': this CPU or build cannot run that path");
  }
  return *isa;
}

}  // namespace edgeinfer
