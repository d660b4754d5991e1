#include "kernels/ops.h"

#include <cmath>

namespace edgeinfer {

void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps) {
  // Eight partial sums, added pairwise at the end: one running sum is a chain of dependent
  // double additions (about 4 cycles per element, 3 us for a 2048-wide row, twice per layer in
  // decode); independent lanes vectorize. The squares are rounded to f32 and summed in double as
  // the reference engine does; only the order of the double additions differs.
  constexpr int kParts = 8;
  double part[kParts] = {};
  int64_t e = 0;
  for (; e + kParts <= n; e += kParts) {
    for (int j = 0; j < kParts; ++j) part[j] += static_cast<double>(x[e + j] * x[e + j]);
  }
  for (; e < n; ++e) part[e % kParts] += static_cast<double>(x[e] * x[e]);
  const double sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  if (w) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * w[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale;
  }
}

void rope_angles(int64_t pos, const RopeParams& p, float* cs) {
  // The angle advances by repeated f32 multiplication, as the reference engine computes it,
  // so that long positions round the same way.
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
  const int64_t half = p.n_rot / 2;
  float theta = static_cast<float>(pos);
  for (int64_t i = 0; i < half; ++i) {
    const float factor = p.factors ? p.factors[i] : 1.0f;
    const float angle = p.freq_scale * (theta / factor);
    cs[2 * i] = std::cos(angle);
    cs[2 * i + 1] = std::sin(angle);
    theta *= theta_scale;
  }
}

void rope_rotate(float* x, int64_t n_heads, const float* cs, const RopeParams& p) {
  const int64_t half = p.n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* head = x + h * p.head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float c = cs[2 * i], s = cs[2 * i + 1];
      const int64_t a = p.neox ? i : 2 * i;
      const int64_t b = p.neox ? i + half : 2 * i + 1;
      const float x0 = head[a], x1 = head[b];
      head[a] = x0 * c - x1 * s;
      head[b] = x0 * s + x1 * c;
    }
  }
}

float softmax_step(float* x, int64_t n, float scale, float* max, float* sum) {
  const float old = *max;
  float m = old;
  for (int64_t i = 0; i < n; ++i) {
    x[i] *= scale;
    m = x[i] > m ? x[i] : m;
  }
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float e = std::exp(x[i] - m);
    x[i] = e;
    s += static_cast<double>(e);
  }
  const float c = old == -INFINITY ? 0.0f : m == old ? 1.0f : std::exp(old - m);
  *sum = static_cast<float>(static_cast<double>(*sum) * c + s);
  *max = m;
  return c;
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = (g / (1.0f + std::exp(-g))) * up[i];
  }
}

void add_inplace(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

}  // namespace edgeinfer
