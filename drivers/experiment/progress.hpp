// The progress bar of `pegasos run` (stderr).
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>

#include "drivers/experiment/common.hpp"

namespace pegasos::experiment_detail {

// "[=====>    ] 12/40 runs  3.2s elapsed  ~7.5s left" on stderr: redrawn in
// place on a terminal, a line every few seconds (and the last one) otherwise.
// run_done() may be called from any thread.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, bool quiet);
  void run_done();
  void finish();

 private:
  std::size_t total_;
  bool quiet_, tty_;
  Clock::time_point start_;
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
  double last_ = -1e9;
  bool printed_ = false;
};

}  // namespace pegasos::experiment_detail
