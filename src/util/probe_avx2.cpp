// AVX2 inner loops of the machine probes (compiled with -mavx2 -mfma; called only when the CPU
// has them).
#include <immintrin.h>

#include "util/probe_kernels.h"

namespace edgeinfer::probe {

// The accumulators are named variables, not an array: GCC keeps an array of vectors in memory,
// and the store-forwarding latency would then be measured instead of the execution ports.
#define EI_PROBE_3(X) X(0) X(1) X(2)
#define EI_PROBE_12(X) EI_PROBE_3(X) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

uint64_t int8_dot_avx2(int64_t iters, int32_t seed, int32_t* sink) {
  // The u8 x s8 product idiom of AVX2 integer dot kernels: maddubs (32 MACs into 16-bit
  // pairs), madd with ones (to 32-bit), add; 6 independent chains over 6 distinct products (all
  // in the 16 ymm registers: more chains would spill).
  // The empty asm makes the operands opaque every iteration so nothing is hoisted.
#define DECL(k) __m256i a##k = _mm256_set1_epi8(static_cast<char>((seed + k) & 0x7f));
  EI_PROBE_3(DECL)
#undef DECL
  __m256i b = _mm256_set1_epi8(static_cast<char>((seed >> 8) & 0x3f));
  __m256i c = _mm256_set1_epi8(static_cast<char>((seed >> 16) & 0x3f));
  const __m256i ones = _mm256_set1_epi16(1);
#define DECL(k) __m256i accb##k = _mm256_setzero_si256(), accc##k = _mm256_setzero_si256();
  EI_PROBE_3(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(b), "+x"(c));
#define STEP(k)                                                                            \
  accb##k = _mm256_add_epi32(accb##k, _mm256_madd_epi16(_mm256_maddubs_epi16(a##k, b), ones)); \
  accc##k = _mm256_add_epi32(accc##k, _mm256_madd_epi16(_mm256_maddubs_epi16(a##k, c), ones));
    EI_PROBE_3(STEP)
#undef STEP
  }
  __m256i s = _mm256_setzero_si256();
#define SUM(k) s = _mm256_add_epi32(s, _mm256_add_epi32(accb##k, accc##k));
  EI_PROBE_3(SUM)
#undef SUM
  alignas(32) uint32_t out[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), s);
  // The sums wrap after enough iterations, so the lanes are added as unsigned (wrapping,
  // defined) and the bits handed back.
  uint32_t folded = 0;
  for (const uint32_t lane : out) folded += lane;
  *sink = static_cast<int32_t>(folded);
  return static_cast<uint64_t>(iters) * 6 * 32 * 2;
}

uint64_t fma_f32_avx2(int64_t iters, float seed, float* sink) {
  __m256 m = _mm256_set1_ps(0.999999f);
  __m256 c = _mm256_set1_ps(seed * 1e-7f);
#define DECL(k) __m256 acc##k = _mm256_set1_ps(seed + static_cast<float>(k));
  EI_PROBE_12(DECL)
#undef DECL
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+x"(m), "+x"(c));
#define STEP(k) acc##k = _mm256_fmadd_ps(acc##k, m, c);
    EI_PROBE_12(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(k) s = _mm256_add_ps(s, acc##k);
  EI_PROBE_12(SUM)
#undef SUM
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  float total = 0;
  for (float x : out) total += x;
  *sink = total;
  return static_cast<uint64_t>(iters) * 12 * 8 * 2;
}

uint64_t read_avx2(const void* p, size_t n) {
  const auto* v = static_cast<const __m256i*>(p);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < n / 32; i += 8) {
    a0 = _mm256_xor_si256(a0, _mm256_load_si256(v + i));
    a1 = _mm256_xor_si256(a1, _mm256_load_si256(v + i + 1));
    a2 = _mm256_xor_si256(a2, _mm256_load_si256(v + i + 2));
    a3 = _mm256_xor_si256(a3, _mm256_load_si256(v + i + 3));
    a0 = _mm256_xor_si256(a0, _mm256_load_si256(v + i + 4));
    a1 = _mm256_xor_si256(a1, _mm256_load_si256(v + i + 5));
    a2 = _mm256_xor_si256(a2, _mm256_load_si256(v + i + 6));
    a3 = _mm256_xor_si256(a3, _mm256_load_si256(v + i + 7));
  }
  const __m256i s = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  return static_cast<uint64_t>(_mm256_extract_epi64(s, 0) ^ _mm256_extract_epi64(s, 1) ^ _mm256_extract_epi64(s, 2) ^
                               _mm256_extract_epi64(s, 3));
}

}  // namespace edgeinfer::probe
