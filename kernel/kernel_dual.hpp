// The dual state shared by kernel SDCA's two ways of stepping (random
// single-coordinate passes in kernel_sdca.hpp, greedy pairs in
// kernel_pairs.hpp): α, labels, g = the decision values of the training rows,
// K'_ii; the duality gap from g; g recomputed exactly; a run's outcome.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "core/training.hpp"
#include "kernel/kernel_rows.hpp"

namespace pegasos {
namespace kernel_sdca_detail {

// The dual state: α and labels y (n × K, row-major), g (K × n, output-major:
// a change of one output's α updates one contiguous run of n values, which
// vectorises and reads n·8 bytes of g instead of the whole n·K·8), K'_ii.
struct DualState {
  std::size_t n = 0, K = 1;
  double lambda_n = 1.0;
  std::vector<double> alpha, g, y, diag;
  double& g_at(std::size_t i, std::size_t c) { return g[c * n + i]; }
  double g_at(std::size_t i, std::size_t c) const { return g[c * n + i]; }
};

// g_·c += coef_c · row for every output c with coef_c ≠ 0 (only on the rows
// j with skip[j] == 0 when `skip` is given).
inline void add_row(DualState& st, const double* row, const double* coef, const std::vector<char>* skip = nullptr) {
  const std::size_t n = st.n, K = st.K;
  auto run = [&](std::size_t begin, std::size_t end) {
    for (std::size_t c = 0; c < K; ++c) {
      if (coef[c] == 0.0) continue;
      const double a = coef[c];
      double* gc = &st.g[c * n];
      if (skip == nullptr) {
        for (std::size_t j = begin; j < end; ++j) gc[j] += a * row[j];
      } else {
        for (std::size_t j = begin; j < end; ++j) {
          if (!(*skip)[j]) gc[j] += a * row[j];
        }
      }
    }
  };
  if (n > 4 * kRowBlock) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kRowBlock),
                      [&](const tbb::blocked_range<std::size_t>& r) { run(r.begin(), r.end()); });
  } else {
    run(0, n);
  }
}

struct Gap {
  double primal = 0.0, dual = 0.0, regularizer = 0.0;
  double relative() const {
    return (primal - dual) / std::max(std::abs(primal), std::numeric_limits<double>::min());
  }
};

// P and D summed over the outputs, from g (in row order).
inline Gap gap_of(const DualState& st) {
  double loss = 0.0, sum_alpha = 0.0, ayg = 0.0;
  for (std::size_t at = 0; at < st.n * st.K; ++at) {
    const double g = st.g_at(at / st.K, at % st.K);
    loss += std::max(0.0, 1.0 - st.y[at] * g);
    sum_alpha += st.alpha[at];
    ayg += st.alpha[at] * st.y[at] * g;
  }
  const double n = static_cast<double>(st.n);
  Gap out;
  out.regularizer = ayg / (2.0 * n);  // λ/2 ‖w‖² = λ/2 · 1/(λn) Σ α y g
  out.primal = out.regularizer + loss / n;
  out.dual = sum_alpha / n - out.regularizer;
  return out;
}

// g recomputed from the support vectors' kernel rows (no running-sum drift).
inline void recompute_g(DualState& st, RowCache& cache) {
  std::fill(st.g.begin(), st.g.end(), 0.0);
  std::vector<double> coef(st.K);
  for (std::size_t i = 0; i < st.n; ++i) {
    bool any = false;
    for (std::size_t c = 0; c < st.K; ++c) {
      coef[c] = st.alpha[i * st.K + c] * st.y[i * st.K + c] / st.lambda_n;
      any = any || coef[c] != 0.0;
    }
    if (any && st.diag[i] > 0.0) add_row(st, cache.row(i), coef.data());
  }
}

// A run's outcome (the random passes of kernel_sdca.hpp: exactly the budget
// of passes, no early stop; the pair steps of kernel_pairs.hpp: passes =
// visits / n rounded up).
struct Passes {
  std::uint64_t passes = 0;  // full passes
  std::uint64_t visits = 0;  // coordinate visits (two a pair step)
  StopReason stopped = StopReason::kMaxEpochs;
  Gap gap;  // from an exactly recomputed g
};

}  // namespace kernel_sdca_detail
}  // namespace pegasos
