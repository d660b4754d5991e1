#include "engine/step_cost.h"

#include <algorithm>
#include <cmath>

namespace edgeinfer {

namespace {
constexpr double kAlpha = 0.2;  // weight of the newest step in the averages
constexpr double kDecay = 0.8;  // per verification, for a sequence's draft record
constexpr double kFade = 0.97;  // per step without verification

double ema(double old, double sample) { return old == 0 ? sample : (1 - kAlpha) * old + kAlpha * sample; }
}  // namespace

StepCostModel::StepCostModel(int32_t max_decode) : base_(static_cast<size_t>(std::max(1, max_decode)) + 1, 0.0) {}

void StepCostModel::Line::add(double xi, double yi) {
  constexpr double kForget = 0.95;
  w = kForget * w + 1;
  x = kForget * x + xi;
  y = kForget * y + yi;
  xx = kForget * xx + xi * xi;
  xy = kForget * xy + xi * yi;
}

double StepCostModel::Line::row() const {
  if (w <= 0) return 0;
  const double mx = x / w, my = y / w;
  const double var = xx / w - mx * mx;
  // Without spread in the row counts the line is not determined: all of it per row.
  if (var < 0.25) return mx > 0 ? std::max(0.0, my / mx) : 0;
  const double slope = (xy / w - mx * my) / var;
  // A negative intercept would mean rows dearer than the slope says: keep the line through 0.
  if (my - slope * mx < 0) return mx > 0 ? std::max(0.0, my / mx) : 0;
  return std::max(0.0, slope);
}

double StepCostModel::row_ms(int32_t n_decode) const {
  const Line& l = line(n_decode);
  return std::max(l.known() ? l.row() : 0.0, row_floor_);
}

double StepCostModel::fixed_ms(int32_t n_decode) const {
  const Line& l = line(n_decode);
  if (!l.known()) return 0;
  // What the line's mean point leaves beyond the rows at the rate in use.
  return std::max(0.0, l.y / l.w - row_ms(n_decode) * (l.x / l.w));
}

double StepCostModel::base_weights_ms(int32_t n_decode) const {
  if (n_decode <= 0) return 0;
  const size_t b = std::min(static_cast<size_t>(n_decode), base_.size() - 1);
  if (base_[b] > 0) return base_[b];
  // Not measured with this many: the nearest measured smaller batch plus a row per sequence.
  for (size_t s = b; s-- > 1;) {
    if (base_[s] > 0) return base_[s] + static_cast<double>(b - s) * row_ms(2);
  }
  return 0;
}

double StepCostModel::base_ms(int32_t n_decode) const {
  const double w = base_weights_ms(n_decode);
  return w > 0 ? w + attn_per_pos_ * static_cast<double>(decode_positions_) : 0;
}

void StepCostModel::observe(int32_t n_decode, int32_t n_extra, double ms, double attn_ms, int64_t attn_positions) {
  if (n_decode < 0 || ms <= 0) return;
  const double w = ms - std::clamp(attn_ms, 0.0, ms);  // the part that does not grow with context
  if (n_decode == 0) {
    // Prompt rows only: the floor of the row cost (their attention, tiled over many rows, is
    // not the decoding rate, so the rate is left to steps that decode).
    if (n_extra >= kFloorRows) row_floor_ = ema(row_floor_, w / static_cast<double>(n_extra));
    return;
  }
  if (attn_positions > 0 && attn_ms > 0) attn_per_pos_ = ema(attn_per_pos_, attn_ms / static_cast<double>(attn_positions));
  if (n_extra <= 0) {
    double& b = base_[std::min(static_cast<size_t>(n_decode), base_.size() - 1)];
    b = ema(b, w);
    return;
  }
  const double base = base_weights_ms(n_decode);
  if (base <= 0) return;
  lines_[n_decode <= 1 ? 0 : 1].add(n_extra, w - base);
}

double StepCostModel::extra_ms(int32_t n_decode, int32_t k) const {
  if (k <= 0 || !rows_known(n_decode)) return 0;
  return fixed_ms(n_decode) + (row_ms(n_decode) + attn_per_pos_ * mean_decode_pos(n_decode)) * k;
}

int32_t StepCostModel::rows_for(int32_t n_decode, double room, double first_pos, double pos_step) const {
  const double row = row_ms(n_decode);
  if (!rows_known(n_decode) || row <= 0) return -1;
  room -= fixed_ms(n_decode);
  // cost(k) = k * (row + a * first_pos) + a * pos_step * k (k - 1) / 2, increasing in k.
  const double a = attn_per_pos_, lin = row + a * first_pos, quad = a * pos_step / 2;
  auto cost = [&](double k) { return k * lin + quad * k * (k - 1); };
  if (cost(1) > room) return 0;
  double lo = 1, hi = 2;
  while (hi < 1e9 && cost(hi) <= room) hi *= 2;
  if (hi >= 1e9) return 1000000000;
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    (cost(mid) <= room ? lo : hi) = mid;
  }
  return static_cast<int32_t>(lo);
}

int32_t StepCostModel::rows_within(int32_t n_decode, double slack) const {
  const double base = base_ms(n_decode);
  if (base <= 0) return -1;
  return rows_for(n_decode, slack * base, mean_decode_pos(n_decode), 0);
}

int32_t StepCostModel::prefill_cap(int32_t n_decode, double slack, int64_t prompt_pos) const {
  const double base = base_ms(n_decode);
  const int32_t k = base <= 0 ? -1 : rows_for(n_decode, slack * base, static_cast<double>(prompt_pos) + 1, 1);
  return k < 0 ? 0 : std::max(1, k);
}

int32_t StepCostModel::drafts_worth(int32_t n_draft, double p, int32_t n_decode) const {
  const double base = base_ms(n_decode);
  if (n_draft <= 0) return 0;
  if (base <= 0 || !rows_known(n_decode)) return n_draft;
  const double row_cost = static_cast<double>(n_decode) * row_ms(n_decode);  // every stream waits for each row
  double best = 0, net = -static_cast<double>(n_decode) * fixed_ms(n_decode), pj = 1;
  int32_t best_d = 0;
  for (int32_t d = 1; d <= n_draft; ++d) {
    pj *= p;
    net += pj * base - row_cost;
    if (net > best) {
      best = net;
      best_d = d;
    }
    if (pj * base < row_cost) break;  // no later d gains more
  }
  return best_d;
}

void DraftRecord::update(int32_t n_draft, int32_t n_accepted) {
  if (n_draft <= 0) return;
  accepted = kDecay * accepted + n_accepted;
  tested = kDecay * tested + n_accepted + (n_accepted < n_draft ? 1 : 0);
}

void DraftRecord::fade() {
  accepted *= kFade;
  tested *= kFade;
}

}  // namespace edgeinfer
