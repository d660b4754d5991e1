// AVX-512 dot products of the float types F32 and F16 (converted with vcvtph2ps, accumulated
// in F32; BF16's is in bf16_avx512bf16.cpp). Four independent accumulators hide the FMA
// latency; row tails use masked loads.
#include "kernels/simd_avx512.h"

namespace edgeinfer {

using namespace avx512;

void f32_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) {
  const float* a = static_cast<const float*>(x);
  const float* b = static_cast<const float*>(y);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
    acc2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), acc2);
    acc3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), acc3);
  }
  for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    acc1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc1);
  }
  *s = hsum(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

namespace {

// kPrefetch: x (the weight row, read once per token in decode) also requests, into L2, the
// stream kPrefetchAhead bytes ahead of each 128 bytes it reads (one request per line pair; the L2's
// adjacent-line prefetch brings the other half). Same operations, same bits.
constexpr size_t kPrefetchAhead = 4096;  // bytes

template <bool kPrefetch>
void f16_vec_dot(int64_t n, float* s, const void* x, const void* y) {
  const uint16_t* a = static_cast<const uint16_t*>(x);
  const uint16_t* b = static_cast<const uint16_t*>(y);
  auto ld = [](const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); };
  __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    if constexpr (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(a + i) + kPrefetchAhead, _MM_HINT_T2);
    acc0 = _mm512_fmadd_ps(ld(a + i), ld(b + i), acc0);
    acc1 = _mm512_fmadd_ps(ld(a + i + 16), ld(b + i + 16), acc1);
    acc2 = _mm512_fmadd_ps(ld(a + i + 32), ld(b + i + 32), acc2);
    acc3 = _mm512_fmadd_ps(ld(a + i + 48), ld(b + i + 48), acc3);
  }
  for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(ld(a + i), ld(b + i), acc0);
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 va = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, a + i));
    const __m512 vb = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, b + i));
    acc1 = _mm512_fmadd_ps(va, vb, acc1);
  }
  *s = hsum(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
}

}  // namespace

void f16_vec_dot_avx512(int64_t n, float* s, const void* x, const void* y) { f16_vec_dot<false>(n, s, x, y); }
void f16_vec_dot_prefetch_avx512(int64_t n, float* s, const void* x, const void* y) { f16_vec_dot<true>(n, s, x, y); }

}  // namespace edgeinfer
