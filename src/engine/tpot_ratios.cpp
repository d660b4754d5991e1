#include "engine/tpot_ratios.h"

#include <algorithm>

namespace edgeinfer {

namespace {

// Median of the gaps (entries >= 0) of ref[lo, hi), the mean of the middle two for an even
// count; -1 when there are none. `near` is scratch.
double median_gap(std::span<const double> ref, size_t lo, size_t hi, std::vector<double>& near) {
  near.clear();
  for (size_t j = lo; j < hi; ++j) {
    if (ref[j] >= 0) near.push_back(ref[j]);
  }
  if (near.empty()) return -1;
  const size_t m = near.size() / 2;
  std::nth_element(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(m), near.end());
  const double upper = near[m];
  if (near.size() % 2 == 1) return upper;
  return (upper + *std::max_element(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(m))) / 2;
}

// during[i] over the median of ref[max(lo, i - radius), min(hi, i + radius + 1)) for i in [from, to).
void append_ratios(std::span<const double> during, std::span<const double> ref, size_t from, size_t to, size_t radius,
                   size_t lo, size_t hi, std::vector<double>& out) {
  std::vector<double> near;
  to = std::min(to, during.size());
  hi = std::min(hi, ref.size());
  for (size_t i = from; i < to; ++i) {
    if (during[i] < 0) continue;
    const size_t a = std::max(lo, i > radius ? i - radius : 0);
    const size_t b = std::min(hi, i + radius + 1);
    if (a >= b) continue;
    const double med = median_gap(ref, a, b, near);
    if (med > 0) out.push_back(during[i] / med);
  }
}

}  // namespace

void append_local_ratios(std::span<const double> during, size_t from, size_t to, size_t radius, std::vector<double>& out) {
  append_ratios(during, during, from, to, radius, from, to, out);
}

void append_paired_ratios(std::span<const double> during, std::span<const double> control, size_t from, size_t to,
                          size_t radius, std::vector<double>& out) {
  append_ratios(during, control, from, to, radius, 0, control.size(), out);
}

}  // namespace edgeinfer
