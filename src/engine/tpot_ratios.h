#pragma once
// Time per output token of decoding streams while other prompts are prefilled, as ratios that
// leave out what the streams cost themselves. A stream's gaps grow with its context (its
// attention reads every cached position), and while a long prompt is absorbed a token or so a
// step the streams' contexts can double; the machine's speed drifts too (memory bandwidth on a
// shared VM). A summary of the raw gaps (p99 over p50) charges both to the prefill. Two ratios
// separate them:
// - local: each gap over the median of the stream's own gaps around it in the same window. Slow
//   trends cancel; stalls (a step made long by a prompt chunk) stand out in the tail.
// - paired: each gap over the median of a control run's gaps at the same token indices (the
//   same streams, prompts and greedy tokens, decoded without the prefill, so at the same
//   contexts). Their median is the steady cost the prompt rows add to every step; the tail
//   also carries any drift between the two runs.
#include <cstddef>
#include <span>
#include <vector>

namespace edgeinfer {

// In both, gaps are indexed by the token's index in its answer; a negative entry marks a token
// without one (those of the first event). Tokens with no reference gap in reach, or a zero
// reference, are skipped.

// For every token index i in [from, to) with a gap, appends during[i] over the median of
// during's gaps at indices [i - radius, i + radius] within [from, to) (i itself included).
void append_local_ratios(std::span<const double> during, size_t from, size_t to, size_t radius, std::vector<double>& out);

// For every token index i in [from, to) with a gap, appends during[i] over the median of the
// control's gaps at indices [i - radius, i + radius] (those that exist).
void append_paired_ratios(std::span<const double> during, std::span<const double> control, size_t from, size_t to,
                          size_t radius, std::vector<double>& out);

}  // namespace edgeinfer
