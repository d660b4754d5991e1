#pragma once
// Instruction-set paths for the kernels. The path is chosen once at start-up from CPUID and the
// OS's saved-state support (xgetbv) on x86, from the auxiliary vector on aarch64;
// EDGEINFER_ISA=scalar|avx2|avx512|neon forces one (tests, benchmarks).
#include <optional>
#include <string_view>
#include <vector>

namespace edgeinfer {

enum class Isa { Scalar, Avx2, Avx512, Neon };

std::string_view isa_name(Isa isa);
std::optional<Isa> isa_from_name(std::string_view name);
// Whether this CPU and OS can run the path (and this binary contains it).
bool isa_supported(Isa isa);
// Every path this machine can run, scalar first.
std::vector<Isa> supported_isas();
// The fastest supported path.
Isa best_isa();
// EDGEINFER_ISA if set (throws Error when unknown or unsupported here), else best_isa().
Isa select_isa();
// Whether the AVX-512 path may use AVX512_BF16 (vdpbf16ps) for BF16 weights. The path itself
// needs AVX512 F/BW/VL/DQ and VNNI; without BF16 it keeps the AVX2 BF16 kernels.
bool avx512_has_bf16();

// The CPU's maker (CPUID leaf 0 on x86; Other elsewhere). A few kernels come in variants with
// the same bits whose speed was measured to differ between makers' cores; the table takes the
// variant measured faster on this one (kernels.h build_kernels).
enum class CpuVendor { Intel, Amd, Other };
std::string_view cpu_vendor_name(CpuVendor v);
CpuVendor cpu_vendor();

}  // namespace edgeinfer
