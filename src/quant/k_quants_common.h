#pragma once
// Pieces shared by the K-quant families (256-element super-blocks split into 16 or 8
// sub-blocks, each with its own small integer scale relative to the super-block's fp16 scale).
// The level-fitting searches reproduce GGML's reference quantizers operation for operation,
// float rounding order included, since the quantized bytes must match llama-quantize's.
#include <cstdint>

namespace edgeinfer::quant_detail {

// Affine fit x ~ scale * L + min with L in [0, nmax], min <= 0, weighted by w (GGML's
// make_qkx2_quants): starts from the [min(x, 0), max(x)] grid, then tries nstep + 1 grids of
// (nmax + rmin + rdelta * k) levels over the current range, keeping the least-squares fit of
// each grid when it lowers the weighted error (absolute when use_abs, squared otherwise).
// Writes the levels to L, -min to *neg_min, returns the scale. Laux: n bytes of scratch.
float fit_affine_levels(int n, int nmax, const float* x, const float* w, uint8_t* L, float* neg_min,
                        uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_abs);

// Symmetric fit x ~ scale * (L - nmax), L in [0, 2 nmax), weights x^2 (GGML's make_qx_quants
// with rmse_type 1 and no importance weights): the extreme element takes level 0, then 18
// nearby grids are tried and the best least-squares scale is kept. Returns the scale (0 for a
// block of zeros, where L is all 0).
float fit_symmetric_levels(int n, int nmax, const float* x, int8_t* L);

// Symmetric fit for Q3_K (GGML's make_q3_quants with do_rmse): after the initial grid, up to
// five passes move single elements to the level that improves the weighted fit. L in
// [0, 2 nmax).
float fit_symmetric_levels_iterative(int n, int nmax, const float* x, int8_t* L);

// Q4_K/Q5_K pack 8 six-bit scales and 8 six-bit mins into 12 bytes: bytes 0-3 hold scales 0-3
// (low 6 bits) and the top 2 bits of scales 4-7; bytes 4-7 the same for the mins; bytes 8-11
// the low 4 bits of scale (low nibble) and min (high nibble) 4-7.
void unpack_k4_scales(const uint8_t* packed, uint8_t scales[8], uint8_t mins[8]);
void pack_k4_scales(const uint8_t scales[8], const uint8_t mins[8], uint8_t* packed);

// Q3_K packs 16 six-bit scales (stored +32) into 12 bytes: low nibbles in bytes 0-7 (scales
// 0-7 low, 8-15 high nibble), top 2 bits in bytes 8-11 (scale j at byte 8 + j%4, bits 2*(j/4)).
// Returns the signed scales (-32..31).
void unpack_q3_scales(const uint8_t* packed, int8_t scales[16]);

// The per-lane integer accumulation of GGML's generic K-quant dots: lane l (0..7) sums
// scale[i / group] * q8[i] * a[i] over the 256 elements with i % 8 == l.
void lane_dot_256(const int8_t* q8, const int8_t* a, const int* scales, int group, int32_t lanes[8]);

}  // namespace edgeinfer::quant_detail
