// The per-example pieces of the Crammer–Singer dual step (core/sdca_multiclass.hpp):
// each example's active classes, the prefetch and the scores of its active
// classes, and the exact solution of its sub-problem.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include "core/dataset.hpp"

namespace pegasos {

// The active classes of each example for the multiclass dual solver: a
// permutation of 0..K−1 per example whose first count(i) entries are active.
class MulticlassActiveSets {
 public:
  MulticlassActiveSets(std::size_t n, std::size_t K) : K_(K), classes_(n * K), count_(n, static_cast<std::uint32_t>(K)) {
    for (std::size_t i = 0; i < n; ++i) std::iota(classes(i), classes(i) + K, 0u);
  }
  std::uint32_t* classes(std::size_t i) { return &classes_[i * K_]; }
  std::size_t count(std::size_t i) const { return count_[i]; }
  void set_count(std::size_t i, std::size_t k) {
    shrunk_ += count_[i] - k;
    count_[i] = static_cast<std::uint32_t>(k);
  }
  bool all_active() const { return shrunk_ == 0; }
  void activate_all() {
    std::fill(count_.begin(), count_.end(), static_cast<std::uint32_t>(K_));
    shrunk_ = 0;
  }

 private:
  std::size_t K_;
  std::vector<std::uint32_t> classes_;
  std::vector<std::uint32_t> count_;
  std::size_t shrunk_ = 0;  // Σ_i (K − count(i))
};

// Ask the cache for the weights an example's visit reads: for each of its
// features the active classes' entries of that feature's row of W (K
// doubles), or the whole row when many classes are active.
[[gnu::always_inline]] inline void prefetch_class_weights(const double* W, std::size_t K, const RowView& x,
                                                         const std::uint32_t* cls, std::size_t k) {
  constexpr std::size_t kLine = 64 / sizeof(double);
  for (std::uint32_t j = 0; j < x.nnz; ++j) {
    const double* row = W + std::size_t{x.indices[j]} * K;
    if (k * 2 > K / kLine + 1) {
      for (std::size_t m = 0; m < K; m += kLine) __builtin_prefetch(row + m);
      __builtin_prefetch(row + K - 1);
    } else {
      for (std::size_t p = 0; p < k; ++p) __builtin_prefetch(row + cls[p]);
    }
  }
}

// Scores of an example's active classes cls[0..k) (k ≥ 1) into scores[c]:
// four classes at a time, each summed in a register in feature order (the
// same sums as a loop over all classes).
inline void active_class_scores(const double* W, std::size_t K, const double* bias_row, double B, const RowView& x,
                                const std::uint32_t* cls, std::size_t k, double* scores) {
  for (std::size_t p = 0; p < k; p += 4) {
    // The last group repeats its last class to fill four lanes.
    const std::size_t c0 = cls[p], c1 = cls[std::min(p + 1, k - 1)], c2 = cls[std::min(p + 2, k - 1)],
                      c3 = cls[std::min(p + 3, k - 1)];
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    if (bias_row != nullptr) {
      s0 = bias_row[c0] * B;
      s1 = bias_row[c1] * B;
      s2 = bias_row[c2] * B;
      s3 = bias_row[c3] * B;
    }
    for (std::uint32_t j = 0; j < x.nnz; ++j) {
      const double xj = x.values[j];
      const double* row = W + std::size_t{x.indices[j]} * K;
      s0 += xj * row[c0];
      s1 += xj * row[c1];
      s2 += xj * row[c2];
      s3 += xj * row[c3];
    }
    scores[c0] = s0;
    scores[c1] = s1;
    scores[c2] = s2;
    scores[c3] = s3;
  }
}

// One example's Crammer-Singer sub-problem over its active classes cls[0..k):
// with A = ‖x‖², G_m the gradient and caps C^y = cap, C^m = 0 (m ≠ y), the new
// α minimises Σ_m (A/2 α_m² + B_m α_m), B_m = G_m − A α_m, subject to α_m ≤ C^m
// and Σ_m α_m = 0 (inactive classes stay at 0): α_m = min(C^m, (β − B_m)/A),
// with β from the r largest D_m = B_m + A·C^m, β = (Σ_{top r} D − A·cap)/r, r the
// largest count with β < D_r. Writes fresh[m] for the active classes, the
// classes whose α changed to moved[], and returns their number.
inline std::size_t solve_cs_subproblem(const std::uint32_t* cls, std::size_t k, std::size_t y, double A, double cap,
                                       const double* grad, const double* alpha, double* b_coef, double* d_sorted,
                                       double* fresh, std::uint32_t* moved) {
  for (std::size_t p = 0; p < k; ++p) {
    const std::size_t m = cls[p];
    b_coef[m] = grad[m] - A * alpha[m];
    d_sorted[p] = b_coef[m] + (m == y ? A * cap : 0.0);
  }
  std::sort(d_sorted, d_sorted + k, std::greater<double>());
  double beta = d_sorted[0] - A * cap;
  std::size_t r = 1;
  for (; r < k && beta < static_cast<double>(r) * d_sorted[r]; ++r) beta += d_sorted[r];
  beta /= static_cast<double>(r);
  std::size_t moves = 0;
  for (std::size_t p = 0; p < k; ++p) {
    const std::size_t m = cls[p];
    fresh[m] = std::min(m == y ? cap : 0.0, (beta - b_coef[m]) / A);
    if (fresh[m] != alpha[m]) moved[moves++] = static_cast<std::uint32_t>(m);
  }
  return moves;
}

}  // namespace pegasos
