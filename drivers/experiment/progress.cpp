#include "drivers/experiment/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace pegasos::experiment_detail {

ProgressBar::ProgressBar(std::size_t total, bool quiet)
    : total_(total), quiet_(quiet), tty_(::isatty(2) != 0), start_(Clock::now()) {}

void ProgressBar::run_done() {
  const std::size_t done = ++done_;
  if (quiet_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const double elapsed = seconds_since(start_);
  // Non-terminals (logs) get a line every few seconds and the last one.
  if (!tty_ && done != total_ && elapsed - last_ < 5.0) return;
  last_ = elapsed;
  constexpr int kWidth = 30;
  const int filled = total_ == 0 ? kWidth : static_cast<int>(kWidth * done / total_);
  std::string bar(static_cast<std::size_t>(filled), '=');
  if (filled < kWidth) bar += '>' + std::string(static_cast<std::size_t>(kWidth - filled - 1), ' ');
  char eta[64] = "";
  if (done < total_ && done > 0) {
    std::snprintf(eta, sizeof eta, "  ~%.1fs left",
                  elapsed / static_cast<double>(done) * static_cast<double>(total_ - done));
  }
  std::fprintf(stderr, "%s[%s] %zu/%zu runs  %.1fs elapsed%s%s", tty_ ? "\r" : "", bar.c_str(), done, total_, elapsed,
               eta, tty_ ? "        " : "\n");
  printed_ = true;
}

void ProgressBar::finish() {
  if (!quiet_ && printed_ && tty_) std::fputc('\n', stderr);
}

}  // namespace pegasos::experiment_detail
