// The dual state shared by kernel SDCA's two ways of stepping (random
// single-coordinate passes in kernel_sdca.hpp, greedy pairs in
// kernel_pairs.hpp): α, labels, g = the decision values of the training rows,
// K'_ii; the duality gap from g; g recomputed exactly; a run's outcome.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstddef>
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
//
// With an unregularized intercept (`bias: unregularized`, LIBSVM's form) each
// output's α also satisfies Σ_i α_ic y_ic = 0 (only the pair steps of
// kernel_pairs.hpp keep it), g excludes the intercept, and b_c is the
// intercept that minimises output c's hinge loss given g (best_intercept).
struct DualState {
  std::size_t n = 0, K = 1;
  double lambda_n = 1.0;
  bool equality = false;  // the unregularized intercept
  std::vector<double> alpha, g, y, diag;
  std::vector<double> b;  // per output; all 0 without the unregularized intercept
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

// The intercept b minimising Σ_i max(0, 1 − y_i (g_i + b)) over the n rows
// (y_i = ±1, g_i = y_of(i), g_of(i)). Each row's hinge has its kink at
// t_i = y_i − g_i, and the slope of the sum in b rises by one at every kink:
// it is −(number of positives) below all of them, so the sum is smallest
// between the P-th and (P+1)-th smallest kink (P positives). The midpoint of
// that interval, found by selection in O(n); `t` is scratch. With no
// positive (or no negative) row the loss is smallest at any b below (above)
// every kink: b is put one unit beyond them, where every loss is 0.
template <class Y, class G>
double best_intercept(std::size_t n, const Y& y_of, const G& g_of, std::vector<double>& t) {
  t.resize(n);
  std::size_t positives = 0;
  for (std::size_t i = 0; i < n; ++i) {
    t[i] = y_of(i) - g_of(i);
    positives += y_of(i) > 0 ? 1 : 0;
  }
  if (n == 0) return 0.0;
  if (positives == 0) return *std::min_element(t.begin(), t.end()) - 1.0;
  if (positives == n) return *std::max_element(t.begin(), t.end()) + 1.0;
  const auto at = t.begin() + static_cast<std::ptrdiff_t>(positives);
  std::nth_element(t.begin(), at, t.end());  // *at: the (P+1)-th smallest kink
  const double upper = *at;
  const double lower = *std::max_element(t.begin(), at);  // the P-th
  return 0.5 * (lower + upper);
}

// Each output's best intercept (st.equality only), g exact.
inline void set_intercepts(DualState& st) {
  st.b.assign(st.K, 0.0);
  if (!st.equality) return;
  std::vector<double> t;
  for (std::size_t c = 0; c < st.K; ++c) {
    st.b[c] = best_intercept(st.n, [&](std::size_t i) { return st.y[i * st.K + c]; },
                             [&](std::size_t i) { return st.g_at(i, c); }, t);
  }
}

// P and D summed over the outputs, from g and b (in row order).
inline Gap gap_of(const DualState& st) {
  double loss = 0.0, sum_alpha = 0.0, ayg = 0.0;
  for (std::size_t at = 0; at < st.n * st.K; ++at) {
    const double g = st.g_at(at / st.K, at % st.K);
    const double b = st.b.empty() ? 0.0 : st.b[at % st.K];
    loss += std::max(0.0, 1.0 - st.y[at] * (g + b));
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
