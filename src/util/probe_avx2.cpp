// AVX2 inner loops of the machine probes (compiled with -mavx2 -mfma; called only when the CPU
// has them).
#include <immintrin.h>

#include "util/probe_kernels.h"

namespace edgeinfer::probe {

uint64_t int8_dot_avx2(int64_t iters, int32_t seed, int32_t* sink) {
  // The u8 x s8 product idiom of AVX2 integer dot kernels: maddubs (32 MACs into 16-bit
  // pairs), madd with ones (to 32-bit), add; 8 independent chains over 8 distinct products.
  // The empty asm makes the operands opaque every iteration so nothing is hoisted.
  __m256i a[4];
  for (int k = 0; k < 4; ++k) a[k] = _mm256_set1_epi8(static_cast<char>((seed + k) & 0x7f));
  __m256i b = _mm256_set1_epi8(static_cast<char>((seed >> 8) & 0x3f));
  __m256i c = _mm256_set1_epi8(static_cast<char>((seed >> 16) & 0x3f));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[8];
  for (auto& v : acc) v = _mm256_setzero_si256();
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(b), "+x"(c));
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm256_add_epi32(acc[k], _mm256_madd_epi16(_mm256_maddubs_epi16(a[k], b), ones));
      acc[k + 4] = _mm256_add_epi32(acc[k + 4], _mm256_madd_epi16(_mm256_maddubs_epi16(a[k], c), ones));
    }
  }
  __m256i s = acc[0];
  for (int k = 1; k < 8; ++k) s = _mm256_add_epi32(s, acc[k]);
  alignas(32) int32_t out[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), s);
  *sink = out[0] + out[7];
  return static_cast<uint64_t>(iters) * 8 * 32 * 2;
}

uint64_t fma_f32_avx2(int64_t iters, float seed, float* sink) {
  const __m256 m = _mm256_set1_ps(0.999999f);
  const __m256 c = _mm256_set1_ps(seed * 1e-7f);
  __m256 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm256_set1_ps(seed + static_cast<float>(k));
  for (int64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < 12; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, c);
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[6]));
  }
  __m256 s = acc[0];
  for (int k = 1; k < 12; ++k) s = _mm256_add_ps(s, acc[k]);
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  *sink = out[0] + out[7];
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
  return static_cast<uint64_t>(_mm256_extract_epi64(s, 0) ^ _mm256_extract_epi64(s, 3));
}

}  // namespace edgeinfer::probe
