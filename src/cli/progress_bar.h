#pragma once
// Progress for long CLI jobs (quantize, synth) on stderr: a redrawn bar when stderr is a
// terminal, otherwise one plain line per 10% so logs stay readable.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace edgeinfer::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  // done/total in any unit; `what` describes the current item (e.g. a tensor name and type).
  void update(uint64_t done, uint64_t total, std::string_view what);
  // Draws 100% (if not yet) and ends the line.
  void finish();

 private:
  std::string label_;
  bool tty_ = false;
  bool finished_ = false;
  int last_decile_ = -1;
  size_t last_width_ = 0;
  std::chrono::steady_clock::time_point last_draw_{};
  std::chrono::steady_clock::time_point start_;
};

}  // namespace edgeinfer::cli
