#include "cli/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace edgeinfer::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), tty_(::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(uint64_t done, uint64_t total, std::string_view what) {
  if (finished_) return;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100) && done < total) return;
    last_draw_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(frac * kWidth + 0.5);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), '.');
    char line[512];
    std::snprintf(line, sizeof line, "\r%s [%s] %3d%% %6.1fs %.*s", label_.c_str(), bar.c_str(),
                  static_cast<int>(frac * 100), elapsed, static_cast<int>(std::min<size_t>(what.size(), 60)), what.data());
    std::string s(line);
    const size_t width = s.size();
    if (width < last_width_) s.append(last_width_ - width, ' ');
    last_width_ = width;
    std::fputs(s.c_str(), stderr);
    std::fflush(stderr);
  } else {
    const int decile = static_cast<int>(frac * 10);
    if (decile <= last_decile_) return;
    last_decile_ = decile;
    std::fprintf(stderr, "%s: %3d%% (%.1fs) %.*s\n", label_.c_str(), decile * 10, elapsed, static_cast<int>(what.size()),
                 what.data());
  }
}

void ProgressBar::finish() {
  if (finished_) return;
  if (tty_) {
    last_draw_ = {};
    update(1, 1, "done");
    std::fputc('\n', stderr);
  } else if (last_decile_ < 10) {
    update(1, 1, "done");
  }
  finished_ = true;
}

}  // namespace edgeinfer::cli
