// AVX2 dot products of the float types: F32, F16 (vcvtph2ps, F32 accumulation) and BF16
// (widened to F32 by a 16-bit shift). Four independent accumulators hide the FMA latency; row
// tails use masked loads (F32) or short scalar loops in F32.
#include "kernels/simd_avx2.h"

namespace edgeinfer {

using namespace avx2;

namespace {

// Accumulates fma(load(a + i), load(b + i)) over full 32-element steps, then 8-element steps;
// returns the index reached. `ld` converts 8 elements at a pointer to __m256.
template <typename T, typename Load>
inline int64_t dot_body(int64_t n, const T* a, const T* b, Load ld, __m256& out) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(ld(a + i), ld(b + i), acc0);
    acc1 = _mm256_fmadd_ps(ld(a + i + 8), ld(b + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(ld(a + i + 16), ld(b + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(ld(a + i + 24), ld(b + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(ld(a + i), ld(b + i), acc0);
  out = _mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3));
  return i;
}

inline float bf16_scalar(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace

void f32_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const float* a = static_cast<const float*>(x);
  const float* b = static_cast<const float*>(y);
  __m256 acc;
  const int64_t i = dot_body(n, a, b, [](const float* p) { return _mm256_loadu_ps(p); }, acc);
  if (i < n) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lanes);
    acc = _mm256_fmadd_ps(_mm256_maskload_ps(a + i, m), _mm256_maskload_ps(b + i, m), acc);
  }
  *s = hsum(acc);
}

void f16_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  __m256 acc;
  int64_t i = dot_body(n, a, b, [](const uint16_t* p) { return _mm256_cvtph_ps(loadu128(p)); }, acc);
  float tail = 0.0f;
  for (; i < n; ++i) tail += f16_to_f32(a[i]) * f16_to_f32(b[i]);
  *s = hsum(acc) + tail;
}

void bf16_vec_dot_avx2(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  __m256 acc;
  int64_t i = dot_body(n, a, b, [](const uint16_t* p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(loadu128(p)), 16));
  }, acc);
  float tail = 0.0f;
  for (; i < n; ++i) tail += bf16_scalar(a[i]) * bf16_scalar(b[i]);
  *s = hsum(acc) + tail;
}

}  // namespace edgeinfer
