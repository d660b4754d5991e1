#include "quant/k_quants_common.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/rounding.h"

namespace edgeinfer::quant_detail {

namespace {

constexpr float kGroupEps = 1e-15f;  // below this the group is treated as all zeros

inline int clamp_int(int v, int lo, int hi) { return std::max(lo, std::min(hi, v)); }

}  // namespace

float fit_affine_levels(int n, int nmax, const float* x, const float* w, uint8_t* L, float* neg_min,
                        uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_abs) {
  float lo = x[0], hi = x[0];
  float sum_w = w[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {
    std::memset(L, 0, static_cast<size_t>(n));
    *neg_min = -lo;
    return 0.0f;
  }
  const float fmax = static_cast<float>(nmax);
  auto error_of = [&](const uint8_t* levels, float scale, float offset) {
    float err = 0;
    for (int i = 0; i < n; ++i) {
      float diff = scale * levels[i] + offset - x[i];
      diff = use_abs ? std::fabs(diff) : diff * diff;
      err += w[i] * diff;
    }
    return err;
  };

  float iscale = fmax / (hi - lo);
  float scale = 1 / iscale;
  for (int i = 0; i < n; ++i) L[i] = static_cast<uint8_t>(clamp_int(nearest_int(iscale * (x[i] - lo)), 0, nmax));
  float best = error_of(L, scale, lo);
  if (nstep < 1) {
    *neg_min = -lo;
    return scale;
  }
  for (int step = 0; step <= nstep; ++step) {
    // Note: lo moves with the best fit, so later grids span the updated range.
    iscale = (rmin + rdelta * static_cast<float>(step) + fmax) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = clamp_int(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sum_l += w[i] * fl;
      sum_l2 += w[i] * fl * fl;
      sum_xl += w[i] * fl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0) {
      float s = (sum_w * sum_xl - sum_x * sum_l) / det;
      float m = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (m > 0) {  // the offset must not be positive: refit the scale alone
        m = 0;
        s = sum_xl / sum_l2;
      }
      const float err = error_of(Laux, s, m);
      if (err < best) {
        std::memcpy(L, Laux, static_cast<size_t>(n));
        best = err;
        scale = s;
        lo = m;
      }
    }
  }
  *neg_min = -lo;
  return scale;
}

namespace {

// Signed element of largest magnitude (first on ties) and that magnitude.
void signed_extreme(int n, const float* x, float& vmax, float& amax) {
  vmax = 0;
  amax = 0;
  for (int i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    if (a > amax) {
      amax = a;
      vmax = x[i];
    }
  }
}

}  // namespace

float fit_symmetric_levels(int n, int nmax, const float* x, int8_t* L) {
  float vmax, amax;
  signed_extreme(n, x, vmax, amax);
  if (amax < kGroupEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.0f;
  }
  const float fmax = static_cast<float>(nmax);
  // Weighted sums sum(w x l), sum(w l^2) with w = x^2 for the grid with inverse scale iscale.
  auto sums_for = [&](float iscale, float& sumlx, float& suml2) {
    sumlx = 0;
    suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const float l = static_cast<float>(clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1));
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
  };
  auto set_levels = [&](float iscale) {
    for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(nmax + clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1));
  };

  float iscale = -fmax / vmax;
  float sumlx, suml2;
  set_levels(iscale);
  sums_for(iscale, sumlx, suml2);
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int k = -9; k <= 9; ++k) {
    if (k == 0) continue;
    iscale = -(fmax + 0.1f * static_cast<float>(k)) / vmax;
    sums_for(iscale, sumlx, suml2);
    // Maximizing sumlx^2 / suml2 minimizes the weighted squared error of the best scale.
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      set_levels(iscale);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float fit_symmetric_levels_iterative(int n, int nmax, const float* x, int8_t* L) {
  float vmax, amax;
  signed_extreme(n, x, vmax, amax);
  if (amax < kGroupEps) {
    std::memset(L, 0, static_cast<size_t>(n));
    return 0.0f;
  }
  const float iscale = -static_cast<float>(nmax) / vmax;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = clamp_int(nearest_int(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * static_cast<float>(l);
    suml2 += w * static_cast<float>(l) * static_cast<float>(l);
  }
  for (int pass = 0; pass < 5; ++pass) {
    int changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float li = static_cast<float>(L[i]);
      // Sums without element i; the best level for it given the others' fit.
      float slx = sumlx - w * x[i] * li;
      if (slx > 0) {
        float sl2 = suml2 - w * li * li;
        const int nl = clamp_int(nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
        if (nl != L[i]) {
          const float fnl = static_cast<float>(nl);
          slx += w * x[i] * fnl;
          sl2 += w * fnl * fnl;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(nl);
            sumlx = slx;
            suml2 = sl2;
            ++changed;
          }
        }
      }
    }
    if (changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return sumlx / suml2;
}

void unpack_k4_scales(const uint8_t* packed, uint8_t scales[8], uint8_t mins[8]) {
  for (int j = 0; j < 4; ++j) {
    scales[j] = packed[j] & 63;
    mins[j] = packed[j + 4] & 63;
  }
  for (int j = 4; j < 8; ++j) {
    scales[j] = static_cast<uint8_t>((packed[j + 4] & 0x0f) | ((packed[j - 4] >> 6) << 4));
    mins[j] = static_cast<uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
  }
}

void pack_k4_scales(const uint8_t scales[8], const uint8_t mins[8], uint8_t* packed) {
  for (int j = 0; j < 4; ++j) {
    packed[j] = static_cast<uint8_t>(scales[j] | ((scales[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>(mins[j] | ((mins[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((scales[j + 4] & 0x0f) | ((mins[j + 4] & 0x0f) << 4));
  }
}

void unpack_q3_scales(const uint8_t* packed, int8_t scales[16]) {
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? (packed[j] & 0x0f) : (packed[j - 8] >> 4);
    const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
    scales[j] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

void lane_dot_256(const int8_t* q8, const int8_t* a, const int* scales, int group, int32_t lanes[8]) {
  for (int l = 0; l < 8; ++l) lanes[l] = 0;
  for (int i = 0; i < 256; ++i) lanes[i % 8] += scales[i / group] * (q8[i] * a[i]);
}

}  // namespace edgeinfer::quant_detail
