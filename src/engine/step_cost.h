#pragma once
// What an engine step costs, learnt from the steps themselves, and the two decisions that rest
// on it: how many prompt tokens may ride along with decoding sequences (the prefill cap), and
// how many draft tokens of a sequence are worth verifying.
//
// Model: a step that decodes B sequences costs base(B) (one weight pass) plus attention, and k
// further rows in it (prompt tokens, draft tokens) add fixed + k * row plus their attention: the
// fixed part is what the first extra row costs beyond its share (a kernel for many rows instead
// of one: with B = 1 the GEMV gives way to the tile). Attention is charged per attended position
// (a token at position p attends p + 1), at the rate the steps measure (their attention time over
// their positions), so that contexts growing while a prompt is absorbed (every step then has
// extra rows) are not mistaken for dearer rows. base(B) is an exponential average of the time
// outside attention of steps with exactly B decoding rows and nothing else; fixed and row a
// weighted least-squares line through (k, that time - base(B)) of recent steps with extra rows,
// one line for B = 1 and one for B > 1. A row never costs less than a row of a large prompt
// step without decoding rows (the matmuls' best throughput, learnt from those steps): noise in
// base(B) can make the line's slope look free, and a free row would let a step take any
// number of drafts or prompt tokens; before the line is measured, that floor alone is the
// estimate, so the first batched steps are bounded too.
#include <cstdint>
#include <vector>

namespace edgeinfer {

class StepCostModel {
 public:
  // max_decode: the most sequences a step decodes (larger B share the last slot).
  explicit StepCostModel(int32_t max_decode);

  // A finished step: n_decode sequences decoding one token each, n_extra further rows
  // (prompt and draft tokens), ms its duration (forward pass and sampling), attn_ms of it in
  // attention over attn_positions attended positions (all its tokens).
  void observe(int32_t n_decode, int32_t n_extra, double ms, double attn_ms = 0, int64_t attn_positions = 0);

  // The positions the sequences decoding in the coming step attend, summed (their contexts):
  // the estimates below include their attention, and draft rows are taken to sit at their
  // mean position.
  void set_decode_positions(int64_t positions) { decode_positions_ = positions; }

  // Estimates; 0 while nothing was measured.
  double base_ms(int32_t n_decode) const;  // with the decoding sequences' attention
  // Added cost of k extra rows in a step decoding n_decode sequences, rows at the decoding
  // sequences' mean position (0 while not measured).
  double extra_ms(int32_t n_decode, int32_t k) const;
  // Per extra row outside attention: the line's slope, at least the floor.
  double row_ms(int32_t n_decode) const;
  // The floor: time outside attention per row of prompt steps without decoding rows (of at
  // least kFloorRows rows, where the one pass over the weights is a small share); 0 until seen.
  double row_floor_ms() const { return row_floor_; }
  static constexpr int32_t kFloorRows = 128;
  double attention_ms_per_position() const { return attn_per_pos_; }

  // Extra rows a step with n_decode decoding sequences may take so that it costs at most
  // `slack` (e.g. 0.2) times base(n_decode) more than a plain decode step: 0 when not even one
  // fits; -1 while there is no estimate (no limit). Rows at the decoding sequences' mean position.
  int32_t rows_within(int32_t n_decode, double slack) const;

  // Prompt tokens a step with n_decode decoding sequences may add, the first at position
  // prompt_pos: as rows_within, each row with its own attention, but at least 1 (prompts always
  // advance); 0 = no estimate yet (no cap).
  int32_t prefill_cap(int32_t n_decode, double slack, int64_t prompt_pos = 0) const;

  // Of n_draft draft tokens proposed for one of n_decode decoding sequences whose drafts are
  // accepted with probability p each (the j-th needs all before it), how many to verify: the d
  // that maximises the expected saving, sum_{j<=d} p^j steps of base(n_decode) for this
  // sequence, less what the rows cost every decoding sequence, n_decode * extra_ms(d); 0 when
  // no d gains. Without estimates every draft is kept (the first steps measure).
  int32_t drafts_worth(int32_t n_draft, double p, int32_t n_decode) const;

 private:
  // Exponentially weighted least squares of y on x.
  struct Line {
    double w = 0, x = 0, y = 0, xx = 0, xy = 0;
    void add(double xi, double yi);
    bool known() const { return w > 0; }
    double row() const;    // slope (>= 0)
  };
  const Line& line(int32_t n_decode) const { return n_decode <= 1 ? lines_[0] : lines_[1]; }
  // Whether extra rows have an estimate (their line or the floor), and its fixed part.
  bool rows_known(int32_t n_decode) const { return line(n_decode).known() || row_floor_ > 0; }
  double fixed_ms(int32_t n_decode) const;
  double base_weights_ms(int32_t n_decode) const;  // base(B) without attention
  // Where draft rows are taken to sit: the decoding sequences' mean position.
  double mean_decode_pos(int32_t n_decode) const {
    return n_decode > 0 ? static_cast<double>(decode_positions_) / n_decode : 0;
  }
  // Most k (up to 1e9) with extra-row cost fixed + sum over j < k of (row + attention at
  // position first_pos + j * pos_step) within room; -1 while not measured.
  int32_t rows_for(int32_t n_decode, double room, double first_pos, double pos_step) const;
  std::vector<double> base_;  // [B], outside attention
  Line lines_[2];             // B = 1, B > 1
  double attn_per_pos_ = 0;   // ms per attended position
  double row_floor_ = 0;      // ms per row of large prompt-only steps, outside attention
  int64_t decode_positions_ = 0;
};

// A sequence's record of its drafts: decayed counts of draft tokens accepted and tested (a
// verification tests the accepted ones and the first rejected one).
struct DraftRecord {
  double accepted = 0;
  double tested = 0;
  void update(int32_t n_draft, int32_t n_accepted);
  // A step that verified none of its drafts: the record fades towards the prior, so a sequence
  // whose drafts once failed is tried again later.
  void fade();
  // Probability that the next draft token is accepted: the record with an optimistic prior
  // (0.9, worth two tests), so that new sequences and faded records get their drafts tried.
  static constexpr double kPrior = 0.9, kPriorWeight = 2.0;
  double p() const { return (accepted + kPrior * kPriorWeight) / (tested + kPriorWeight); }
};

}  // namespace edgeinfer
