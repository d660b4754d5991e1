#pragma once
// Element-wise and row operations of the forward pass, computed in f32 with the reference
// engine's arithmetic (sums of squares and softmax denominators in double; RMSNorm adds its
// squares in eight partial sums, so only the order of those double additions differs).
#include <cstdint>

namespace edgeinfer {

// y = x / sqrt(mean(x^2) + eps) * w   (w may be nullptr: no scaling). y may alias x.
void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps);

// Rotary embedding in two steps, so that the angles of a position are computed once for all
// layers and heads. rope_angles: theta_i = pos * freq_scale * base^(-2i/n_rot) / factors[i] for
// i < n_rot/2, written as cs[2i] = cos(theta_i), cs[2i+1] = sin(theta_i) (n_rot floats).
// rope_rotate: in place over one token's heads, x is [n_heads][head_dim]; the first n_rot
// dimensions of each head rotate, neox: pairs (i, i + n_rot/2); otherwise adjacent pairs
// (2i, 2i+1). factors may be nullptr.
struct RopeParams {
  int64_t head_dim;
  int64_t n_rot;
  float freq_base;
  float freq_scale;
  const float* factors;  // [n_rot/2] or nullptr
  bool neox;
};
void rope_angles(int64_t pos, const RopeParams& p, float* cs);
void rope_rotate(float* x, int64_t n_heads, const float* cs, const RopeParams& p);

// One block of an online softmax (the reference of Kernels::softmax_step): x[i] *= scale, the
// running maximum *max (-infinity before the first block) raised to the block's, x[i] =
// e^(x[i] - max), *sum = *sum * c + the block's sum (accumulated in double); returns c =
// e^(old max - new max), the factor that rescales what was summed before (0 for the first block,
// exactly 1 when the maximum did not move).
float softmax_step(float* x, int64_t n, float scale, float* max, float* sum);

// out[i] = silu(gate[i]) * up[i], silu(a) = a / (1 + e^-a).
void silu_mul(const float* gate, const float* up, float* out, int64_t n);

// y[i] += x[i]
void add_inplace(float* y, const float* x, int64_t n);

}  // namespace edgeinfer
