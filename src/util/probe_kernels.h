#pragma once
// The inner loops of the machine probes (util/probes.h), one set per instruction-set path.
// Each runs `iters` iterations of a fixed, register-only instruction mix with enough
// independent accumulators to keep every execution port busy, and returns the number of
// operations done (a multiply-add counts as 2), so the caller divides by wall time.
// `seed` comes from memory the compiler cannot see through; results go to *sink so the work
// cannot be removed. The SIMD loops fold every lane of every accumulator into *sink (int8:
// wrapping sum; FP32: lanes of the chains' sum, added in order), so a test can check that each
// did all the arithmetic it counts (tests/kernels/test_probe_kernels.cpp).
#include <cstddef>
#include <cstdint>

namespace edgeinfer::probe {

// int8 dot-product ops: u8 x s8 multiplies accumulated into int32 lanes.
uint64_t int8_dot_scalar(int64_t iters, int32_t seed, int32_t* sink);
uint64_t int8_dot_avx2(int64_t iters, int32_t seed, int32_t* sink);    // vpmaddubsw + vpmaddwd + vpaddd
uint64_t int8_dot_avx512(int64_t iters, int32_t seed, int32_t* sink);  // vpdpbusd on zmm (VNNI)
uint64_t int8_dot_neon(int64_t iters, int32_t seed, int32_t* sink);    // sdot (s8 x s8; dotprod)

// FP32 fused multiply-add flops.
uint64_t fma_f32_scalar(int64_t iters, float seed, float* sink);
uint64_t fma_f32_avx2(int64_t iters, float seed, float* sink);    // vfmadd on ymm
uint64_t fma_f32_avx512(int64_t iters, float seed, float* sink);  // vfmadd on zmm
uint64_t fma_f32_neon(int64_t iters, float seed, float* sink);    // fmla on 4 lanes

// Reads n bytes (a multiple of 256, 64-byte aligned) and returns the XOR of all their 64-bit
// words (so every byte is read once: a loop that skipped some would look faster).
uint64_t read_scalar(const void* p, size_t n);
uint64_t read_avx2(const void* p, size_t n);
uint64_t read_avx512(const void* p, size_t n);
uint64_t read_neon(const void* p, size_t n);

}  // namespace edgeinfer::probe
